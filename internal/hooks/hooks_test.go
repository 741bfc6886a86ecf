package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tool"
)

func TestMatchers(t *testing.T) {
	for _, c := range []struct {
		matcher, name string
		want          bool
	}{
		{"", "Bash", true},
		{"*", "mcp__git__push", true},
		{"Bash", "Bash", true},
		{"Bash", "BashOutput", false}, // a plain name matches exactly
		{"Edit", "MultiEdit", false},
		{"Write|Edit", "Write", true},
		{"Write|Edit", "MultiEdit", true}, // unanchored, as in Claude Code
		{"Write|Edit", "Read", false},
		{"mcp__.*", "mcp__git__push", true},
		{"Notebook.*", "Bash", false},
	} {
		m, err := compileMatcher(c.matcher)
		if err != nil {
			t.Fatal(err)
		}
		if got := (Hook{match: m}).Matches(c.name); got != c.want {
			t.Errorf("matcher %q on %q: %v, want %v", c.matcher, c.name, got, c.want)
		}
	}
}

// Claude Code's settings shape: command hooks kept, prompt and http hooks
// and unknown events skipped with a warning naming the file, a bad
// regular expression warned about, the default and capped timeouts.
func TestParseSettings(t *testing.T) {
	src := `{"model": "x", "hooks": {
	  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "a.sh", "timeout": 5}, {"type": "prompt", "prompt": "judge"}]},
	                 {"matcher": "(", "hooks": [{"type": "command", "command": "never"}]}],
	  "Stop": [{"hooks": [{"type": "command", "command": "b.sh", "timeout": 100000}, {"type": "http", "url": "http://x"}]}],
	  "PermissionRequest": [{"hooks": [{"type": "command", "command": "c"}]}]
	}}`
	hs, warns, err := ParseSettings("/u/.claude/settings.json", []byte(src), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 2 || hs[0].Event != PreToolUse || hs[0].Command != "a.sh" || hs[0].Timeout != 5*time.Second || !hs[0].User ||
		hs[1].Event != Stop || hs[1].Timeout != MaxTimeout {
		t.Errorf("hooks %+v", hs)
	}
	if len(warns) != 4 {
		t.Fatalf("warnings %q", warns)
	}
	for _, want := range []string{"PermissionRequest", "not a valid regular expression", "prompt hook is skipped", "http hook is skipped"} {
		if !strings.Contains(strings.Join(warns, "\n"), want) {
			t.Errorf("warnings lack %q: %q", want, warns)
		}
	}
	if _, _, err := ParseSettings("f", []byte(`[1]`), false); err == nil {
		t.Error("a settings file that is not an object parsed")
	}
	if _, _, err := ParseSettings("f", []byte(`{"hooks": {"Stop": {"x": 1}}}`), false); err == nil {
		t.Error("a malformed hooks object parsed")
	}
}

// Every reins tool that writes files is shown to hooks as one of Claude
// Code's file-writing tools, with absolute file_path; a rewrite comes back
// in reins's names, relative inside the workspace.
func TestVocabulary(t *testing.T) {
	ws := "/w"
	for _, c := range []struct {
		name, args string
		tools      []string
		inputs     []string
	}{
		{"write", `{"path":"a.go","content":"x"}`, []string{"Write"}, []string{`{"content":"x","file_path":"/w/a.go"}`}},
		{"edit", `{"path":"/w/b.go","old_string":"a","new_string":"b"}`, []string{"Edit"}, []string{`{"file_path":"/w/b.go","new_string":"b","old_string":"a"}`}},
		{"multi_edit", `{"path":"c.go","edits":[]}`, []string{"MultiEdit"}, []string{`{"edits":[],"file_path":"/w/c.go"}`}},
		{"bash", `{"command":"ls","timeout":2,"background":true}`, []string{"Bash"}, []string{`{"command":"ls","run_in_background":true,"timeout":2000}`}},
		{"read", `{"path":"d"}`, []string{"Read"}, []string{`{"file_path":"/w/d"}`}},
		{"subagent", `{"description":"x","prompt":"y"}`, []string{"Task"}, []string{`{"description":"x","prompt":"y","subagent_type":"general"}`}},
		{"mcp__git__push", `{"a":1}`, []string{"mcp__git__push"}, []string{`{"a":1}`}},
		{"apply_patch", `{"input":"*** Begin Patch\n*** Add File: n.txt\n+hi\n*** Update File: o.txt\n@@\n-old\n+new\n*** Delete File: gone.txt\n*** End Patch"}`,
			[]string{"Write", "Edit", "Write"},
			[]string{`{"content":"hi\n","file_path":"/w/n.txt"}`, `{"file_path":"/w/o.txt","new_string":"new","old_string":"old"}`, `{"content":"","file_path":"/w/gone.txt","reins_delete":true}`}},
		{"apply_patch", `{"input":"garbage"}`, []string{"Edit"}, nil},
	} {
		calls := ToClaude(ws, c.name, json.RawMessage(c.args))
		if len(calls) != len(c.tools) {
			t.Errorf("%s: calls %+v", c.name, calls)
			continue
		}
		for i, call := range calls {
			if call.Tool != c.tools[i] {
				t.Errorf("%s: tool %s, want %s", c.name, call.Tool, c.tools[i])
			}
			if c.inputs != nil && string(call.Input) != c.inputs[i] {
				t.Errorf("%s: input %s, want %s", c.name, call.Input, c.inputs[i])
			}
		}
	}
	back, err := FromClaude(ws, "write", json.RawMessage(`{"file_path":"/w/sub/a.go","content":"y"}`))
	if err != nil || string(back) != `{"content":"y","path":"sub/a.go"}` {
		t.Errorf("write back %s %v", back, err)
	}
	back, err = FromClaude(ws, "bash", json.RawMessage(`{"command":"ls","timeout":3000,"description":"d","run_in_background":false}`))
	if err != nil || string(back) != `{"background":false,"command":"ls","timeout":3}` {
		t.Errorf("bash back %s %v", back, err)
	}
	if back, err := FromClaude(ws, "write", json.RawMessage(`{"file_path":"/etc/passwd","content":"y"}`)); err != nil || !strings.Contains(string(back), `"path":"/etc/passwd"`) {
		t.Errorf("outside path back %s %v", back, err)
	}
	if _, err := FromClaude(ws, "apply_patch", json.RawMessage(`{}`)); err == nil {
		t.Error("apply_patch rewrite translated")
	}
}

// runner is a Runner over hooks in ws, recording its events.
type runner struct {
	*Runner
	mu     sync.Mutex
	events []session.HookRun
}

func newRunner(t *testing.T, ws string, settings string, pol sandbox.Policy) *runner {
	t.Helper()
	hs, warns, err := ParseSettings("settings.json", []byte(settings), false)
	if err != nil || len(warns) > 0 {
		t.Fatal(err, warns)
	}
	r := &runner{}
	r.Runner = &Runner{
		Set: &Set{Hooks: hs}, SessionID: "s1", Transcript: filepath.Join(ws, "t.jsonl"), Cwd: ws, ProjectDir: ws,
		Policy: func() sandbox.Policy { return pol },
		Append: func(typ string, data any) {
			r.mu.Lock()
			defer r.mu.Unlock()
			if typ == session.TypeHookRun {
				r.events = append(r.events, data.(session.HookRun))
			}
		},
	}
	return r
}

func (r *runner) runs() []session.HookRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]session.HookRun(nil), r.events...)
}

