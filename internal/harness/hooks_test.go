package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/internal/trust"
)

// hookFixture is a harness whose user home (HOME) and workspace hold the
// given files; the workspace is trusted when trusted is set (after the
// files are written, so they are pinned).
type hookFixture struct {
	h              *Harness
	url            string
	srv            *mock.Server
	home, ws, user string
}

func newHookFixture(t *testing.T, script string, user, ws map[string]string, trusted bool, env map[string]string) *hookFixture {
	t.Helper()
	sc, err := mock.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	url, srv, stop := mock.StartTest(sc)
	t.Cleanup(stop)
	f := &hookFixture{url: url, srv: srv, home: t.TempDir(), ws: t.TempDir(), user: t.TempDir()}
	writeFiles(t, f.user, user)
	writeFiles(t, f.ws, ws)
	if trusted {
		testutil.Trust(t, f.home, f.ws)
	}
	getenv := func(k string) string {
		if k == "HOME" {
			return f.user
		}
		return env[k]
	}
	f.h, err = New(Options{Home: f.home, Cwd: f.ws, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.h.Close() })
	return f
}

func (f *hookFixture) session(t *testing.T, perm tool.Permission) *Session {
	t.Helper()
	m, err := f.h.ResolveModel("openai/test", f.url)
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.h.NewSession(SessionOptions{Model: m, Permission: perm})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func hookRuns(t *testing.T, s *Session) []session.HookRun {
	t.Helper()
	s.Log.Flush()
	return testutil.Decoded[session.HookRun](t, loadEvents(t, s.Log.Path()), session.TypeHookRun)
}

// The user's Claude Code settings.json, as written for Claude Code: a
// Bash guard blocks git push (exit 2, stderr to the model), a Write|Edit
// hook rewrites the content and allows without asking, a PostToolUse hook
// adds context. Every run is a hook/run event.
func TestHooksFromClaudeSettings(t *testing.T) {
	const script = `
replies:
  - match: GO
    toolCalls:
      - {id: c1, name: bash, arguments: {command: "git push origin main"}}
      - {id: c2, name: write, arguments: {path: a.txt, content: "original"}}
  - match: "PostToolUse hook feedback"
    text: done
`
	settings := func() string {
		rewrite := `{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"allow\", \"updatedInput\": {\"file_path\": \"$CLAUDE_PROJECT_DIR/a.txt\", \"content\": \"REWRITTEN\"}}}`
		b, _ := json.Marshal(map[string]any{"hooks": map[string]any{
			"PreToolUse": []any{
				map[string]any{"matcher": "Bash", "hooks": []any{map[string]any{"type": "command", "command": `if grep -q '"git push'; then echo "no push without tests" >&2; exit 2; fi`}}},
				map[string]any{"matcher": "Write|Edit", "hooks": []any{map[string]any{"type": "command", "command": "cat >/dev/null; echo \"" + rewrite + "\""}}},
			},
			"PostToolUse": []any{
				map[string]any{"matcher": "Write", "hooks": []any{map[string]any{"type": "command", "command": `echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "formatter ran"}}'`}}},
			},
		}})
		return string(b)
	}
	f := newHookFixture(t, script, map[string]string{".claude/settings.json": settings()}, nil, false, nil)
	ws := f.ws
	s := f.session(t, tool.WorkspaceWrite)
	asked := 0
	s.Agent.Env.Ask = func(context.Context, string, json.RawMessage) tool.Answer { asked++; return tool.Answer{} }
	s.Run(context.Background(), "GO")
	res := toolResults(t, s)
	if len(res) != 2 {
		t.Fatalf("results %+v", res)
	}
	if !res[0].IsError || !strings.Contains(res[0].Content, "blocked by a PreToolUse hook: no push without tests") {
		t.Errorf("git push: %+v", res[0])
	}
	if res[1].IsError || !strings.Contains(res[1].Content, "formatter ran") {
		t.Errorf("write: %+v", res[1])
	}
	if b, err := os.ReadFile(filepath.Join(ws, "a.txt")); err != nil || string(b) != "REWRITTEN" {
		t.Errorf("a.txt %q %v", b, err)
	}
	if asked != 0 {
		t.Errorf("asked %d times: the hook's allow spares the question", asked)
	}
	runs := hookRuns(t, s)
	if len(runs) != 3 || runs[0].Decision != "deny" || runs[0].Tool != "Bash" || runs[0].Exit != 2 || !runs[0].Confined ||
		runs[1].Decision != "allow" || len(runs[1].Input) == 0 || runs[2].Event != "PostToolUse" || runs[2].ToModel != "formatter ran" {
		t.Errorf("hook/run events %+v", runs)
	}
}

// A hook's allow never lifts the permission mode: a read-only session
// still refuses the write.
func TestHookAllowKeepsTheMode(t *testing.T) {
	const script = `
replies:
  - match: GO
    toolCalls:
      - {id: c1, name: write, arguments: {path: a.txt, content: "x"}}
  - match: "not permitted"
    text: done
`
	allow := `{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "echo '{\"hookSpecificOutput\": {\"permissionDecision\": \"allow\"}}'"}]}]}}`
	f := newHookFixture(t, script, map[string]string{".claude/settings.json": allow}, nil, false, nil)
	s := f.session(t, tool.ReadOnly)
	s.Run(context.Background(), "GO")
	res := toolResults(t, s)
	if len(res) != 1 || !res[0].IsError || !strings.Contains(res[0].Content, "not permitted in read-only") {
		t.Errorf("results %+v", res)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "a.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a.txt written: %v", err)
	}
}

