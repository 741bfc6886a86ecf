package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/testutil"
)

// childLine is the id a tool result's last line names (child: <id>).
func childLine(t *testing.T, content string) string {
	t.Helper()
	i := strings.LastIndex(content, "\nchild: ")
	if i < 0 || strings.Contains(content[i+1:], "\n") {
		t.Fatalf("result %q does not end with a child: line", content)
	}
	return content[i+len("\nchild: "):]
}

// noChild is a result without its child: line.
var noChild = testutil.NoChildLine

// childBodies are the recorded model requests of the child whose system
// prompt holds marker.
func (f *fixture) childBodies(marker string) []string {
	var out []string
	for _, r := range f.srv.Requests() {
		if strings.Contains(r.System, marker) {
			out = append(out, string(r.Body))
		}
	}
	return out
}

// wantHistory checks that body holds every text in order.
func wantHistory(t *testing.T, body string, texts ...string) {
	t.Helper()
	at := 0
	for _, s := range texts {
		i := strings.Index(body[at:], s)
		if i < 0 {
			t.Errorf("request does not hold %q (in order) in its history:\n%s", s, body)
			return
		}
		at += i + len(s)
	}
}

const continueScript = `
replies:
  - match: delegate-cont
    toolCalls: [{id: p1, name: subagent, arguments: {description: count, prompt: CHILD-ONE, agent: counter}}]
  - {match: CHILD-ONE, text: first answer}
  - match: first answer
    toolCalls: [{id: p2, name: subagent, arguments: {description: count on, prompt: CHILD-TWO, continue: $CHILD}}]
  - {match: CHILD-TWO, text: second answer}
  - match: second answer
    toolCalls: [{id: p3, name: subagent, arguments: {description: count more, prompt: CHILD-THREE, continue: $CHILD}}]
  - {match: CHILD-THREE, text: third answer}
  - {match: third answer, text: parent done}
`

// Acceptance 1 (in-process): the parent delegates, reads child: <id> and
// continues the child twice; each time the child's request carries its
// earlier turns, and every run writes its own subagent/start and
// subagent/end, the continuations with continues: <id>.
func TestContinueInProcessChild(t *testing.T) {
	f := newFixture(t, continueScript, map[string]string{
		".reins/agents/counter.md": inprocAgent("counter", "COUNTER-CHILD", ""),
	})
	s := f.session(t)
	if res := s.Run(context.Background(), "delegate-cont"); res.Reason != session.ReasonCompleted {
		t.Fatalf("parent turn %+v", res)
	}
	results := toolResults(t, s)
	if len(results) != 3 {
		t.Fatalf("%d tool results, want 3", len(results))
	}
	id := childLine(t, results[0].Content)
	for i, want := range []string{"first answer", "second answer", "third answer"} {
		if got := results[i].Content; got != want+"\nchild: "+id {
			t.Errorf("result %d = %q, want %q and the child line", i, got, want)
		}
	}
	bodies := f.childBodies("COUNTER-CHILD")
	if len(bodies) != 3 {
		t.Fatalf("%d child requests, want 3", len(bodies))
	}
	wantHistory(t, bodies[1], "CHILD-ONE", "first answer", "CHILD-TWO")
	wantHistory(t, bodies[2], "CHILD-ONE", "first answer", "CHILD-TWO", "second answer", "CHILD-THREE")

	s.Log.Flush()
	events := loadEvents(t, s.Log.Path())
	starts := testutil.Decoded[session.SubagentStart](t, events, session.TypeSubagentStart)
	ends := testutil.Decoded[session.SubagentEnd](t, events, session.TypeSubagentEnd)
	if len(starts) != 3 || len(ends) != 3 {
		t.Fatalf("%d starts, %d ends, want 3 each", len(starts), len(ends))
	}
	for i := range 3 {
		want := id
		if i == 0 {
			want = ""
		}
		if starts[i].Continues != want || ends[i].Continues != want {
			t.Errorf("run %d continues %q / %q, want %q", i, starts[i].Continues, ends[i].Continues, want)
		}
		if starts[i].ChildSession != starts[0].ChildSession {
			t.Errorf("run %d child session %q, want the first run's %q", i, starts[i].ChildSession, starts[0].ChildSession)
		}
	}
	if id != subagent.ChildID(s.Log.Header().ID, starts[0].RunID) {
		t.Errorf("child id %q is not ChildID of the parent session and first run", id)
	}
}

