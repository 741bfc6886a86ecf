//go:build linux

package procmem

import (
	"bytes"
	"os"
	"strconv"
)

// proc is one process of /proc: its parent and resident pages.
type proc struct {
	ppid int
	rss  int64
}

func treeRSS(pid int) (int64, bool) {
	if pid <= 0 {
		return 0, false
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	all := make(map[int]proc, len(ents))
	children := map[int][]int{}
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		p, ok := stat(n)
		if !ok {
			continue // ended meanwhile
		}
		all[n] = p
		children[p.ppid] = append(children[p.ppid], n)
	}
	if _, ok := all[pid]; !ok {
		return 0, false
	}
	page := int64(os.Getpagesize())
	var sum int64
	seen := map[int]bool{}
	stack := []int{pid}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[n] {
			continue
		}
		seen[n] = true
		sum += all[n].rss * page
		stack = append(stack, children[n]...)
	}
	return sum, true
}

// stat reads /proc/N/stat: after the command name (in parentheses, which
// may itself hold spaces and parentheses, so the last ")" ends it) come
// state, ppid, … and rss as the 24th field.
func stat(n int) (proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(n) + "/stat")
	if err != nil {
		return proc{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return proc{}, false
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state): ppid is field 4, rss field 24.
	if len(f) < 22 {
		return proc{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	rss, err2 := strconv.ParseInt(string(f[21]), 10, 64)
	if err1 != nil || err2 != nil {
		return proc{}, false
	}
	return proc{ppid: ppid, rss: rss}, true
}
