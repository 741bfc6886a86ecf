//go:build linux

package gitsafe

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// tree60k makes a workspace of about 62,000 files: a node_modules of 300
// packages (4 folders of 40 files each), 120 source folders of 100 files,
// and repositories at depths 0, 2 and 4.
func tree60k(tb testing.TB) string {
	tb.Helper()
	ws := tb.TempDir()
	write := func(rel string) {
		p := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	for pkg := range 300 {
		for d := range 4 {
			for f := range 40 {
				write(fmt.Sprintf("node_modules/pkg%d/lib/d%d/f%d.js", pkg, d, f))
			}
		}
	}
	for d := range 120 {
		for f := range 100 {
			write(fmt.Sprintf("src/mod%d/f%d.go", d, f))
		}
	}
	write(".git/HEAD")
	write("vendor/lib/.git/HEAD")
	write("third_party/x/y/z/.git/HEAD")
	return ws
}

// cpuTime is this process's user and system time so far: the walk's cost
// without the wait for a busy machine's CPUs.
func cpuTime() time.Duration {
	var r syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// BenchmarkFind is the measurement behind DefaultLimits (cpu-ns/op).
func BenchmarkFind(b *testing.B) {
	ws := tree60k(b)
	for _, lim := range []Limits{DefaultLimits, {Depth: 3, Entries: 1 << 30}, {Depth: 100, Entries: 1 << 30}} {
		b.Run(fmt.Sprintf("depth%d-entries%d", lim.Depth, lim.Entries), func(b *testing.B) {
			c := cpuTime()
			for b.Loop() {
				if repos, _ := Find(ws, lim); len(repos) == 0 {
					b.Fatal("no repository found")
				}
			}
			b.ReportMetric(float64(cpuTime()-c)/float64(b.N), "cpu-ns/op")
		})
	}
}