// Acceptance 4 (in-process): a child torn down after its idle timeout, and
// a child of a parent session that was closed and resumed, come back from
// the child's log when continued; an id the session did not start is an
// error.
func TestContinueAfterIdleTeardownAndParentResume(t *testing.T) {
	script := `
replies:
  - match: delegate-cont
    toolCalls: [{id: p1, name: subagent, arguments: {description: count, prompt: CHILD-ONE, agent: counter}}]
  - {match: CHILD-ONE, text: first answer}
  - {match: first answer, text: parent one}
  - match: go-on-cold
    toolCalls: [{id: p2, name: subagent, arguments: {description: count on, prompt: CHILD-TWO, continue: $CHILD}}]
  - {match: CHILD-TWO, text: second answer}
  - {match: second answer, text: parent two}
  - match: go-on-resumed
    toolCalls: [{id: p3, name: subagent, arguments: {description: count more, prompt: CHILD-THREE, continue: $CHILD}}]
  - {match: CHILD-THREE, text: third answer}
  - {match: third answer, text: parent three}
  - match: go-on-foreign
    toolCalls: [{id: p4, name: subagent, arguments: {description: foreign, prompt: CHILD-FOUR, continue: child-00000000}}]
  - {match: no child, text: parent four}
`
	f := newFixture(t, script, map[string]string{
		".reins/agents/counter.md": inprocAgent("counter", "COUNTER-CHILD", ""),
		".reins/config.yaml":       "subagents: {idleTimeout: 1ms}\n",
	})
	s := f.session(t)
	if res := s.Run(context.Background(), "delegate-cont"); res.Reason != session.ReasonCompleted {
		t.Fatalf("turn 1 %+v", res)
	}
	id := childLine(t, toolResults(t, s)[0].Content)
	waitFor(t, "idle teardown", func() bool { return s.Subagents.Kept() == 0 })
	if res := s.Run(context.Background(), "go-on-cold\nchild: "+id); res.Reason != session.ReasonCompleted {
		t.Fatalf("turn 2 %+v", res)
	}
	if got := toolResults(t, s)[1].Content; got != "second answer\nchild: "+id {
		t.Errorf("cold continuation = %q", got)
	}
	s.Close()

	// A new process resumes the parent: its manager knows the child from
	// the parent's log.
	m, err := f.h.ResolveModel("openai/test", f.url)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := f.h.NewSession(SessionOptions{Model: m, System: "parent system prompt", Resume: s.Log.Header().ID})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if res := s2.Run(context.Background(), "go-on-resumed\nchild: "+id); res.Reason != session.ReasonCompleted {
		t.Fatalf("turn 3 %+v", res)
	}
	if res := s2.Run(context.Background(), "go-on-foreign"); res.Reason != session.ReasonCompleted {
		t.Fatalf("turn 4 %+v", res)
	}
	results := toolResults(t, s2)
	if got := results[2].Content; got != "third answer\nchild: "+id {
		t.Errorf("continuation after the parent's resume = %q", got)
	}
	if r := results[3]; !r.IsError || !strings.Contains(r.Content, `no child "child-00000000" in this session`) {
		t.Errorf("a foreign child id: %+v, want an error result", r)
	}
	bodies := f.childBodies("COUNTER-CHILD")
	if len(bodies) != 3 {
		t.Fatalf("%d child requests, want 3", len(bodies))
	}
	wantHistory(t, bodies[2], "CHILD-ONE", "first answer", "CHILD-TWO", "second answer", "CHILD-THREE")
	s2.Log.Flush()
	starts := testutil.Decoded[session.SubagentStart](t, loadEvents(t, s2.Log.Path()), session.TypeSubagentStart)
	var runs []string
	for _, st := range starts {
		runs = append(runs, st.RunID)
	}
	if strings.Join(runs, ",") != "run-1,run-2,run-3" {
		t.Errorf("run ids %v: a resumed parent must not reuse its earlier run ids", runs)
	}
}

