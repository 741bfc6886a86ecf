package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/engine/wire"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/subagent"
)

// A helper of another build is refused at its first line, with one line
// naming both protocol versions; nothing is submitted.
func TestHelperVersionMismatch(t *testing.T) {
	for _, tt := range []struct{ name, hello, want string }{
		{"older version", `{"op":"hello","version":1}`, fmt.Sprintf("reins-temporal speaks protocol version 1, reins speaks version %d", 2)},
		{"no version (an older build)", `{"op":"started","id":1}`, "reins-temporal speaks no protocol version (an older build); reins speaks version 2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fakeHelper(t, fmt.Sprintf("echo '%s'; cat >/dev/null", tt.hello))
			var mu sync.Mutex
			var logs []string
			e, closeFn, err := Open(temporalCfg, "mock/echo", func(f string, a ...any) {
				mu.Lock()
				logs = append(logs, fmt.Sprintf(f, a...))
				mu.Unlock()
			})
			if err != nil {
				t.Fatal(err)
			}
			defer closeFn()
			_, err = e.Start(context.Background(), subagent.Request{RunID: "r1", Agent: &config.Agent{Name: "general"}, Depth: 1}, nil)
			var se *subagent.StartError
			if !errors.As(err, &se) || !strings.Contains(se.Err.Error(), tt.want) || !strings.Contains(se.Diagnostic, "engine-unavailable") {
				t.Fatalf("Start = %v (%v), want engine-unavailable naming %q", err, se, tt.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if n := strings.Count(strings.Join(logs, "\n"), tt.want); n != 1 {
				t.Errorf("%d log lines name both versions, want 1: %q", n, logs)
			}
		})
	}
}

// helperScript is a fake reins-temporal that says hello, accepts run 1,
// reports its progress (a complete message), then does what rest says;
// the lines reins sends it before are appended to seen.
func helperScript(t *testing.T, seen, rest string) {
	fakeHelper(t, fmt.Sprintf(`echo '{"op":"hello","version":2}'
read hello; echo "$hello" >> %[1]s
read start; echo "$start" >> %[1]s
echo '{"op":"started","id":1}'
echo '{"op":"progress","id":1,"output":[{"type":"text","text":"the earlier message"}],"session":"W-7"}'
%[2]s`, seen, rest))
}

// Every fallback on reins's side settles from the progress the helper
// forwarded: the earlier complete message, the fixed stage-remote
// diagnostic naming the cause, the note; never a wait past the grace.
// On the old engine each settled aborted or error with no output.
func TestHelperFallbacksReportTheEarlierMessage(t *testing.T) {
	note := "the child's full log is on its worker, under worker session W-7"
	for _, tt := range []struct {
		name    string
		rest    string // the helper after its progress
		timeout time.Duration
		cancel  bool
		stop    outcome.StopReason
		cat     outcome.Category
		term    bool // reins asked the helper to terminate the workflow
	}{
		// It reads until reins's cancel, then answers nothing.
		{"grace over after the parent's cancel", "while read l; do echo \"$l\" >> SEEN; done", 0, true, outcome.StopAborted, outcome.CategoryWorkerLost, true},
		{"grace over after the agent's timeout", "while read l; do echo \"$l\" >> SEEN; done", 200 * time.Millisecond, false, outcome.StopAborted, outcome.CategoryTimeout, true},
		// It dies (the process exits) while the child runs.
		{"helper dead", "read l; exit 3", 0, false, outcome.StopError, outcome.CategoryEngineUnavailable, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			seen := filepath.Join(t.TempDir(), "seen")
			helperScript(t, seen, strings.ReplaceAll(tt.rest, "SEEN", seen))
			cfg := temporalCfg
			cfg.CancelGrace = 300 * time.Millisecond
			e, closeFn, err := Open(cfg, "mock/echo", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer closeFn()
			run, err := e.Start(context.Background(), subagent.Request{RunID: "r1", Agent: &config.Agent{Name: "general", Timeout: tt.timeout}, Depth: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The progress arrived: the helper sent it before anything else
			// the test waits on (no speed dependence).
			hr := run.(*helperRun)
			for deadline := time.Now().Add(time.Minute); len(hr.rem.Held()) == 0; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the progress never arrived")
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			if tt.cancel {
				cancel()
			}
			defer cancel()
			if tt.stop == outcome.StopError {
				// the helper exits when it reads its next line
				hr.h.send(wireNothing())
			}
			res := run.Wait(ctx)
			want := outcome.Diagnostic{Provider: "inprocess", Stage: outcome.StageRemote, Category: tt.cat, StopReason: tt.stop}.String()
			if res.StopReason != tt.stop || res.Diagnostic != want || llm.BlocksText(res.Output) != "the earlier message" || res.Note != note {
				t.Errorf("settled %+v, want %s with the earlier message", res, want)
			}
			if tt.term { // asked in the background: wait for it, boundedly
				for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
					if b, _ := os.ReadFile(seen); strings.Contains(string(b), `"op":"terminate"`) {
						break
					}
				}
			}
			closeFn()
			b, _ := os.ReadFile(seen)
			if got := strings.Contains(string(b), `"op":"terminate"`); got != tt.term {
				t.Errorf("terminate sent %v, want %v; the helper saw:\n%s", got, tt.term, b)
			}
		})
	}
}

// wireNothing is a line the helper reads and ignores.
func wireNothing() wire.Msg { return wire.Msg{Op: "noop"} }
