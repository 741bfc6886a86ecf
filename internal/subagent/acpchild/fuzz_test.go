package acpchild

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/reinsdev/reins/internal/childproc"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/tool"
)

// fuzzCanary replaces "$C" in the fuzzed messages: child-controlled text
// that must never reach a diagnostic. It matches the diagnostic's value
// alphabet, so the allow-list pattern alone would not catch it.
const fuzzCanary = "CANARY-acp-7f3a9c"

var diagnosticPattern = regexp.MustCompile(`^Subagent failure \(provider: acp(; [a-z ]+: [A-Za-z0-9_-]+)*\)(\nPermission decision \(policy: (allow|reject); request: [a-z_]+; decision: (allowed|rejected|cancelled)\))?$`)

// FuzzChildMessages drives the ACP provider's client side with arbitrary
// child messages: session updates and permission requests (one JSON object
// a line) and a prompt's stop reason, then settles the run. The result's
// diagnostic is empty or allow-listed text, never the planted canary; the
// decision a permission request gets is one of its own options, or
// cancelled.
func FuzzChildMessages(f *testing.F) {
	// Seeds: messages as the TypeScript SDK's children send them.
	updates := strings.Join([]string{
		`{"sessionId":"sess-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"partial $C"}}}`,
		`{"sessionId":"sess-1","update":{"sessionUpdate":"tool_call","toolCallId":"call-1","title":"run $C","kind":"execute","status":"pending","rawInput":{"cmd":"$C"}}}`,
		`{"sessionId":"sess-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call-1","kind":"$C","status":"failed"}}`,
		`{"sessionId":"other-$C","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"$C"}}}`,
	}, "\n")
	perms := strings.Join([]string{
		`{"sessionId":"sess-1","toolCall":{"toolCallId":"call-1","title":"$C title","kind":"edit","rawInput":{"path":"$C"}},"options":[{"optionId":"allow-$C","name":"Allow $C","kind":"allow_once"},{"optionId":"reject-$C","name":"Reject $C","kind":"reject_once"}]}`,
		`{"sessionId":"sess-1","toolCall":{"toolCallId":"call-2","title":"$C","kind":"$C"},"options":[{"optionId":"$C","name":"$C","kind":"$C"}]}`,
		`{"sessionId":"$C","toolCall":{"toolCallId":"call-1"},"options":[]}`,
	}, "\n")
	for i, stop := range []string{"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "$C", ""} {
		f.Add(updates, perms, stop, uint8(i))
	}
	f.Add("{", "[1]", "end_turn\n", uint8(255))
	f.Fuzz(func(t *testing.T, updates, perms, stop string, mode uint8) {
		plant := func(s string) string { return strings.ReplaceAll(s, "$C", fuzzCanary) }
		var logged bytes.Buffer
		p := &provider{opts: Options{Logf: func(format string, args ...any) {
			logged.WriteString(format) // the host log may carry anything
		}}}
		policy := config.PermissionReject
		if mode&1 != 0 {
			policy = config.PermissionAllow
		}
		perm := tool.WorkspaceWrite
		if mode&2 != 0 {
			perm = tool.ReadOnly
		}
		r := &run{
			p: p, policy: policy, sessionID: "sess-1",
			req:   subagent.Request{RunID: "run-1", Agent: &config.Agent{Name: "fuzz"}, Permission: perm},
			kinds: map[sdk.ToolCallId]string{},
		}
		r.life = childproc.Start(0, nil)
		r.ctx = r.life.Context()
		defer r.life.End(nil)
		c := &client{route: &router{cur: r}}

		for _, l := range strings.Split(plant(updates), "\n") {
			var n sdk.SessionNotification
			if json.Unmarshal([]byte(l), &n) != nil {
				continue
			}
			if err := c.SessionUpdate(context.Background(), n); err != nil {
				t.Fatalf("SessionUpdate: %v", err)
			}
		}
		for _, l := range strings.Split(plant(perms), "\n") {
			var req sdk.RequestPermissionRequest
			if json.Unmarshal([]byte(l), &req) != nil {
				continue
			}
			if req.ToolCall.Kind == nil {
				// An announced call: without it the request waits
				// kindWait for the announcement.
				r.mu.Lock()
				if _, ok := r.kinds[req.ToolCall.ToolCallId]; !ok {
					r.kinds[req.ToolCall.ToolCallId] = string(sdk.ToolKindOther)
				}
				r.mu.Unlock()
			}
			resp, err := c.RequestPermission(context.Background(), req)
			if err != nil {
				t.Fatalf("RequestPermission: %v", err)
			}
			switch o := resp.Outcome; {
			case o.Selected != nil:
				found := false
				for _, opt := range req.Options {
					found = found || opt.OptionId == o.Selected.OptionId
				}
				if !found {
					t.Fatalf("selected option %q is not one offered", o.Selected.OptionId)
				}
			case o.Cancelled == nil:
				t.Fatal("a permission answer with no outcome")
			}
		}

		switch mode >> 2 & 3 {
		case 1:
			r.life.End(errLocalCancel)
		case 2:
			r.life.End(errTimeout)
		case 3:
			r.life.End(errParentCancel)
		}
		res := r.settle(sdk.PromptResponse{StopReason: sdk.StopReason(plant(stop))}, nil)
		if d := res.Diagnostic; d != "" {
			if strings.HasPrefix(d, "Permission decision") {
				d = "Subagent failure (provider: acp)\n" + d // a permission line alone
			}
			if !diagnosticPattern.MatchString(d) {
				t.Fatalf("diagnostic outside the allow-list: %q", res.Diagnostic)
			}
		}
		if strings.Contains(res.Diagnostic, fuzzCanary) || strings.Contains(string(res.StopReason), fuzzCanary) {
			t.Fatalf("the canary reached the result: %q / %q", res.Diagnostic, res.StopReason)
		}
		switch res.StopReason {
		case outcome.StopCompleted, outcome.StopMaxTokens, outcome.StopAborted, outcome.StopRefusal, outcome.StopError:
		default:
			t.Fatalf("stop reason %q outside the closed set", res.StopReason)
		}
	})
}