// waitFor polls cond under a generous deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within 30s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Acceptance 3: a 200 KiB child answer reaches the parent as 32 KiB and
// the marker, and subagent_output pages through the rest byte-exact.
func TestLongChildOutputPages(t *testing.T) {
	const size = 200 << 10
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "line %06d of the long child answer\n", i)
	}
	full := b.String()[:size-len("END-OF-CHILD")] + "END-OF-CHILD"
	var script strings.Builder
	script.WriteString("replies:\n  - match: delegate-long\n    toolCalls: [{id: p0, name: subagent, arguments: {description: long, prompt: LONG-CHILD}}]\n")
	fmt.Fprintf(&script, "  - {match: LONG-CHILD, text: %q}\n", full)
	for off := 32 << 10; off < size; off += 32 << 10 {
		fmt.Fprintf(&script, "  - match: '\"offset\":%d'\n    toolCalls: [{id: p%d, name: subagent_output, arguments: {child: $CHILD, offset: %d}}]\n", off, off, off)
	}
	script.WriteString("  - {match: END-OF-CHILD, text: read it all}\n")
	f := newFixture(t, script.String(), map[string]string{})
	s := f.session(t)
	if res := s.Run(context.Background(), "delegate-long"); res.Reason != session.ReasonCompleted {
		t.Fatalf("parent turn %+v", res)
	}
	results := toolResults(t, s)
	if len(results) != 7 {
		t.Fatalf("%d tool results, want the subagent's and 6 pages", len(results))
	}
	id := childLine(t, results[0].Content)
	first := results[0].Content
	wantMarker := fmt.Sprintf("\n[output truncated: bytes 0-32768 of %d shown; read the rest with subagent_output {\"child\":%q,\"offset\":32768}.", size, id)
	if !strings.HasPrefix(first, full[:32<<10]+wantMarker) {
		t.Errorf("first result does not hold 32 KiB and then the marker %q:\n%s", wantMarker, first[32<<10:])
	}
	var got strings.Builder
	for i, r := range results {
		c := noChild(r.Content)
		if j := strings.LastIndex(c, "\n[output truncated: "); j >= 0 {
			c = c[:j]
		} else if i != len(results)-1 {
			t.Errorf("page %d has no marker", i)
		}
		if len(c) > 32<<10 {
			t.Errorf("page %d holds %d bytes, more than maxResultBytes", i, len(c))
		}
		got.WriteString(c)
	}
	if got.String() != full {
		t.Errorf("the pages joined (%d bytes) are not the child's answer (%d bytes)", got.Len(), len(full))
	}
	// The full output is in the child's log.
	s.Log.Flush()
	starts := testutil.Decoded[session.SubagentStart](t, loadEvents(t, s.Log.Path()), session.TypeSubagentStart)
	child := loadEvents(t, filepath.Join(f.h.SessionsDir(), starts[0].ChildSession, session.FileName))
	msgs := testutil.Decoded[session.AssistantMessage](t, child, session.TypeAssistantMessage)
	if len(msgs) != 1 || msgs[0].Message.Text() != full {
		t.Errorf("the child's log does not hold its full answer")
	}
}

