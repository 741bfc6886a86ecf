package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
)

func TestKinds(t *testing.T) {
	for name, want := range map[string]sdk.ToolKind{
		"read": "read", "ls": "read", "write": "edit", "edit": "edit", "bash": "execute",
		"grep": "search", "glob": "search", "subagent": "other", "job_output": "other",
		"job_list": "other", "job_kill": "other", "mcp_thing": "other",
	} {
		if got := KindOf(name); got != want {
			t.Errorf("KindOf(%s) = %s, want %s", name, got, want)
		}
	}
}

func TestDescribe(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "old.txt"), []byte("before\n"), 0o644)
	tests := []struct {
		name, args string
		live       bool
		title      string
		location   string
		diffOld    *string
		diffNew    string
	}{
		{"read", `{"path":"a/b.go","offset":7}`, true, "Read a/b.go", filepath.Join(ws, "a/b.go"), nil, ""},
		{"ls", `{}`, true, "List .", "", nil, ""},
		{"edit", `{"path":"x.go","old_string":"a","new_string":"b"}`, true, "Edit x.go", filepath.Join(ws, "x.go"), sdk.Ptr("a"), "b"},
		{"write", `{"path":"old.txt","content":"after\n"}`, true, "Write old.txt", filepath.Join(ws, "old.txt"), sdk.Ptr("before\n"), "after\n"},
		{"write", `{"path":"old.txt","content":"after\n"}`, false, "Write old.txt", filepath.Join(ws, "old.txt"), nil, "after\n"},
		{"write", `{"path":"new.txt","content":"x"}`, true, "Write new.txt", filepath.Join(ws, "new.txt"), nil, "x"},
		{"bash", `{"command":"go test ./...\necho done"}`, true, "Run go test ./... …", "", nil, ""},
		{"grep", `{"pattern":"TODO","path":"src"}`, true, "Search for TODO in src", "", nil, ""},
		{"glob", `{"pattern":"**/*.go"}`, true, "Find **/*.go", "", nil, ""},
		{"subagent", `{"description":"review","agent":"reviewer","prompt":"p"}`, true, "Delegate: review (reviewer)", "", nil, ""},
		{"job_kill", `{"id":"job-2"}`, true, "Stop job-2", "", nil, ""},
		{"edit", `not json`, true, "edit", "", nil, ""},
	}
	for _, tc := range tests {
		c := describe(ws, "c1", tc.name, tc.args, tc.live)
		if c.title != tc.title {
			t.Errorf("%s %s: title %q, want %q", tc.name, tc.args, c.title, tc.title)
		}
		loc := ""
		if len(c.locations) == 1 {
			loc = c.locations[0].Path
		}
		if loc != tc.location {
			t.Errorf("%s %s: location %q, want %q", tc.name, tc.args, loc, tc.location)
		}
		if tc.diffNew == "" {
			if len(c.diff) != 0 {
				t.Errorf("%s: unexpected diff %+v", tc.name, c.diff)
			}
			continue
		}
		if len(c.diff) != 1 || c.diff[0].Diff == nil {
			t.Fatalf("%s: diff %+v", tc.name, c.diff)
		}
		d := c.diff[0].Diff
		if d.NewText != tc.diffNew || (d.OldText == nil) != (tc.diffOld == nil) || (d.OldText != nil && *d.OldText != *tc.diffOld) || d.Path != tc.location {
			t.Errorf("%s %s: diff %+v", tc.name, tc.args, d)
		}
	}
}

func mkEvent(t *testing.T, typ string, data any) session.Event {
	t.Helper()
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	e, err := session.NewEvent(typ, 0, time.Time{}, b)
	if err != nil {
		panic(err)
	}
	return e
}

func TestTranslateSubagentRun(t *testing.T) {
	tr := newTranslator("/ws", true)
	start := tr.updates(mkEvent(t, session.TypeSubagentStart, session.SubagentStart{RunID: "run-3", Agent: "reviewer", Provider: "acp", Label: "check it"}))
	if len(start) != 1 || start[0].ToolCall == nil || start[0].ToolCall.Kind != sdk.ToolKindThink ||
		start[0].ToolCall.ToolCallId != "subagent-run-3" || start[0].ToolCall.Status != sdk.ToolCallStatusInProgress ||
		start[0].ToolCall.Title != "Subagent reviewer: check it" {
		t.Fatalf("start %+v", start)
	}
	end := tr.updates(mkEvent(t, session.TypeSubagentEnd, session.SubagentEnd{RunID: "run-3", StopReason: "error",
		Diagnostic: "Subagent failure (provider: acp; stage: prompt; category: unknown; stop reason: error)"}))
	u := end[0].ToolCallUpdate
	if u == nil || *u.Status != sdk.ToolCallStatusFailed || len(u.Content) != 1 ||
		u.Content[0].Content.Content.Text.Text != "Error: subagent run failed\nDiagnostic: Subagent failure (provider: acp; stage: prompt; category: unknown; stop reason: error)" {
		t.Fatalf("end %+v", end)
	}
}

func TestCoalesce(t *testing.T) {
	us := coalesce([]sdk.SessionUpdate{
		sdk.UpdateAgentThoughtText("a"), sdk.UpdateAgentThoughtText("b"),
		sdk.UpdateAgentMessageText("c"), sdk.UpdateAgentMessageText("d"), sdk.UpdateAgentMessageText("e"),
		inProgress("x"),
		sdk.UpdateAgentMessageText("f"),
	})
	if len(us) != 4 || us[0].AgentThoughtChunk.Content.Text.Text != "ab" || us[1].AgentMessageChunk.Content.Text.Text != "cde" ||
		us[2].ToolCallUpdate == nil || us[3].AgentMessageChunk.Content.Text.Text != "f" {
		t.Errorf("coalesced to %+v", us)
	}
}

