package acpchild

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/subagent"
)

// TestLateReplay: a continued child (session/load) that replays the loaded
// conversation after answering session/load, as Gemini CLI 0.61 does
// (issue 32), never has that replay counted as the new answer.
//   - after: one user_message_chunk before the answer, the rest 50 ms
//     after it (Gemini's shape). reins waits for the child's silence
//     before it sends the follow-up, so the answer is the new turn's
//     alone. Should the replay outlast the silence (a machine stalled for
//     longer than ReplayQuiet), the run fails as in "prompt" below: either
//     way no stale text, so the verdict does not depend on speed.
//   - prompt: the whole replay arrives only with the follow-up, before
//     its answer. No silence can help; the replayed user_message_chunk
//     shows it, and the run fails at load-session (protocol) with no
//     output rather than return "REPLAYED …" glued to the answer. The
//     code before this fix returned exactly that.
func TestLateReplay(t *testing.T) {
	for _, at := range []string{"after", "prompt"} {
		t.Run(at, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			env := map[string]string{
				"ACP_LOAD":        "1",
				"ACP_HISTORY_DIR": filepath.Join(f.cwd, ".acp-history"), // the sandbox lets it write there
				"ACP_REPLAY_AT":   at,
			}
			p := New(Options{Logf: func(string, ...any) {}, Ladder: testLadder, ExitWait: testExitWait, SessionsDir: t.TempDir()})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			req := f.request(f.agent("latereplay", "", env), "ACP-ONE")
			req.ParentSession, req.ChildID = "parent-1", "child-1"
			r, err := p.Start(ctx, req)
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			first := outcome.Settle(r.Wait(ctx))
			if err := r.Dispose(); err != nil {
				t.Errorf("Dispose: %v", err)
			}
			if first.StopReason != outcome.StopCompleted || text(first) != "turn 1 after []" {
				t.Fatalf("first run: (%s, %q, %q)", first.StopReason, text(first), first.Diagnostic)
			}

			req = f.request(f.agent("latereplay", "", env), "ACP-TWO")
			req.ParentSession, req.ChildID, req.Continues = "parent-1", "child-1", "child-1"
			r, err = p.(subagent.Continuer).Continue(ctx, req)
			if err != nil {
				t.Fatalf("Continue: %v", err)
			}
			res := outcome.Settle(r.Wait(ctx))
			if err := r.Dispose(); err != nil {
				t.Errorf("Dispose: %v", err)
			}
			if live := f.leftBehind(); len(live) > 0 {
				t.Errorf("processes left behind: %v", live)
			}
			const lateDiag = "Subagent failure (provider: acp; stage: load-session; category: protocol; stop reason: error)"
			clean := res.StopReason == outcome.StopCompleted && text(res) == "turn 2 after [ACP-ONE]" && res.Diagnostic == ""
			failed := res.StopReason == outcome.StopError && text(res) == "" && res.Diagnostic == lateDiag
			switch {
			case strings.Contains(text(res), "REPLAYED") || strings.Contains(text(res), "session context"):
				t.Errorf("the replay was counted as the answer: (%s, %q, %q)", res.StopReason, text(res), res.Diagnostic)
			case at == "prompt" && !failed:
				t.Errorf("got (%s, %q, %q), want (error, no text, %q)", res.StopReason, text(res), res.Diagnostic, lateDiag)
			case at == "after" && !clean && !failed:
				t.Errorf("got (%s, %q, %q), want completed %q", res.StopReason, text(res), res.Diagnostic, "turn 2 after [ACP-ONE]")
			case at == "after" && failed:
				t.Logf("the replay outlasted %s of silence here: the run failed as a late replay", DefaultReplayQuiet)
			}
		})
	}
}

// TestNeverSilentChildIsContinued: a loaded child that never falls silent
// (a heartbeat every 50 ms against a ReplayQuiet of 300 ms) still gets its
// follow-up after replayWaits windows, and answers it.
func TestNeverSilentChildIsContinued(t *testing.T) {
	f := newFixture(t)
	env := map[string]string{"ACP_LOAD": "1", "ACP_HISTORY_DIR": filepath.Join(f.cwd, ".acp-history"), "ACP_HEARTBEAT_MS": "50"}
	p := New(Options{Logf: func(string, ...any) {}, Ladder: testLadder, ExitWait: testExitWait, SessionsDir: t.TempDir(), ReplayQuiet: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i, prompt := range []string{"ACP-ONE", "ACP-TWO"} {
		req := f.request(f.agent("history", "", env), prompt)
		req.ParentSession, req.ChildID = "parent-1", "child-1"
		var (
			r   subagent.Run
			err error
		)
		if i == 0 {
			r, err = p.Start(ctx, req)
		} else {
			req.Continues = "child-1"
			r, err = p.(subagent.Continuer).Continue(ctx, req)
		}
		if err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		res := outcome.Settle(r.Wait(ctx))
		if err := r.Dispose(); err != nil {
			t.Errorf("Dispose: %v", err)
		}
		want := []string{"turn 1 after []", "turn 2 after [ACP-ONE]"}[i]
		if res.StopReason != outcome.StopCompleted || text(res) != want {
			t.Errorf("run %d: (%s, %q, %q), want completed %q", i+1, res.StopReason, text(res), res.Diagnostic, want)
		}
	}
}

// TestEchoedPromptIsNotReplay: in a loaded run, a user_message_chunk that
// is part of reins's own prompt is the agent echoing it, not a replay.
func TestEchoedPromptIsNotReplay(t *testing.T) {
	r := &run{loaded: true}
	r.req.Prompt, r.req.Continues = "what was the word?", "child-1"
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"what was the word?", false},
		{"what was", false},
		{"  ", false},
		{"Remember the word Paris.", true},
	} {
		if got := r.replayed(sdk.TextBlock(tc.text)); got != tc.want {
			t.Errorf("replayed(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}