// Acceptance 1 and 4 (acp): the real TypeScript-SDK child, continued
// twice. While idle its process is kept and the follow-up goes to the same
// session; after its idle teardown (no process left) the agent is started
// again and the session loaded (session/load), whose replay never counts
// as output — or, when the agent does not offer loadSession, the result is
// a clear error.
func TestContinueACPChild(t *testing.T) {
	script := `
replies:
  - match: delegate-cont
    toolCalls: [{id: p1, name: subagent, arguments: {description: count, prompt: ACP-ONE, agent: acper}}]
  - {match: "turn 1 after", text: parent one}
  - match: go-two
    toolCalls: [{id: p2, name: subagent, arguments: {description: count on, prompt: ACP-TWO, continue: $CHILD}}]
  - {match: "turn 2 after", text: parent two}
  - match: go-three
    toolCalls: [{id: p3, name: subagent, arguments: {description: count more, prompt: ACP-THREE, continue: $CHILD}}]
  - {match: "turn 3 after", text: parent three}
  - {match: not-continuable, text: parent saw the error, repeat: true}
`
	three := []string{"turn 1 after []", "turn 2 after [ACP-ONE]", "turn 3 after [ACP-ONE | ACP-TWO]"}
	notCont := "Error: subagent run failed\nDiagnostic: Subagent failure (provider: acp; stage: load-session; category: not-continuable; stop reason: error)"
	for _, tc := range []struct {
		name, load, idle string
		want             []string
	}{
		{"kept while idle", "", "10m", three},
		{"session/load after teardown", "1", "1ms", three},
		{"no loadSession after teardown", "", "1ms", []string{three[0], notCont, notCont}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nm := testutil.Peers(t)
			sdkPath := filepath.Join(nm, "@agentclientprotocol", "sdk", "dist", "v1", "stable", "acp.js")
			child := filepath.Join(testutil.RepoRoot(t), "internal", "subagent", "acpchild", "testdata", "child.mjs")
			mark := testutil.MarkChildren(t)
			markKey, markVal, _ := strings.Cut(mark, "=")
			agentFile := fmt.Sprintf("---\nname: acper\ndescription: an acp child\nprovider: acp\ncommand: node\nargs: [%q]\n"+
				"env: {ACP_SDK_PATH: %q, ACP_SCENARIO: history, ACP_HISTORY_DIR: %q, ACP_LOAD: %q, %s: %q}\n---\n",
				child, sdkPath, ".acp-history", tc.load, markKey, markVal) // in the workspace: the sandbox lets it write there
			f := newFixture(t, script, map[string]string{
				".reins/agents/acper.md": agentFile,
				".reins/config.yaml":     "subagents: {idleTimeout: " + tc.idle + "}\n",
			})
			s := f.session(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			id := ""
			for i, prompt := range []string{"delegate-cont", "go-two", "go-three"} {
				if tc.idle != "10m" && i > 0 {
					waitFor(t, "idle teardown", func() bool {
						return s.Subagents.Kept() == 0 && len(testutil.LeftBehind(markVal, 0)) == 0
					})
				}
				res := s.Run(ctx, prompt+"\nchild: "+id)
				results := toolResults(t, s)
				if res.Reason != session.ReasonCompleted || len(results) != i+1 {
					t.Fatalf("turn %d %+v, results %+v", i, res, results)
				}
				if i == 0 {
					id = childLine(t, results[0].Content)
					if tc.idle == "10m" && s.Subagents.Kept() != 1 {
						t.Errorf("kept %d: the idle ACP child is not kept", s.Subagents.Kept())
					}
				}
				if got := results[i].Content; got != tc.want[i]+"\nchild: "+id {
					t.Errorf("result %d = %q, want %q and the child line", i, got, tc.want[i])
				}
			}
		})
	}
}

