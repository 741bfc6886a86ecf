package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// fixture is a harness whose sessions talk to a scripted server over real
// HTTP, with a workspace holding files and optional config and agents.
type fixture struct {
	h   *Harness
	srv *mock.Server
	url string
}

func newFixture(t *testing.T, script string, files map[string]string) *fixture {
	t.Helper()
	sc, err := mock.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	url, srv, stop := mock.StartTest(sc)
	t.Cleanup(stop)
	home, cwd := t.TempDir(), t.TempDir()
	files[".reins/config.yaml"] = files[".reins/config.yaml"] + `
providers:
  openai:
    retry: {maxRetries: 0, initialDelay: 1ms, maxDelay: 1ms, jitter: 0}
`
	for name, body := range files {
		p := filepath.Join(cwd, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Trust(t, home, cwd)
	h, err := New(Options{Home: home, Cwd: cwd, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return &fixture{h: h, srv: srv, url: url}
}

func (f *fixture) session(t *testing.T) *Session {
	t.Helper()
	m, err := f.h.ResolveModel("openai/test", f.url)
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.h.NewSession(SessionOptions{Model: m, System: "parent system prompt"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func loadEvents(t *testing.T, path string) []session.Event {
	t.Helper()
	ld, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return ld.Events
}

func toolResults(t *testing.T, s *Session) []session.ToolResult {
	t.Helper()
	s.Log.Flush()
	return testutil.Decoded[session.ToolResult](t, loadEvents(t, s.Log.Path()), session.TypeToolResult)
}

const maxTokensPartialScript = `
replies:
  - match: delegate-partial
    toolCalls:
      - id: call_parent
        name: subagent
        arguments: {description: summarize the file, prompt: "CHILD-TASK summarize a.txt"}
    usage: {input: 10, output: 5}
  - match: CHILD-TASK
    text: partial one
    toolCalls:
      - id: call_child_1
        name: read
        arguments: {path: a.txt}
    usage: {input: 20, output: 6}
  - match: CHILD-FILE
    toolCalls:
      - id: call_child_2
        name: read
        arguments: {path: a.txt}
    finish: length
    usage: {input: 30, output: 50}
  - match: token limit
    text: the child was cut off
    usage: {input: 40, output: 7}
`

// TestGoldenMaxTokensPartial is the seed's scenario: a child writes text
// and a tool call, then a tool-only step is cut by max-tokens. The parent
// receives the partial answer with the real stop reason.
func TestGoldenMaxTokensPartial(t *testing.T) {
	f := newFixture(t, maxTokensPartialScript, map[string]string{"a.txt": "CHILD-FILE contents\n"})
	s := f.session(t)
	res := s.Run(context.Background(), "delegate-partial please")
	if res.Reason != session.ReasonCompleted {
		t.Fatalf("parent turn %+v", res)
	}
	results := toolResults(t, s)
	if len(results) != 1 {
		t.Fatalf("parent tool results %+v", results)
	}
	want := "Error: subagent run hit its token limit before finishing\nPartial output before the run ended:\npartial one"
	if noChild(results[0].Content) != want || !results[0].IsError {
		t.Errorf("parent tool result %q (isError %v), want %q", results[0].Content, results[0].IsError, want)
	}
	// Usage sums parent and child.
	if res.Usage.InputTokens != 10+40+20+30 || res.Usage.OutputTokens != 5+7+6+50 {
		t.Errorf("usage %+v", res.Usage)
	}

	s.Close()
	events := loadEvents(t, s.Log.Path())
	starts := testutil.Decoded[session.SubagentStart](t, events, session.TypeSubagentStart)
	ends := testutil.Decoded[session.SubagentEnd](t, events, session.TypeSubagentEnd)
	if len(starts) != 1 || len(ends) != 1 {
		t.Fatalf("subagent events: %d starts %d ends", len(starts), len(ends))
	}
	if ends[0].StopReason != "max-tokens" || ends[0].LastAssistantMessage == nil || ends[0].LastAssistantMessage.Text() != "partial one" {
		t.Errorf("subagent/end %+v", ends[0])
	}
	childPath := filepath.Join(f.h.SessionsDir(), starts[0].ChildSession, session.FileName)
	child, err := session.Load(childPath)
	if err != nil {
		t.Fatal(err)
	}
	if child.Header.ParentSession != s.Log.Header().ID || child.Header.Origin != "subagent" || child.Header.DelegationDepth != 1 {
		t.Errorf("child header %+v", child.Header)
	}

	parentLog := normalizeLog(t, s.Log.Path(), f.h)
	childLog := normalizeLog(t, childPath, f.h)
	norm := func(b []byte) []byte {
		s := strings.ReplaceAll(string(b), starts[0].ChildSession, "CHILD")
		s = strings.ReplaceAll(s, child.Header.ParentSession, "PARENT")
		return []byte(durationRE.ReplaceAllString(s, `"durationMs":0`))
	}
	golden(t, "max_tokens_partial.parent.jsonl", norm(parentLog))
	golden(t, "max_tokens_partial.child.jsonl", norm(childLog))
}

// TestFourChildrenConcurrent: four subagent calls in one message run at
// once — each child's reply is held by a barrier of 4, so the run can only
// finish if all four requests are in flight together — and the results
// are committed in the model's order.
func TestFourChildrenConcurrent(t *testing.T) {
	script := `
replies:
  - match: fan-out
    toolCalls:
      - {id: c1, name: subagent, arguments: {description: one, prompt: CHILD-1}}
      - {id: c2, name: subagent, arguments: {description: two, prompt: CHILD-2}}
      - {id: c3, name: subagent, arguments: {description: three, prompt: CHILD-3}}
      - {id: c4, name: subagent, arguments: {description: four, prompt: CHILD-4}}
  - {match: CHILD-1, text: answer one, barrier: 4}
  - {match: CHILD-2, text: answer two, barrier: 4}
  - {match: CHILD-3, text: answer three, barrier: 4}
  - {match: CHILD-4, text: answer four, barrier: 4}
  - {match: answer four, text: all done}
`
	f := newFixture(t, script, map[string]string{})
	s := f.session(t)
	if res := s.Run(context.Background(), "fan-out"); res.Reason != session.ReasonCompleted {
		t.Fatalf("turn %+v", res)
	}
	var got []string
	for _, r := range toolResults(t, s) {
		got = append(got, r.CallID+"="+noChild(r.Content))
	}
	want := []string{"c1=answer one", "c2=answer two", "c3=answer three", "c4=answer four"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("results (-want +got):\n%s", d)
	}
}

func TestDepthLimit(t *testing.T) {
	tests := []struct {
		name, config, want string
	}{
		{"delegation forbidden", "subagents: {maxDepth: 0}\n", "Error: subagent depth 1 exceeds maxDepth 0"},
		{"grandchild too deep", "subagents: {maxDepth: 1}\n", "Error: subagent declined the task"},
	}
	script := `
replies:
  - match: go-deep
    toolCalls: [{id: p1, name: subagent, arguments: {description: level one, prompt: LEVEL-1}}]
  - match: LEVEL-1
    toolCalls: [{id: k1, name: subagent, arguments: {description: level two, prompt: LEVEL-2}}]
  - match: exceeds maxDepth 1
    text: child saw the limit
    finish: content_filter
  - {match: "Error:", text: parent done}
`
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, script, map[string]string{".reins/config.yaml": tc.config})
			s := f.session(t)
			s.Run(context.Background(), "go-deep")
			results := toolResults(t, s)
			if len(results) == 0 || !strings.HasPrefix(results[0].Content, tc.want) || !results[0].IsError {
				t.Errorf("tool results %+v, want first to start %q", results, tc.want)
			}
			if tc.config == "subagents: {maxDepth: 1}\n" {
				// The child's own tool result names depth 2.
				var found bool
				for _, r := range f.srv.Requests() {
					if strings.Contains(string(r.Body), "subagent depth 2 exceeds maxDepth 1") {
						found = true
					}
				}
				if !found {
					t.Error("no request carried the grandchild's depth error")
				}
			}
		})
	}
}

func TestAgentTimeout(t *testing.T) {
	script := `
replies:
  - match: delegate-slow
    toolCalls: [{id: p1, name: subagent, arguments: {description: slow work, prompt: SLOW-CHILD, agent: slow}}]
  - {match: SLOW-CHILD, fault: stall}
  - {match: "Error:", text: parent done}
`
	f := newFixture(t, script, map[string]string{".reins/agents/slow.md": "---\nname: slow\ndescription: takes forever\ntimeout: 200ms\n---\nYou are slow.\n"})
	s := f.session(t)
	s.Run(context.Background(), "delegate-slow")
	results := toolResults(t, s)
	want := "Error: subagent run was cancelled\nDiagnostic: Subagent failure (provider: inprocess; stage: run; category: timeout; stop reason: aborted)"
	if len(results) != 1 || noChild(results[0].Content) != want {
		t.Fatalf("tool results %+v\nwant %q", results, want)
	}
}

func TestParentCancellationAbortsChildren(t *testing.T) {
	script := `
replies:
  - match: two-slow
    toolCalls:
      - {id: c1, name: subagent, arguments: {description: one, prompt: STALL-1}}
      - {id: c2, name: subagent, arguments: {description: two, prompt: STALL-2}}
  - {match: STALL, fault: stall, repeat: true}
`
	f := newFixture(t, script, map[string]string{})
	s := f.session(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan session.TurnEnd, 1)
	go func() {
		res := s.Run(ctx, "two-slow")
		done <- session.TurnEnd{Reason: res.Reason, By: res.By}
	}()
	for f.srv.InFlight() < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	end := <-done
	if end.Reason != session.ReasonAborted {
		t.Fatalf("parent ended %+v", end)
	}
	s.Close()
	events := loadEvents(t, s.Log.Path())
	starts := testutil.Decoded[session.SubagentStart](t, events, session.TypeSubagentStart)
	ends := testutil.Decoded[session.SubagentEnd](t, events, session.TypeSubagentEnd)
	if len(starts) != 2 || len(ends) != 2 {
		t.Fatalf("%d starts %d ends", len(starts), len(ends))
	}
	for _, e := range ends {
		if e.StopReason != "aborted" || e.Diagnostic != "" {
			t.Errorf("child end %+v, want aborted without diagnostic", e)
		}
	}
	for _, st := range starts {
		child := loadEvents(t, filepath.Join(f.h.SessionsDir(), st.ChildSession, session.FileName))
		te := testutil.Decoded[session.TurnEnd](t, child, session.TypeTurnEnd)
		if len(te) != 1 || te[0].Reason != "aborted" || te[0].By != "parent" {
			t.Errorf("child %s turn ends %+v, want aborted by parent", st.ChildSession, te)
		}
	}
}

// releaseAfterTurn waits (generously) until the session log at path holds
// a turn end, then sends the mock at url a request whose text is word, to
// reach the barrier a held reply waits at.
func releaseAfterTurn(path, url, word string) error {
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(path); strings.Contains(string(b), `"type":"`+session.TypeTurnEnd+`"`) {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("the first turn never ended")
		}
	}
	body, _ := json.Marshal(map[string]any{"model": "test", "stream": true, "messages": []any{map[string]any{"role": "user", "content": word}}})
	resp, err := http.Post(url+"/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

func userMessages(t *testing.T, events []session.Event) []string {
	var out []string
	for _, d := range testutil.Decoded[session.UserMessage](t, events, session.TypeUserMessage) {
		out = append(out, d.Message.Text())
	}
	return out
}

func TestBackgroundJobNoticeAndOutput(t *testing.T) {
	script := `
replies:
  - match: start-bg
    toolCalls: [{id: p1, name: subagent, arguments: {description: bg work, prompt: BG-CHILD, run_in_background: true}}]
  - {match: BG-CHILD, text: the child result, barrier: 2}
  - {match: RELEASE-THE-CHILD, text: released, barrier: 2}
  - {match: Started background job job-1, text: waiting for the job}
  - match: "finished [status: completed]"
    toolCalls: [{id: p2, name: job_output, arguments: {id: job-1}}]
  - {match: the child result, text: final answer}
`
	f := newFixture(t, script, map[string]string{})
	s := f.session(t)
	// The child's answer waits at a barrier the test opens once the
	// parent's first turn has ended on disk: the job finishes between
	// turns, whatever the machine's speed (on a busy one it could finish
	// within the first turn, whose next step then took the notice).
	released := make(chan error, 1)
	go func() { released <- releaseAfterTurn(s.Log.Path(), f.url, "RELEASE-THE-CHILD") }()
	res := s.Run(context.Background(), "start-bg")
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	if res.Reason != session.ReasonCompleted {
		t.Fatalf("turn %+v", res)
	}
	s.Close()
	events := loadEvents(t, s.Log.Path())
	users := userMessages(t, events)
	wantNotice := "background job job-1 (subagent: bg work) finished [status: completed]. Read its output with job_output."
	if len(users) != 2 || noChild(users[1]) != wantNotice {
		t.Fatalf("user messages %q, want the notice %q", users, wantNotice)
	}
	turns := testutil.Decoded[session.TurnEnd](t, events, session.TypeTurnEnd)
	if len(turns) != 2 {
		t.Errorf("%d turns, want the prompt's and the notice's", len(turns))
	}
	notices := testutil.Decoded[session.JobNotice](t, events, session.TypeJobNotice)
	if len(notices) != 1 || notices[0] != (session.JobNotice{JobID: "job-1", Status: "completed"}) {
		t.Errorf("job notices %+v", notices)
	}
	results := testutil.Decoded[session.ToolResult](t, events, session.TypeToolResult)
	if len(results) != 2 || noChild(results[1].Content) != "the child result" {
		t.Errorf("job_output result %+v", results)
	}
	// Every event lies inside a turn.
	open := false
	for _, e := range events {
		switch e.Type {
		case session.TypeTurnStart:
			open = true
		case session.TypeTurnEnd:
			open = false
		default:
			if !open {
				t.Errorf("event %d %s outside a turn", e.Seq, e.Type)
			}
		}
	}
}

func TestBackgroundJobFailedNotice(t *testing.T) {
	script := `
replies:
  - match: start-bg
    toolCalls: [{id: p1, name: subagent, arguments: {description: doomed, prompt: BG-EMPTY, run_in_background: true}}]
  - {match: BG-EMPTY, fault: empty}
  - {match: Started background job, text: waiting}
  - {match: "status: failed", text: noted the failure}
`
	f := newFixture(t, script, map[string]string{})
	s := f.session(t)
	s.Run(context.Background(), "start-bg")
	s.Close()
	users := userMessages(t, loadEvents(t, s.Log.Path()))
	want := "background job job-1 (subagent: doomed) finished [status: failed; error; diagnostic: " +
		"Subagent failure (provider: inprocess; stage: run; category: EMPTY_RESPONSE; stop reason: error)]. Read its output with job_output."
	if len(users) != 2 || noChild(users[1]) != want {
		t.Errorf("notice %q\nwant   %q", users, want)
	}
}

func TestJobKill(t *testing.T) {
	script := `
replies:
  - match: start-bg
    toolCalls: [{id: p1, name: subagent, arguments: {description: forever, prompt: BG-STALL, run_in_background: true}}]
  - {match: BG-STALL, fault: stall}
  - match: Started background job job-1
    toolCalls: [{id: p2, name: job_kill, arguments: {id: job-1}}]
  - {match: "status: killed", text: killed it}
`
	f := newFixture(t, script, map[string]string{})
	s := f.session(t)
	res := s.Run(context.Background(), "start-bg")
	if res.Reason != session.ReasonCompleted {
		t.Fatalf("turn %+v", res)
	}
	s.Close()
	events := loadEvents(t, s.Log.Path())
	results := testutil.Decoded[session.ToolResult](t, events, session.TypeToolResult)
	if len(results) != 2 || results[1].Content != "job job-1 killed" {
		t.Errorf("results %+v", results)
	}
	users := userMessages(t, events)
	want := "background job job-1 (subagent: forever) finished [status: killed]. Read its output with job_output."
	if len(users) != 2 || noChild(users[1]) != want {
		t.Errorf("notice %q, want %q", users, want)
	}
	ends := testutil.Decoded[session.SubagentEnd](t, events, session.TypeSubagentEnd)
	if len(ends) != 1 || ends[0].StopReason != "aborted" || ends[0].Diagnostic != "" {
		t.Errorf("subagent/end %+v", ends)
	}
}

func TestSubagentSchemaListsAgents(t *testing.T) {
	f := newFixture(t, "replies: []\n", map[string]string{".reins/agents/reviewer.md": "---\nname: reviewer\ndescription: Reviews a diff\n---\nReview.\n"})
	s := f.session(t)
	tl, ok := s.Tools.Get("subagent")
	if !ok {
		t.Fatal("no subagent tool")
	}
	var schema struct {
		Properties map[string]struct {
			Enum        []string `json:"enum"`
			Description string   `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	json.Unmarshal(tl.Spec().Parameters, &schema)
	if d := cmp.Diff([]string{"general", "reviewer"}, schema.Properties["agent"].Enum); d != "" {
		t.Error(d)
	}
	if !strings.Contains(schema.Properties["agent"].Description, "reviewer: Reviews a diff") {
		t.Errorf("agent description %q", schema.Properties["agent"].Description)
	}
	if d := cmp.Diff([]string{"description", "prompt"}, schema.Required); d != "" {
		t.Error(d)
	}
}