func TestResponse(t *testing.T) {
	for _, tc := range []struct {
		res  agent.TurnResult
		stop sdk.StopReason
		code string
	}{
		{agent.TurnResult{Reason: session.ReasonCompleted}, sdk.StopReasonEndTurn, ""},
		{agent.TurnResult{Reason: session.ReasonMaxTokens}, sdk.StopReasonMaxTokens, ""},
		{agent.TurnResult{Reason: session.ReasonRefusal}, sdk.StopReasonRefusal, ""},
		{agent.TurnResult{Reason: session.ReasonAborted}, sdk.StopReasonCancelled, ""},
		{agent.TurnResult{Reason: session.ReasonError, Failure: &session.Failure{Code: "RATE_LIMIT", Message: "secret text"}}, "", "RATE_LIMIT"},
		{agent.TurnResult{Reason: session.ReasonError, Failure: &session.Failure{Code: "CONTENT_FILTER_X", Message: "x"}}, "", "ERROR"},
		{agent.TurnResult{Reason: session.ReasonError}, "", "ERROR"},
	} {
		resp, err := response(tc.res, "")
		if tc.code == "" {
			if err != nil || resp.StopReason != tc.stop {
				t.Errorf("%+v: %v, %v", tc.res, resp, err)
			}
			continue
		}
		re, ok := err.(*sdk.RequestError)
		b, _ := json.Marshal(re)
		if !ok || re.Message != tc.code || string(b) != `{"code":-32603,"message":"`+tc.code+`","data":{"code":"`+tc.code+`"}}` {
			t.Errorf("%+v: error %s", tc.res, b)
		}
	}
}

// TestResponseDetail: the human message of a failed turn follows the code
// in the error's message (the editor shows it to the human); the data
// keeps only the code.
func TestResponseDetail(t *testing.T) {
	_, err := response(agent.TurnResult{Reason: session.ReasonError, Failure: &session.Failure{Code: "AUTH"}}, "; the provider said (HTTP 401: bad key); details in /h/logs/reins.log")
	b, _ := json.Marshal(err)
	if want := `{"code":-32603,"message":"AUTH; the provider said (HTTP 401: bad key); details in /h/logs/reins.log","data":{"code":"AUTH"}}`; string(b) != want {
		t.Errorf("error %s, want %s", b, want)
	}
}

func TestPromptText(t *testing.T) {
	got := promptText([]sdk.ContentBlock{
		sdk.TextBlock("look at "),
		sdk.ResourceLinkBlock("main.go", "file:///ws/main.go"),
		sdk.TextBlock(" and"),
		sdk.ResourceBlock(sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{Uri: "file:///ws/a.txt", Text: "A"}}),
		sdk.ImageBlock("AAAA", "image/png"),
	})
	want := "look at @/ws/main.go and\n<context ref=\"/ws/a.txt\">\nA\n</context>\n"
	if got != want {
		t.Errorf("promptText = %q, want %q", got, want)
	}
}

// A subagent tool call shows the id its child is continued by (issue 16),
// and a continuation says which child it continues.
func TestTranslateSubagentShowsChildID(t *testing.T) {
	tr := newTranslator("/ws", true)
	tr.parent = "20261201-000000-abcd1234"
	id := subagent.ChildID(tr.parent, "run-1")
	for _, tc := range []struct {
		start session.SubagentStart
		title string
	}{
		{session.SubagentStart{RunID: "run-1", Agent: "general", Label: "look"}, "Subagent general: look [" + id + "]"},
		{session.SubagentStart{RunID: "run-2", Agent: "general", Label: "more", Continues: id}, "Continue Subagent general: more [" + id + "]"},
	} {
		u := tr.updates(mkEvent(t, session.TypeSubagentStart, tc.start))
		if len(u) != 1 || u[0].ToolCall == nil || u[0].ToolCall.Title != tc.title {
			t.Fatalf("start %+v, want title %q", u, tc.title)
		}
		if raw := u[0].ToolCall.RawInput.(map[string]any); raw["child"] != id {
			t.Errorf("raw input %v, want child %s", raw, id)
		}
	}
	c := describe("/ws", "c1", "subagent", `{"description":"again","prompt":"p","continue":"`+id+`"}`, true)
	if c.title != "Continue "+id+": again" {
		t.Errorf("subagent call title %q", c.title)
	}
}
func TestTranslateCompacted(t *testing.T) {
	for _, live := range []bool{true, false} {
		tr := newTranslator("/ws", live)
		got := tr.updates(mkEvent(t, session.TypeContextCompacted, session.ContextCompacted{Turn: 2, Summary: "MODEL-TEXT", Replaces: session.SeqRange{FromSeq: 3, ToSeq: 9}}))
		if len(got) != 1 || got[0].AgentThoughtChunk == nil {
			t.Fatalf("live %v: updates %+v", live, got)
		}
		b, _ := json.Marshal(got)
		if !strings.Contains(string(b), "Context compacted") || strings.Contains(string(b), "MODEL-TEXT") {
			t.Fatalf("live %v: %s", live, b)
		}
	}
}