// Acceptance 2: seed 000's cases hold for continuations. A continuation
// whose last step (tool calls only) is cut by max-tokens reports the text
// before it; a max-tokens cut reports its partial text; a continuation
// that produces nothing (an empty completion, a killed run) reports no
// lastAssistantMessage at all — never the earlier run's answer.
func TestContinuationSeedCases(t *testing.T) {
	script := `
replies:
  - match: seed-cases
    toolCalls: [{id: p1, name: subagent, arguments: {description: base, prompt: S-ONE, agent: counter}}]
  - {match: S-ONE, text: base answer}
  - match: base answer
    toolCalls: [{id: p2, name: subagent, arguments: {description: cut, prompt: S-CUT, continue: $CHILD}}]
  - match: S-CUT
    text: partial cont
    toolCalls: [{id: c1, name: read, arguments: {path: a.txt}}]
  - match: FILE-CONTENT
    toolCalls: [{id: c2, name: read, arguments: {path: a.txt}}]
    finish: length
  - match: partial cont
    toolCalls: [{id: p3, name: subagent, arguments: {description: len, prompt: S-LEN, continue: $CHILD}}]
  - {match: S-LEN, text: cut text, finish: length}
  - match: cut text
    toolCalls: [{id: p4, name: subagent, arguments: {description: empty, prompt: S-EMPTY, continue: $CHILD}}]
  - {match: S-EMPTY, fault: empty}
  - match: EMPTY_RESPONSE
    toolCalls: [{id: p5, name: subagent, arguments: {description: stall, prompt: S-STALL, continue: $CHILD, run_in_background: true}}]
  - {match: S-STALL, fault: stall}
  - match: Started background job job-1
    toolCalls: [{id: p6, name: job_kill, arguments: {id: job-1}}]
  - {match: job job-1 killed, text: killed it}
  - {match: "status: killed", text: noted}
`
	f := newFixture(t, script, map[string]string{
		".reins/agents/counter.md": inprocAgent("counter", "COUNTER-CHILD", ""),
		"a.txt":                    "FILE-CONTENT\n",
	})
	s := f.session(t)
	if res := s.Run(context.Background(), "seed-cases"); res.Reason != session.ReasonCompleted {
		t.Fatalf("parent turn %+v", res)
	}
	s.Close()
	events := loadEvents(t, s.Log.Path())
	results := testutil.Decoded[session.ToolResult](t, events, session.TypeToolResult)
	id := childLine(t, results[0].Content)
	wantResults := []string{
		"base answer",
		"Error: subagent run hit its token limit before finishing\nPartial output before the run ended:\npartial cont",
		"Error: subagent run hit its token limit before finishing\nPartial output before the run ended:\ncut text",
		"Error: subagent run failed\nDiagnostic: Subagent failure (provider: inprocess; stage: run; category: EMPTY_RESPONSE; stop reason: error)",
	}
	for i, want := range wantResults {
		if results[i].Content != want+"\nchild: "+id {
			t.Errorf("result %d = %q, want %q and the child line", i, results[i].Content, want)
		}
	}
	var ends []session.Event
	for _, e := range events {
		if e.Type == session.TypeSubagentEnd {
			ends = append(ends, e)
		}
	}
	if len(ends) != 5 {
		t.Fatalf("%d subagent/end, want 5", len(ends))
	}
	for i, want := range []struct{ stop, last string }{
		{"completed", "base answer"}, {"max-tokens", "partial cont"}, {"max-tokens", "cut text"}, {"error", ""}, {"aborted", ""},
	} {
		var d session.SubagentEnd
		if err := ends[i].Decode(&d); err != nil {
			t.Fatal(err)
		}
		last := ""
		if d.LastAssistantMessage != nil {
			last = d.LastAssistantMessage.Text()
		}
		if d.StopReason != want.stop || last != want.last {
			t.Errorf("run %d end: stop %q, last %q; want %q, %q", i, d.StopReason, last, want.stop, want.last)
		}
		if want.last == "" && strings.Contains(string(ends[i].Data), "lastAssistantMessage") {
			t.Errorf("run %d end %s: lastAssistantMessage present for a run that produced nothing", i, ends[i].Data)
		}
		if wantC := map[bool]string{true: "", false: id}[i == 0]; d.Continues != wantC {
			t.Errorf("run %d continues %q, want %q", i, d.Continues, wantC)
		}
	}
	users := userMessages(t, events)
	if n := users[len(users)-1]; !strings.Contains(n, "[status: killed]") || lastLineOf(n) != "child: "+id {
		t.Errorf("the killed continuation's notice %q", n)
	}
}

func lastLineOf(s string) string { return s[strings.LastIndex(s, "\n")+1:] }