// Project hooks run only from a trusted folder, and only with the
// content the user approved: an untrusted folder's are ignored (and named
// in the notice); a settings file planted after the user trusted the
// folder stops reins naming it.
func TestProjectHooksNeedTrustAndPins(t *testing.T) {
	const script = "replies:\n  - match: GO\n    text: done\n"
	planted := `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch pwned"}]}], "PreToolUse": [{"hooks": [{"type": "command", "command": "touch pwned"}]}]}}`
	f := newHookFixture(t, script, nil, map[string]string{".claude/settings.json": planted}, false, nil)
	if len(f.h.Hooks.Hooks) != 0 || !strings.Contains(f.h.UntrustedNotice(), ".claude/settings.json") {
		t.Errorf("untrusted: hooks %+v, notice %q", f.h.Hooks.Hooks, f.h.UntrustedNotice())
	}
	// Trusted with no settings; then the settings appear (a model's write, a pull).
	g := newHookFixture(t, script, nil, map[string]string{"README": "x"}, true, nil)
	g.h.Close()
	writeFiles(t, g.ws, map[string]string{".claude/settings.local.json": planted})
	_, err := New(Options{Home: g.home, Cwd: g.ws, Getenv: func(k string) string { return "" }})
	var ue *trust.UnpinnedError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "settings.local.json") {
		t.Fatalf("planted settings: err %v", err)
	}
	// Approved, they run.
	if _, err := trust.New(g.home).Trust(context.Background(), g.ws); err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{Home: g.home, Cwd: g.ws, Getenv: func(k string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if len(h.Hooks.Hooks) != 2 || h.Hooks.Hooks[0].User {
		t.Errorf("approved hooks %+v", h.Hooks.Hooks)
	}
	if _, err := os.Stat(filepath.Join(g.ws, "pwned")); err == nil {
		t.Error("a refused hook ran")
	}
}

// A hook that runs a workspace script (the model can edit it) runs in the
// tool sandbox: it cannot read a key from the environment nor reach the
// network when the session has it off. The user's own hook opted out with
// hooks.unconfined does both (the control).
func TestHookConfinement(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	t.Setenv("REINS_TEST_SECRET_TOKEN", "hunter2")
	checkSh := "#!/bin/bash\ncat >/dev/null\n" +
		"echo \"key=${REINS_TEST_SECRET_TOKEN:-none} project=$CLAUDE_PROJECT_DIR\" > \"$REINS_PROJECT_DIR/$1.txt\"\n" +
		"if (exec 3<>/dev/tcp/127.0.0.1/" + itoa(port) + ") 2>/dev/null; then echo net=yes >> \"$REINS_PROJECT_DIR/$1.txt\"; else echo net=no >> \"$REINS_PROJECT_DIR/$1.txt\"; fi\n"
	const script = `
replies:
  - match: GO
    toolCalls:
      - {id: c1, name: read, arguments: {path: check.sh}}
  - match: "cat"
    text: done
`
	for _, c := range []struct {
		name, config, want string
	}{
		{"confined", "", "key=none project=WS\nnet=no\n"},
		{"unconfined", "hooks: {unconfined: true}\n", "key=hunter2 project=WS\nnet=yes\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			settings := `{"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": "bash \"$CLAUDE_PROJECT_DIR/check.sh\" ` + c.name + `"}]}]}}`
			f := newHookFixture(t, script, map[string]string{".claude/settings.json": settings}, map[string]string{"check.sh": checkSh}, false, nil)
			if c.config != "" {
				writeFiles(t, f.home, map[string]string{"config.yaml": c.config})
				h, err := New(Options{Home: f.home, Cwd: f.ws, Getenv: func(k string) string {
					if k == "HOME" {
						return f.user
					}
					return ""
				}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { h.Close() })
				f.h = h
			}
			before := accepted.Load()
			s := f.session(t, tool.WorkspaceWrite)
			s.Run(context.Background(), "GO")
			b, err := os.ReadFile(filepath.Join(f.ws, c.name+".txt"))
			want := strings.ReplaceAll(c.want, "WS", f.ws)
			if err != nil || string(b) != want {
				t.Errorf("hook saw %q (%v), want %q; runs %+v", b, err, want, hookRuns(t, s))
			}
			if got := accepted.Load() - before; (got > 0) != strings.Contains(want, "net=yes") {
				t.Errorf("listener accepted %d connections", got)
			}
		})
	}
	// A project's config cannot let hooks out.
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{".reins/config.yaml": "hooks: {unconfined: true}\n"})
	home := t.TempDir()
	testutil.Trust(t, home, ws)
	if _, err := New(Options{Home: home, Cwd: ws, Getenv: func(string) string { return "" }}); err == nil || !strings.Contains(err.Error(), "hooks.unconfined") {
		t.Errorf("project hooks.unconfined: %v", err)
	}
}

// The loop's events: UserPromptSubmit adds context before the prompt (and
// a blocking one keeps the prompt from the model), SessionStart's context
// reaches the first request, a Stop hook that always blocks continues the
// turn a bounded number of times with stop_hook_active set after the
// first, and SessionEnd runs when the session closes.
func TestLoopHooks(t *testing.T) {
	const script = `