func hookJSON(event, matcher, command string, timeout int) string {
	m, _ := json.Marshal(matcher)
	c, _ := json.Marshal(command)
	return `{"hooks": {"` + event + `": [{"matcher": ` + string(m) + `, "hooks": [{"type": "command", "command": ` + string(c) + `, "timeout": ` + itoa(timeout) + `}]}]}}`
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// A hook that hangs past its timeout, one that exits 1 and one that
// prints invalid JSON decide nothing: the call goes on, and the hook/run
// event says what went wrong.
func TestBrokenHooksNeverBreakTheCall(t *testing.T) {
	ws := t.TempDir()
	off := sandbox.Policy{Off: true, Mode: sandbox.FullAccess}
	for _, c := range []struct {
		name, command, problem string
		exit, timeout          int
	}{
		{"hang", "sleep 30", "timed out", -1, 1},
		{"exit 1", "echo oops >&2; exit 1", "", 1, 30},
		{"garbage", `echo '{"decision": "block", '`, "not valid JSON", 0, 30},
		{"crash", `sh -c 'kill -SEGV $$'`, "", 128 + 11, 30},
		{"flood", "head -c 5000000 /dev/zero | tr '\\0' x >&2; exit 1", "", 1, 30},
		{"leaves a child holding its output", "sleep 600 & echo started; exit 1", "", 1, 30},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRunner(t, ws, hookJSON("PreToolUse", "Bash", c.command, c.timeout), off)
			v := r.PreToolUse(context.Background(), "bash", json.RawMessage(`{"command":"ls"}`))
			if v.Block || v.Args != nil || v.Ask || v.Allow {
				t.Errorf("verdict %+v", v)
			}
			runs := r.runs()
			if len(runs) != 1 || runs[0].Exit != c.exit || !strings.Contains(runs[0].Problem, c.problem) || runs[0].Decision != "" {
				t.Fatalf("runs %+v", runs)
			}
			if len(runs[0].ToUser) > MaxText+200 {
				t.Errorf("%d bytes shown to the user", len(runs[0].ToUser))
			}
			if c.name == "exit 1" && !strings.Contains(runs[0].ToUser, "oops") {
				t.Errorf("exit 1's stderr is not shown to the user: %+v", runs[0])
			}
		})
	}
}