// fork: true starts an in-process child whose conversation is a copy of
// the parent's so far; the parent's log gets nothing of the fork's but
// its subagent events; after its idle teardown the fork resumes from its
// own log with the copied conversation. A fork of an out-of-process agent
// is refused.
func TestForkChild(t *testing.T) {
	script := `
replies:
  - match: fork-it
    toolCalls: [{id: p1, name: subagent, arguments: {description: forked look, prompt: FORK-TASK, fork: true}}]
  - {match: FORK-TASK, text: fork answer}
  - {match: fork answer, text: parent one}
  - match: go-on-fork
    toolCalls: [{id: p2, name: subagent, arguments: {description: fork again, prompt: FORK-AGAIN, continue: $CHILD}}]
  - {match: FORK-AGAIN, text: fork again answer}
  - {match: fork again answer, text: parent two}
  - match: fork-remote
    toolCalls: [{id: p3, name: subagent, arguments: {description: bad fork, prompt: X, fork: true, agent: remote}}]
  - {match: in-process agent, text: parent three}
`
	f := newFixture(t, script, map[string]string{
		".reins/config.yaml":      "subagents: {idleTimeout: 1ms}\n",
		".reins/agents/remote.md": "---\nname: remote\ndescription: not in process\nprovider: acp\ncommand: nothing-here\n---\n",
	})
	s := f.session(t)
	if res := s.Run(context.Background(), "fork-it with SECRET-CONTEXT-42"); res.Reason != session.ReasonCompleted {
		t.Fatalf("turn 1 %+v", res)
	}
	id := childLine(t, toolResults(t, s)[0].Content)
	waitFor(t, "idle teardown", func() bool { return s.Subagents.Kept() == 0 })
	if res := s.Run(context.Background(), "go-on-fork\nchild: "+id); res.Reason != session.ReasonCompleted {
		t.Fatalf("turn 2 %+v", res)
	}
	if res := s.Run(context.Background(), "fork-remote"); res.Reason != session.ReasonCompleted {
		t.Fatalf("turn 3 %+v", res)
	}
	results := toolResults(t, s)
	if results[0].Content != "fork answer\nchild: "+id || results[1].Content != "fork again answer\nchild: "+id {
		t.Errorf("fork results %+v", results)
	}
	if r := results[2]; !r.IsError || !strings.Contains(r.Content, "fork needs an in-process agent") {
		t.Errorf("fork of an acp agent: %+v", r)
	}
	var forkReqs []string
	for _, r := range f.srv.Requests() {
		if strings.Contains(r.Last, "FORK-TASK") || strings.Contains(r.Last, "FORK-AGAIN") {
			forkReqs = append(forkReqs, string(r.Body))
		}
	}
	if len(forkReqs) != 2 {
		t.Fatalf("%d fork requests", len(forkReqs))
	}
	wantHistory(t, forkReqs[0], "SECRET-CONTEXT-42", "You are the forked subagent", "FORK-TASK")
	wantHistory(t, forkReqs[1], "SECRET-CONTEXT-42", "You are the forked subagent", "FORK-TASK", "fork answer", "FORK-AGAIN")
	s.Log.Flush()
	events := loadEvents(t, s.Log.Path())
	if users := userMessages(t, events); len(users) != 3 {
		t.Errorf("the parent's log holds %d user messages, want its own 3: %q", len(users), users)
	}
	for _, e := range events {
		if e.Type == session.TypeToolResult && strings.Contains(string(e.Data), "forked subagent") {
			t.Errorf("the fork wrote into the parent's log: %s", e.Data)
		}
	}
}

// A continuation's usage is its own: a kept child's grandchildren of an
// earlier run are not counted again.
func TestContinuationUsageIsItsOwn(t *testing.T) {
	script := `
replies:
  - match: grand-test
    toolCalls: [{id: p1, name: subagent, arguments: {description: with grandchild, prompt: C-ONE, agent: counter}}]
  - match: C-ONE
    toolCalls: [{id: c1, name: subagent, arguments: {description: grandchild, prompt: G-ONE}}]
    usage: {input: 5, output: 1}
  - {match: G-ONE, text: g done, usage: {input: 1000, output: 100}}
  - {match: g done, text: c one done, usage: {input: 10, output: 1}}
  - match: c one done
    toolCalls: [{id: p2, name: subagent, arguments: {description: again, prompt: C-TWO, continue: $CHILD}}]
  - {match: C-TWO, text: c two done, usage: {input: 20, output: 2}}
  - {match: c two done, text: parent done}
`
	f := newFixture(t, script, map[string]string{".reins/agents/counter.md": inprocAgent("counter", "COUNTER-CHILD", "")})
	s := f.session(t)
	if res := s.Run(context.Background(), "grand-test"); res.Reason != session.ReasonCompleted {
		t.Fatalf("parent turn %+v", res)
	}
	s.Log.Flush()
	ends := testutil.Decoded[session.SubagentEnd](t, loadEvents(t, s.Log.Path()), session.TypeSubagentEnd)
	if len(ends) != 2 || ends[0].Usage == nil || ends[1].Usage == nil {
		t.Fatalf("ends %+v", ends)
	}
	if u := *ends[0].Usage; u.InputTokens != 5+1000+10 || u.OutputTokens != 1+100+1 {
		t.Errorf("first run usage %+v, want its turns' and its grandchild's", u)
	}
	if u := *ends[1].Usage; u.InputTokens != 20 || u.OutputTokens != 2 {
		t.Errorf("continuation usage %+v, want 20/2: its own only", u)
	}
}