replies:
  - match: "Stop hook"
    text: again
    repeat: true
  - match: GO
    text: first answer
    repeat: true
`
	settings := `{"hooks": {
	  "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo branch main is protected"}]}],
	  "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "grep -q FORBIDDEN && { echo no secrets in prompts >&2; exit 2; }; echo '{\"hookSpecificOutput\": {\"hookEventName\": \"UserPromptSubmit\", \"additionalContext\": \"sprint 12\"}}'"}]}],
	  "Stop": [{"hooks": [{"type": "command", "command": "cat >> \"$CLAUDE_PROJECT_DIR/stops.jsonl\"; echo >> \"$CLAUDE_PROJECT_DIR/stops.jsonl\"; echo tests still fail >&2; exit 2"}]}],
	  "SessionEnd": [{"hooks": [{"type": "command", "command": "cat > \"$CLAUDE_PROJECT_DIR/end.json\""}]}]
	}}`
	f := newHookFixture(t, script, map[string]string{".claude/settings.json": settings}, nil, false, nil)
	s := f.session(t, tool.WorkspaceWrite)
	res := s.Run(context.Background(), "GO")
	if res.Reason != session.ReasonCompleted {
		t.Fatalf("turn %+v", res)
	}
	reqs := f.srv.Requests()
	if len(reqs) != 1+5 {
		t.Fatalf("%d requests, want 1 and 5 Stop continuations", len(reqs))
	}
	first := string(reqs[0].Body)
	for _, want := range []string{"branch main is protected", "sprint 12", "GO"} {
		if !strings.Contains(first, want) {
			t.Errorf("first request lacks %q", want)
		}
	}
	if !strings.Contains(string(reqs[1].Body), "tests still fail") {
		t.Errorf("the Stop hook's reason did not reach the model")
	}
	b, _ := os.ReadFile(filepath.Join(f.ws, "stops.jsonl"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 5 || !strings.Contains(lines[0], `"stop_hook_active":false`) || !strings.Contains(lines[1], `"stop_hook_active":true`) || !strings.Contains(lines[0], `"hook_event_name":"Stop"`) {
		t.Errorf("Stop inputs %q", lines)
	}
	n := len(reqs)
	res = s.Run(context.Background(), "FORBIDDEN GO")
	if res.Failure == nil || res.Failure.Code != "HOOK_BLOCKED" || len(f.srv.Requests()) != n {
		t.Errorf("blocked prompt: %+v, %d requests", res, len(f.srv.Requests())-n)
	}
	s.Close()
	if b, err := os.ReadFile(filepath.Join(f.ws, "end.json")); err != nil || !strings.Contains(string(b), `"hook_event_name":"SessionEnd"`) {
		t.Errorf("SessionEnd input %q %v", b, err)
	}
}

// A hook's allow spares the question and nothing more: a deny rule still
// refuses; a hook's ask asks where workspace-write would not, and refuses
// where nobody can be asked.
func TestHookAllowAndAskAgainstRules(t *testing.T) {
	const script = `
