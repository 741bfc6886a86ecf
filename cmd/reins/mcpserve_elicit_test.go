package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinsdev/reins/internal/testutil"
)

// TestMCPServeElicitation (issue 52 item 3): a question the child would
// ask a user at the terminal — here, running a command again with .git
// writable — is put to a client that declared elicitation (the Go SDK's
// client speaks 2026-07-28: an input-required result and its retry), for
// a foreground run and for a job polled with job_output; its yes lets the
// command write .git, its no keeps it read-only; a client without
// elicitation is never asked and the child is refused as in a headless
// run. A made-up requestState names nothing.
func TestMCPServeElicitation(t *testing.T) {
	type asked struct {
		mu   sync.Mutex
		msgs []string
	}
	for _, tc := range []struct {
		name       string
		elicit     bool
		answer     string // accept (allow true), decline
		background bool
		want       string
	}{
		{"yes", true, "accept", false, "git written"},
		{"no", true, "decline", false, "git refused"},
		{"job yes", true, "accept", true, "git written"},
		{"no elicitation", false, "", false, "git refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			markEnv := testutil.MarkChildren(t)
			cwd, home := mcpWorkspace(t)
			testutil.Git(t, cwd, "init", "-q")
			var got asked
			opts := &mcp.ClientOptions{}
			if tc.elicit {
				opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					got.mu.Lock()
					got.msgs = append(got.msgs, req.Params.Message)
					got.mu.Unlock()
					if tc.answer == "accept" {
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
					}
					return &mcp.ElicitResult{Action: tc.answer}, nil
				}
			}
			cs, cmd := mcpServe(t, cwd, home, markEnv, opts)
			defer cs.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			res, r := callMCP(t, ctx, cs, "run", map[string]any{"prompt": "GIT-PLEASE", "background": tc.background})
			if tc.background {
				if r.StopReason != "running" || r.Job == "" {
					t.Fatalf("background run: %+v", r)
				}
				for r.StopReason == "running" {
					res, r = callMCP(t, ctx, cs, "job_output", map[string]any{"id": r.Job, "wait": 50})
				}
			}
			if res.IsError || r.StopReason != "completed" || r.Output != tc.want {
				t.Errorf("result: isError %v %+v; want completed %q\n%s", res.IsError, r, tc.want, textOf(res))
			}
			_, err := os.Stat(filepath.Join(cwd, ".git", "probe"))
			if written := err == nil; written != (tc.want == "git written") {
				t.Errorf(".git/probe written: %v", written)
			}
			got.mu.Lock()
			msgs := got.msgs
			got.mu.Unlock()
			if !tc.elicit {
				if len(msgs) != 0 {
					t.Errorf("a client without elicitation was asked %q", msgs)
				}
			} else if len(msgs) != 1 || !strings.Contains(msgs[0], "reins child "+r.Child+" ran a command that failed because .git is read-only") ||
				!strings.Contains(msgs[0], "echo probe > .git/probe && echo wrote") {
				t.Errorf("questions %q (child %s)", msgs, r.Child)
			}
			// A made-up requestState names no question and starts nothing.
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"prompt": "GIT-PLEASE"}, RequestState: "state-0123456789abcdef01234567"})
			if err != nil || !res.IsError || !strings.Contains(textOf(res), "names no question") {
				t.Errorf("a forged requestState: %v %+v", err, res)
			}
			cs.Close()
			if st := cmd.ProcessState; st == nil || st.ExitCode() != 0 {
				t.Errorf("server after EOF: %v", st)
			}
		})
	}
}
