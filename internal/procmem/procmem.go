// Package procmem measures the resident memory of a process tree: what a
// kept child (an agent process idle between a parent's prompts) costs the
// machine, shown by the terminal's /jobs. A kept agent ran at 567 MB and
// nobody could see it.
package procmem

// TreeRSS is the resident set size, in bytes, of process pid and all its
// descendants (a sandboxed child is its supervisor, the container's init
// and the agent below it). ok is false where it cannot be known: pid gone,
// or a system without Linux's /proc.
func TreeRSS(pid int) (bytes int64, ok bool) { return treeRSS(pid) }