// Exit 2 blocks with stderr for the model; JSON deny, ask, allow,
// updatedInput and additionalContext are honoured; deny wins over allow.
func TestPreToolUseDecisions(t *testing.T) {
	ws := t.TempDir()
	off := sandbox.Policy{Off: true, Mode: sandbox.FullAccess}
	pre := func(settings, name, args string) (tool.PreVerdict, []session.HookRun) {
		r := newRunner(t, ws, settings, off)
		v := r.PreToolUse(tool.WithCallID(context.Background(), "c1"), name, json.RawMessage(args))
		return v, r.runs()
	}
	v, runs := pre(hookJSON("PreToolUse", "Bash", `grep -q 'git push' && { echo "no push without tests" >&2; exit 2; }; exit 0`, 10), "bash", `{"command":"git push"}`)
	if !v.Block || !strings.Contains(v.Reason, "no push without tests") || !tool.IsRefusal("bash", v.Reason) || runs[0].Decision != "deny" || runs[0].CallID != "c1" || runs[0].Tool != "Bash" {
		t.Errorf("exit 2: %+v %+v", v, runs)
	}
	v, _ = pre(hookJSON("PreToolUse", "Bash", `grep -q 'git push' && exit 2; exit 0`, 10), "bash", `{"command":"ls"}`)
	if v.Block {
		t.Errorf("ls blocked: %+v", v)
	}
	out := `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"file_path": "` + ws + `/b.txt", "content": "rewritten"}, "additionalContext": "house style applied"}}`
	v, runs = pre(hookJSON("PreToolUse", "Write|Edit", "cat >/dev/null; echo '"+out+"'", 10), "write", `{"path":"a.txt","content":"x"}`)
	if v.Block || !v.Allow || string(v.Args) != `{"content":"rewritten","path":"b.txt"}` || !strings.Contains(v.Context, "house style applied") || runs[0].Decision != "allow" || len(runs[0].Input) == 0 {
		t.Errorf("rewrite: %+v %+v", v, runs)
	}
	// The same guard sees apply_patch's write; a rewrite of it refuses the call.
	v, _ = pre(hookJSON("PreToolUse", "Write|Edit", "cat >/dev/null; echo '"+out+"'", 10), "apply_patch", `{"input":"*** Begin Patch\n*** Add File: n.txt\n+hi\n*** End Patch"}`)
	if !v.Block || !strings.Contains(v.Reason, "cannot apply the rewrite") {
		t.Errorf("apply_patch rewrite: %+v", v)
	}
	deny := `{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "secrets stay put"}}`
	ask := `{"hookSpecificOutput": {"permissionDecision": "ask"}}`
	both := `{"hooks": {"PreToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": ` + quote("echo '"+deny+"'") + `}, {"type": "command", "command": ` + quote(`echo '{"hookSpecificOutput": {"permissionDecision": "allow"}}'`) + `}]}]}}`
	v, _ = pre(both, "edit", `{"path":".env","old_string":"a","new_string":"b"}`)
	if !v.Block || !strings.Contains(v.Reason, "secrets stay put") {
		t.Errorf("deny over allow: %+v", v)
	}
	v, _ = pre(hookJSON("PreToolUse", "", "echo '"+ask+"'", 10), "read", `{"path":"x"}`)
	if !v.Ask || v.Block {
		t.Errorf("ask: %+v", v)
	}
	// The hook reads Claude Code's JSON on stdin.
	v, _ = pre(hookJSON("PreToolUse", "Edit", `cat > `+ws+`/stdin.json`, 10), "edit", `{"path":"e.go","old_string":"a","new_string":"b"}`)
	var in map[string]any
	b, _ := os.ReadFile(filepath.Join(ws, "stdin.json"))
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatal(err, string(b))
	}
	ti, _ := in["tool_input"].(map[string]any)
	if in["hook_event_name"] != "PreToolUse" || in["tool_name"] != "Edit" || in["session_id"] != "s1" || in["cwd"] != ws || in["tool_use_id"] != "c1" ||
		ti["file_path"] != filepath.Join(ws, "e.go") || ti["old_string"] != "a" || in["transcript_path"] == "" {
		t.Errorf("stdin %s", b)
	}
}

// PostToolUse: exit 2's stderr, a block's reason and additionalContext
// reach the model with the result; a failed call runs no PostToolUse.
func TestPostToolUse(t *testing.T) {
	ws := t.TempDir()
	off := sandbox.Policy{Off: true, Mode: sandbox.FullAccess}
	r := newRunner(t, ws, `{"hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [
		{"type": "command", "command": "echo lint failed >&2; exit 2"},
		{"type": "command", "command": "echo '{\"decision\": \"block\", \"reason\": \"fix the format\", \"hookSpecificOutput\": {\"hookEventName\": \"PostToolUse\", \"additionalContext\": \"formatted\"}}'"}]}]}}`, off)
	res := r.PostToolUse(context.Background(), "write", json.RawMessage(`{"path":"a","content":"x"}`), tool.Result{Content: "wrote 1 byte"})
	for _, want := range []string{"wrote 1 byte", "[PostToolUse hook feedback]", "lint failed", "fix the format", "formatted"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("result lacks %q: %q", want, res.Content)
		}
	}
	if n := len(r.runs()); n != 2 {
		t.Errorf("%d runs", n)
	}
	res = r.PostToolUse(context.Background(), "write", json.RawMessage(`{"path":"a","content":"x"}`), tool.Result{Content: "refused", IsError: true})
	if res.Content != "refused" || len(r.runs()) != 2 {
		t.Errorf("a failed call ran PostToolUse: %q", res.Content)
	}
}
