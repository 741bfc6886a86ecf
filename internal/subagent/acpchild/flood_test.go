package acpchild

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/outcome"
)

// floodRuns is how many times each flood scenario runs: losing bytes was
// a race, so one lucky run proves nothing.
const floodRuns = 20

// A child that streams thousands of chunks before end_turn completes with
// every byte, in order (issue 14 item 1: the SDK's fixed notification
// queue overflowed and closed the connection).
func TestFlood(t *testing.T) {
	for _, n := range []int{2000, 5000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			var want strings.Builder
			for i := 0; i < n; i++ {
				fmt.Fprintf(&want, "<%d>", i)
			}
			runs := floodRuns / 2 // each flood run is long; TestFloodCrash repeats 20
			if n > 2000 {
				runs = 3
			}
			for i := 0; i < runs; i++ {
				f := newFixture(t)
				res := f.run(f.agent("flood", "", map[string]string{"ACP_CHUNKS": strconv.Itoa(n)}))
				if res.StopReason != outcome.StopCompleted || res.Diagnostic != "" || text(res) != want.String() {
					t.Fatalf("run %d: got (%s, %d bytes, %q), want completed with %d bytes\nhost log:\n%s",
						i, res.StopReason, len(text(res)), res.Diagnostic, want.Len(), lastOf(f.hostLog()))
				}
			}
		})
	}
}

// A child that streams 1,000 one-byte chunks and exits 3 hands the parent
// every byte (issue 14 item 2: the prompt returned on the dead connection
// before the queued notifications were delivered).
func TestFloodCrash(t *testing.T) {
	const n = 1000
	var want strings.Builder
	for i := 0; i < n; i++ {
		want.WriteByte(byte('0' + i%10))
	}
	diag := "Subagent failure (provider: acp; stage: process; category: process-exit; stop reason: error; exit code: 3)"
	for _, tc := range []struct {
		name string
		env  map[string]string
		runs int
	}{
		{"exit", nil, floodRuns},
		// A grandchild holds stdout open: the stream never ends, so the
		// parent must tell when the dead leader's output is drained.
		{"grandchild holds stdout", map[string]string{"ACP_GC_STDIO": "inherit"}, floodRuns / 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i < tc.runs; i++ {
				f := newFixture(t)
				env := map[string]string{"ACP_CHUNKS": strconv.Itoa(n)}
				for k, v := range tc.env {
					env[k] = v
				}
				res := f.run(f.agent("flood_crash", "", env))
				if res.StopReason != outcome.StopError || res.Diagnostic != diag || text(res) != want.String() {
					t.Fatalf("run %d: got (%s, %d bytes, %q), want error with %d bytes and %q", i, res.StopReason, len(text(res)), res.Diagnostic, n, diag)
				}
				if live := f.leftBehind(); len(live) > 0 {
					t.Fatalf("run %d: processes alive after Dispose: %v", i, live)
				}
			}
		})
	}
}

func lastOf(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}