replies:
  - match: GO
    toolCalls:
      - {id: c1, name: write, arguments: {path: a.txt, content: "x"}}
  - match: "call"
    text: done
    repeat: true
`
	hook := func(decision string) string {
		return `{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "echo '{\"hookSpecificOutput\": {\"permissionDecision\": \"` + decision + `\"}}'"}]}]}}`
	}
	t.Run("deny rule over allow", func(t *testing.T) {
		f := newHookFixture(t, script, map[string]string{".claude/settings.json": hook("allow")}, nil, false, nil)
		writeFiles(t, f.home, map[string]string{"config.yaml": "permissions: {deny: [write]}\n"})
		h, err := New(Options{Home: f.home, Cwd: f.ws, Getenv: func(k string) string {
			if k == "HOME" {
				return f.user
			}
			return ""
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		f.h = h
		s := f.session(t, tool.WorkspaceWrite)
		s.Run(context.Background(), "GO")
		if res := toolResults(t, s); len(res) != 1 || !strings.Contains(res[0].Content, "denied by the permission rule") {
			t.Errorf("results %+v", res)
		}
	})
	t.Run("ask with nobody to ask", func(t *testing.T) {
		f := newHookFixture(t, script, map[string]string{".claude/settings.json": hook("ask")}, nil, false, nil)
		s := f.session(t, tool.WorkspaceWrite) // reins run: no approval hook, writes run unasked
		s.Run(context.Background(), "GO")
		if res := toolResults(t, s); len(res) != 1 || !strings.Contains(res[0].Content, "nobody can be asked") {
			t.Errorf("results %+v", res)
		}
	})
	t.Run("ask asks", func(t *testing.T) {
		// read is never asked about; the hook's ask makes it.
		const script = `
replies:
  - match: GO
    toolCalls:
      - {id: c1, name: read, arguments: {path: a.txt}}
  - match: "call"
    text: done
    repeat: true
`
		f := newHookFixture(t, script, map[string]string{".claude/settings.json": hook("ask")}, map[string]string{"a.txt": "x"}, false, nil)
		s := f.session(t, tool.WorkspaceWrite)
		asked := 0
		s.Agent.Env.Ask = func(context.Context, string, json.RawMessage) tool.Answer { asked++; return tool.Answer{OK: true} }
		s.Run(context.Background(), "GO")
		if res := toolResults(t, s); len(res) != 1 || res[0].IsError || asked != 1 {
			t.Errorf("results %+v, asked %d", res, asked)
		}
	})
}

// A child's Stop runs the SubagentStop hooks, not Stop: a SubagentStop
// hook (matched against the agent type, as in Claude Code) blocks once and
// the child goes on with its reason; the parent's Stop hook runs for the
// parent's turn only; one for another agent type never runs. The input is
// Claude Code's SubagentStop input: the parent's session_id and
// transcript_path, the child as agent_id, agent_type and
// agent_transcript_path, stop_hook_active and last_assistant_message.
func TestSubagentStopHooks(t *testing.T) {
	const script = `
replies:
  - match: "[Stop hook] run the child tests"
    text: child second
  - match: child second
    text: parent done
  - match: CHILD-TASK
    text: child first
  - match: GO
    toolCalls: [{id: p1, name: subagent, arguments: {description: check, prompt: CHILD-TASK}}]
`
	record := func(file string) string {
		return `in=$(cat); printf '%s\n' "$in" >> "$CLAUDE_PROJECT_DIR/` + file + `"; `
	}
	b, _ := json.Marshal(map[string]any{"hooks": map[string]any{
		"Stop": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": record("stops.jsonl")}}}},
		"SubagentStop": []any{
			map[string]any{"matcher": "general", "hooks": []any{map[string]any{"type": "command",
				"command": record("substops.jsonl") + `case "$in" in *'"stop_hook_active":false'*) echo run the child tests >&2; exit 2;; esac`}}},
			map[string]any{"matcher": "reviewer", "hooks": []any{map[string]any{"type": "command", "command": record("reviewer.jsonl")}}},
		},
	}})
	f := newHookFixture(t, script, map[string]string{".claude/settings.json": string(b)}, nil, false, nil)
	s := f.session(t, tool.WorkspaceWrite)
	if res := s.Run(context.Background(), "GO"); res.Reason != session.ReasonCompleted {
		t.Fatalf("turn %+v", res)
	}
	lines := func(name string) []map[string]any {
		b, _ := os.ReadFile(filepath.Join(f.ws, name))
		var out []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l == "" {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("%s: %q: %v", name, l, err)
			}
			out = append(out, m)
		}
		return out
	}
	s.Log.Flush()
	starts := testutil.Decoded[session.SubagentStart](t, loadEvents(t, s.Log.Path()), session.TypeSubagentStart)
	if len(starts) != 1 {
		t.Fatalf("subagent starts %+v", starts)
	}
	childLog := filepath.Join(f.h.SessionsDir(), starts[0].ChildSession, session.FileName)

	stops := lines("stops.jsonl")
	if len(stops) != 1 || stops[0]["hook_event_name"] != "Stop" || stops[0]["session_id"] != s.Log.Header().ID ||
		stops[0]["last_assistant_message"] != "parent done" || stops[0]["agent_id"] != nil {
		t.Errorf("Stop ran %d times (the parent's turn only), inputs %v", len(stops), stops)
	}
	if r := lines("reviewer.jsonl"); len(r) != 0 {
		t.Errorf("a SubagentStop hook for agent type reviewer ran for a general child: %v", r)
	}
	subs := lines("substops.jsonl")
	if len(subs) != 2 {
		t.Fatalf("SubagentStop ran %d times, want 2 (blocked, then let stop): %v", len(subs), subs)
	}
	want := map[string]any{
		"hook_event_name": "SubagentStop", "session_id": s.Log.Header().ID, "transcript_path": s.Log.Path(),
		"cwd": f.ws, "permission_mode": "default",
		"agent_id": starts[0].ChildSession, "agent_type": "general", "agent_transcript_path": childLog,
		"stop_hook_active": false, "last_assistant_message": "child first",
	}
	for k, v := range want {
		if subs[0][k] != v {
			t.Errorf("first SubagentStop input %s = %v, want %v", k, subs[0][k], v)
		}
	}
	if subs[1]["stop_hook_active"] != true || subs[1]["last_assistant_message"] != "child second" {
		t.Errorf("second SubagentStop input %v", subs[1])
	}
	// The child went on with the hook's reason; the parent got its
	// second answer.
	child := loadEvents(t, childLog)
	var notices []string
	for _, m := range testutil.Decoded[session.UserMessage](t, child, session.TypeUserMessage) {
		if m.Notice == session.NoticeHook {
			notices = append(notices, m.Message.Content[0].Text)
		}
	}
	if len(notices) != 1 || notices[0] != "[Stop hook] run the child tests" {
		t.Errorf("child hook notices %q", notices)
	}
	runs := testutil.Decoded[session.HookRun](t, child, session.TypeHookRun)
	if len(runs) != 2 || runs[0].Event != "SubagentStop" || runs[0].Decision != "block" || runs[1].Decision != "" {
		t.Errorf("child hook/run events %+v", runs)
	}
	if res := toolResults(t, s); len(res) != 1 || !strings.Contains(res[0].Content, "child second") {
		t.Errorf("parent's subagent result %+v", res)
	}
}

// A `Write|Edit` PreToolUse guard written for Claude Code blocks every
// reins tool that writes files, whatever the call looks like: write,
// edit, multi_edit and each kind of apply_patch (add, update, delete,
// move, several files). Every tool of a session is either one of them or
// named here as one that writes no file through its arguments, so a new
// file tool cannot slip past the guard unnoticed.
func TestWriteEditGuardCatchesEveryFileTool(t *testing.T) {
	patch := func(body string) map[string]any {
		return map[string]any{"input": "*** Begin Patch\n" + body + "*** End Patch\n"}
	}
	type fileCase struct {
		tool string
		args map[string]any
	}
	cases := []fileCase{
		{"write", map[string]any{"path": "new.txt", "content": "x"}},
		{"write", map[string]any{"path": "a.txt", "content": "overwritten"}},
		{"edit", map[string]any{"path": "a.txt", "old_string": "one", "new_string": "two"}},
		{"multi_edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"old_string": "one", "new_string": "two"}}}},
		{"apply_patch", patch("*** Add File: new.txt\n+x\n")},
		{"apply_patch", patch("*** Update File: a.txt\n@@\n-one\n+two\n")},
		{"apply_patch", patch("*** Delete File: a.txt\n")},
		{"apply_patch", patch("*** Update File: a.txt\n*** Move to: moved.txt\n@@\n-one\n+two\n")},
		{"apply_patch", patch("*** Update File: a.txt\n@@\n-one\n+two\n*** Add File: sub/new.txt\n+x\n")},
		{"apply_patch", map[string]any{"input": "not a patch at all"}},
	}
	// The tools that take no file to write: shell (a Bash guard's
	// business, as in Claude Code), reading, delegation and the
	// session's own state. worktree's merge applies a child's change,
	// whose writes ran through the child's own tools and hooks.
	nonWriters := []string{"read", "grep", "glob", "ls", "bash", "bash_output", "bash_kill", "subagent", "subagent_output", "job_output", "job_list", "job_kill", "todo", "webfetch", "skill", "worktree"}
	replies := []any{map[string]any{"match": "blocked by a PreToolUse hook", "text": "blocked", "repeat": true}}
	for i, c := range cases {
		args, _ := json.Marshal(c.args)
		replies = append(replies, map[string]any{"match": fmt.Sprintf("CASE-%d-", i), "toolCalls": []any{map[string]any{"id": fmt.Sprintf("c%d", i), "name": c.tool, "arguments": json.RawMessage(args)}}})
	}
	script, _ := json.Marshal(map[string]any{"replies": replies})
	settings := `{"hooks": {"PreToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "cat >> \"$CLAUDE_PROJECT_DIR/../seen.jsonl\"; echo >> \"$CLAUDE_PROJECT_DIR/../seen.jsonl\"; echo no writes today >&2; exit 2"}]}]}}`
	f := newHookFixture(t, string(script), map[string]string{".claude/settings.json": settings}, map[string]string{"a.txt": "one\n"}, false, nil)
	m, err := f.h.ResolveModel("openai/test", f.url)
	if err != nil {
		t.Fatal(err)
	}
	// apply_patch is in the codex profile, the other file tools in the
	// default one: a session of each.
	sessions := map[tool.Profile]*Session{}
	names := map[string]bool{}
	for _, p := range []tool.Profile{tool.ProfileDefault, tool.ProfileCodex} {
		s, err := f.h.NewSession(SessionOptions{Model: m, Permission: tool.FullAccess, ToolProfile: p})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		sessions[p] = s
		for _, n := range s.Agent.Tools.Names() {
			names[n] = true
		}
	}
	for _, b := range tool.Builtins() {
		names[b.Spec().Name] = true
	}
	for name := range names {
		writes := slices.ContainsFunc(cases, func(c fileCase) bool { return c.tool == name })
		if !writes && !slices.Contains(nonWriters, name) {
			t.Errorf("tool %s is neither a file tool of this test nor named as one that writes no file", name)
		}
	}
	for i, c := range cases {
		s := sessions[tool.ProfileDefault]
		if c.tool == "apply_patch" {
			s = sessions[tool.ProfileCodex]
		}
		if res := s.Run(context.Background(), fmt.Sprintf("CASE-%d-", i)); res.Reason != session.ReasonCompleted {
			t.Errorf("case %d (%s): turn %+v %+v", i, c.tool, res, res.Failure)
		}
	}
	res := append(toolResults(t, sessions[tool.ProfileDefault]), toolResults(t, sessions[tool.ProfileCodex])...)
	if len(res) != len(cases) {
		t.Fatalf("%d results for %d cases", len(res), len(cases))
	}
	for i, r := range res {
		if !r.IsError || !strings.Contains(r.Content, "no writes today") {
			t.Errorf("case %d (%s %v) was not blocked: %+v", i, cases[i].tool, cases[i].args, r)
		}
	}
	seen, _ := os.ReadFile(filepath.Join(f.ws, "..", "seen.jsonl"))
	for _, want := range []string{`"tool_name":"Write"`, `"tool_name":"Edit"`, `"tool_name":"MultiEdit"`, `"reins_delete":true`, `"reins_moved_from"`} {
		if !strings.Contains(string(seen), want) {
			t.Errorf("no hook input with %s:\n%s", want, seen)
		}
	}
	if b, err := os.ReadFile(filepath.Join(f.ws, "a.txt")); err != nil || string(b) != "one\n" {
		t.Errorf("a.txt %q %v", b, err)
	}
	for _, p := range []string{"new.txt", "moved.txt", "sub"} {
		if _, err := os.Stat(filepath.Join(f.ws, p)); err == nil {
			t.Errorf("%s was written", p)
		}
	}
}
