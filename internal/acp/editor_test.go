package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
	"github.com/reinsdev/reins/internal/tool"
	"go.uber.org/goleak"
)

// TestMain lets the test binary act as `reins acp` (REINS_ACP_SERVE=1):
// the editor test's TypeScript client spawns it as its agent.
func TestMain(m *testing.M) {
	if os.Getenv("REINS_ACP_SERVE") == "1" {
		os.Exit(serveForTest())
	}
	mark := testutil.Mark("acp")
	goleak.VerifyTestMain(m, goleak.Cleanup(testutil.ExitUnlessClean(mark)))
}

func serveForTest() int {
	h, err := harness.New(harness.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer h.Close()
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE) // as reins acp does
	perm := tool.Permission(os.Getenv("REINS_ACP_PERMISSION"))
	if err := Serve(context.Background(), Options{Base: h, Model: "mock/test", Permission: perm, Version: "test"}, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// The transcript editor.mjs prints.
type transcript struct {
	Connections []struct {
		Name  string
		Steps []step
		Exit  struct {
			Code   *int
			Signal *string
		}
	}
}

type step struct {
	Name   string
	Result json.RawMessage
	Error  *struct {
		Code    int
		Message string
		Data    json.RawMessage
	}
	Events []event
}

type event struct {
	Kind      string
	SessionID string
	Update    update
	Params    struct {
		SessionID string `json:"sessionId"`
		ToolCall  update `json:"toolCall"`
		Options   []struct {
			OptionID string `json:"optionId"`
			Kind     string
		}
	}
}

type update struct {
	SessionUpdate string `json:"sessionUpdate"`
	Content       json.RawMessage
	ToolCallID    string `json:"toolCallId"`
	Title         string
	Kind          string
	Status        string
	Locations     []struct{ Path string }
}

// text is a chunk's text.
func (u update) text() string {
	var c struct{ Text string }
	json.Unmarshal(u.Content, &c)
	return c.Text
}

// toolContent is a tool call's content list.
type toolContent struct {
	Type    string
	Path    string
	OldText *string `json:"oldText"`
	NewText string  `json:"newText"`
	Content struct{ Text string }
}

func (u update) toolContent() []toolContent {
	var c []toolContent
	json.Unmarshal(u.Content, &c)
	return c
}

func (s step) chunks(kind string) string {
	var b strings.Builder
	for _, e := range s.Events {
		if e.Kind == "update" && e.Update.SessionUpdate == kind {
			b.WriteString(e.Update.text())
		}
	}
	return b.String()
}

// call finds the tool call whose title starts with prefix.
func (s step) call(t *testing.T, prefix string) update {
	t.Helper()
	for _, e := range s.Events {
		if e.Kind == "update" && e.Update.SessionUpdate == "tool_call" && strings.HasPrefix(e.Update.Title, prefix) {
			return e.Update
		}
	}
	t.Fatalf("step %s: no tool call titled %q...; events: %+v", s.Name, prefix, s.Events)
	return update{}
}

// statuses is the status sequence of one tool call, with "permission"
// where the editor was asked about it.
func (s step) statuses(id string) []string {
	var out []string
	for _, e := range s.Events {
		switch {
		case e.Kind == "permission" && e.Params.ToolCall.ToolCallID == id:
			out = append(out, "permission")
		case e.Kind == "update" && e.Update.ToolCallID == id && e.Update.Status != "":
			out = append(out, e.Update.Status)
		}
	}
	return out
}

func (s step) permissions() []event {
	var out []event
	for _, e := range s.Events {
		if e.Kind == "permission" {
			out = append(out, e)
		}
	}
	return out
}

func (s step) stopReason(t *testing.T) string {
	t.Helper()
	if s.Error != nil {
		t.Fatalf("step %s failed: %+v", s.Name, *s.Error)
	}
	var r struct{ StopReason string }
	json.Unmarshal(s.Result, &r)
	return r.StopReason
}

// editorEnv is the environment of the TypeScript editor and of the reins
// it spawns.
func editorEnv(t *testing.T, workspace, home string) []string {
	t.Helper()
	nm := testutil.Peers(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd, _ := json.Marshal([]string{self})
	script, err := filepath.Abs("testdata/script.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return append(os.Environ(),
		"ACP_SDK_PATH="+filepath.Join(nm, "@agentclientprotocol", "sdk", "dist", "v1", "stable", "acp.js"),
		"REINS_CMD="+string(cmd), "WORKSPACE="+workspace,
		"MCP_EVERYTHING="+filepath.Join(nm, "@modelcontextprotocol", "server-everything", "dist", "index.js"),
		"REINS_ACP_SERVE=1", "REINS_HOME="+home, "REINS_MOCK_SCRIPT="+script,
		"DEEPSEEK_API_KEY=", "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=",
		testutil.MarkChildren(t),
	)
}

func runEditor(t *testing.T, workspace, home string) transcript {
	t.Helper()
	cmd := exec.Command("node", "testdata/editor.mjs")
	cmd.Env = editorEnv(t, workspace, home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("editor: %v\nstderr:\n%s", err, stderr.String())
	}
	var tr transcript
	if err := json.Unmarshal(stdout.Bytes(), &tr); err != nil {
		t.Fatalf("transcript: %v\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if len(tr.Connections) != 3 {
		t.Fatalf("transcript has %d connections", len(tr.Connections))
	}
	return tr
}

func stepNamed(t *testing.T, steps []step, name string) step {
	t.Helper()
	for _, s := range steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no step %s", name)
	return step{}
}

// providerCanary is in the mock provider's error answer to please-fail
// (testdata/script.yaml).
const providerCanary = "ACP-PROVIDER-CANARY-41c9"

// The official TypeScript SDK drives `reins acp` as an editor would.
func TestEditorDrivesReinsACP(t *testing.T) {
	workspace, home := t.TempDir(), t.TempDir()
	for name, body := range map[string]string{"notes.txt": "hello world\n", "stall.txt": "STALL-MARKER\n"} {
		if err := os.WriteFile(filepath.Join(workspace, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tr := runEditor(t, workspace, home)
	first, second := tr.Connections[0].Steps, tr.Connections[1].Steps
	var sessionID string

	t.Run("initialize", func(t *testing.T) {
		var r struct {
			ProtocolVersion   int
			AgentCapabilities struct {
				LoadSession        bool
				PromptCapabilities struct{ Image, Audio, EmbeddedContext bool }
				McpCapabilities    struct{ HTTP, SSE bool }
			}
			AgentInfo   struct{ Name string }
			AuthMethods []any
		}
		json.Unmarshal(stepNamed(t, first, "initialize").Result, &r)
		c := r.AgentCapabilities
		if r.ProtocolVersion != 1 || !c.LoadSession || !c.PromptCapabilities.EmbeddedContext ||
			c.PromptCapabilities.Image || c.PromptCapabilities.Audio || !c.McpCapabilities.HTTP || c.McpCapabilities.SSE ||
			r.AgentInfo.Name != "reins" || len(r.AuthMethods) != 0 {
			t.Errorf("initialize answered %+v", r)
		}
	})

	t.Run("session/new takes the editor's MCP servers, and a tool call round-trips", func(t *testing.T) {
		sse := stepNamed(t, first, "new-with-sse")
		if sse.Error == nil || !strings.Contains(string(sse.Error.Data), "not sse") {
			t.Errorf("an sse server: %+v", sse.Error)
		}
		if s := stepNamed(t, first, "new-with-mcp"); s.Error != nil {
			t.Fatalf("session/new with an MCP server: %+v", s.Error)
		}
		for _, s := range []step{stepNamed(t, first, "mcp-call"), stepNamed(t, second, "mcp-after-load")} {
			if got := s.stopReason(t); got != "end_turn" {
				t.Errorf("%s: stop reason %s", s.Name, got)
			}
			if got := s.chunks("agent_message_chunk"); got != "The MCP server echoed." {
				t.Errorf("%s: answer %q", s.Name, got)
			}
			if !strings.Contains(string(mustJSON(t, s.Events)), `Echo: from the editor`) {
				t.Errorf("%s: the tool call's result did not reach the editor", s.Name)
			}
		}
	})

	t.Run("session/new refuses relative paths clearly", func(t *testing.T) {
		rel := stepNamed(t, first, "new-relative-cwd")
		if rel.Error == nil || !strings.Contains(string(rel.Error.Data), "absolute") {
			t.Errorf("relative cwd: %+v", rel.Error)
		}
		var r struct{ SessionID string }
		json.Unmarshal(stepNamed(t, first, "new").Result, &r)
		sessionID = r.SessionID
		if _, err := os.Stat(filepath.Join(home, "sessions", sessionID, session.FileName)); err != nil {
			t.Errorf("the ACP session id is not a reins session: %v", err)
		}
	})

	t.Run("a prompt with tool calls, an edit allowed", func(t *testing.T) {
		s := stepNamed(t, first, "edit-allowed")
		if got := s.stopReason(t); got != "end_turn" {
			t.Errorf("stop reason %s", got)
		}
		if got := s.chunks("agent_thought_chunk"); got != "Reading the notes first." {
			t.Errorf("thought %q", got)
		}
		if got := s.chunks("agent_message_chunk"); got != "I changed hello to goodbye." {
			t.Errorf("message %q", got)
		}
		read := s.call(t, "Read notes.txt")
		if read.Kind != "read" || len(read.Locations) != 1 || read.Locations[0].Path != filepath.Join(workspace, "notes.txt") {
			t.Errorf("read call %+v", read)
		}
		if got := s.statuses(read.ToolCallID); !slices.Equal(got, []string{"pending", "in_progress", "completed"}) {
			t.Errorf("read statuses %v", got)
		}
		edit := s.call(t, "Edit notes.txt")
		if got := s.statuses(edit.ToolCallID); !slices.Equal(got, []string{"pending", "permission", "in_progress", "completed"}) {
			t.Errorf("edit statuses %v", got)
		}
		diff := edit.toolContent()
		if edit.Kind != "edit" || len(diff) != 1 || diff[0].Type != "diff" || diff[0].Path != filepath.Join(workspace, "notes.txt") ||
			diff[0].OldText == nil || *diff[0].OldText != "hello world" || diff[0].NewText != "goodbye world" {
			t.Errorf("edit call %+v, content %+v", edit, diff)
		}
		perms := s.permissions()
		if len(perms) != 1 || perms[0].Params.ToolCall.Kind != "edit" || perms[0].Params.SessionID != sessionID {
			t.Fatalf("permission requests %+v", perms)
		}
		var kinds []string
		for _, o := range perms[0].Params.Options {
			kinds = append(kinds, o.Kind)
		}
		if !slices.Equal(kinds, []string{"allow_once", "allow_always", "reject_once"}) {
			t.Errorf("options %v", kinds)
		}
		if b, _ := os.ReadFile(filepath.Join(workspace, "notes.txt")); string(b) != "goodbye world\n" {
			t.Errorf("notes.txt = %q", b)
		}
	})

	t.Run("a command rejected", func(t *testing.T) {
		s := stepNamed(t, first, "run-rejected")
		if got := s.stopReason(t); got != "end_turn" {
			t.Errorf("stop reason %s", got)
		}
		run := s.call(t, "Run touch ran.txt")
		if run.Kind != "execute" {
			t.Errorf("bash kind %s", run.Kind)
		}
		if got := s.statuses(run.ToolCallID); !slices.Equal(got, []string{"pending", "permission", "failed"}) {
			t.Errorf("bash statuses %v", got)
		}
		if _, err := os.Stat(filepath.Join(workspace, "ran.txt")); err == nil {
			t.Error("the rejected command ran")
		}
		if got := s.chunks("agent_message_chunk"); got != "The command was rejected, so I did not run it." {
			t.Errorf("message %q", got)
		}
	})

	t.Run("cancelled prompts", func(t *testing.T) {
		for _, name := range []string{"cancel-while-streaming", "cancel-while-asking"} {
			s := stepNamed(t, first, name)
			if got := s.stopReason(t); got != "cancelled" {
				t.Errorf("%s: stop reason %s", name, got)
			}
		}
		if _, err := os.Stat(filepath.Join(workspace, "ran.txt")); err == nil {
			t.Error("the command cancelled while asking ran")
		}
	})

	t.Run("the session goes on after a cancel", func(t *testing.T) {
		s := stepNamed(t, first, "after-cancel")
		if got := s.stopReason(t); got != "end_turn" || s.chunks("agent_message_chunk") != "Recalled." {
			t.Errorf("got %s, %q", got, s.chunks("agent_message_chunk"))
		}
	})

	// The editor is the human's terminal here, as stderr is for reins
	// run: the error's message carries the provider's own text after the
	// code (issue 15), its data only the code. The text reaches no
	// session/update, no session log and no later model request (the
	// session goes on: "delegate" prompts it again); besides the
	// editor, only the host log has it.
	t.Run("a failed turn answers its failure code and the provider's message", func(t *testing.T) {
		s := stepNamed(t, first, "failing-turn")
		want := "AUTH; the provider said (HTTP 401: invalid key " + providerCanary + "); details in " + filepath.Join(home, "logs", "reins.log")
		if s.Error == nil || s.Error.Message != want || string(s.Error.Data) != `{"code":"AUTH"}` {
			t.Errorf("error %+v, want message %q", s.Error, want)
		}
		for _, c := range tr.Connections {
			for _, st := range c.Steps {
				b, _ := json.Marshal(st.Events)
				if bytes.Contains(b, []byte(providerCanary)) || bytes.Contains(st.Result, []byte(providerCanary)) {
					t.Errorf("step %s of %s: the provider's text reached an update or a result", st.Name, c.Name)
				}
				if st.Error != nil && st.Name != "failing-turn" && strings.Contains(st.Error.Message+string(st.Error.Data), providerCanary) {
					t.Errorf("step %s of %s: the provider's text in error %+v", st.Name, c.Name, st.Error)
				}
			}
		}
		testutil.CanaryOnlyInHostLog(t, home, providerCanary)
	})

	t.Run("a subagent run is shown as tool calls", func(t *testing.T) {
		s := stepNamed(t, first, "delegate")
		if got := s.stopReason(t); got != "end_turn" || s.chunks("agent_message_chunk") != "The child counted 2 files." {
			t.Errorf("got %s, %q", got, s.chunks("agent_message_chunk"))
		}
		call := s.call(t, "Delegate: count the files")
		if call.Kind != "other" {
			t.Errorf("subagent tool kind %s", call.Kind)
		}
		run := s.call(t, "Subagent general: count the files")
		if run.Kind != "think" {
			t.Errorf("subagent run kind %s", run.Kind)
		}
		if got := s.statuses(run.ToolCallID); !slices.Equal(got, []string{"in_progress", "completed"}) {
			t.Errorf("run statuses %v", got)
		}
		var last update
		for _, e := range s.Events {
			if e.Update.ToolCallID == run.ToolCallID {
				last = e.Update
			}
		}
		if c := last.toolContent(); len(c) != 1 || c[0].Content.Text != "There are 2 files." {
			t.Errorf("run result %+v", c)
		}
	})

	t.Run("an unknown session", func(t *testing.T) {
		if s := stepNamed(t, first, "unknown-session"); s.Error == nil {
			t.Error("a prompt to an unknown session succeeded")
		}
	})

	t.Run("session/load replays the log", func(t *testing.T) {
		if s := stepNamed(t, second, "load-bad-id"); s.Error == nil {
			t.Error("a path as session id was accepted")
		}
		s := stepNamed(t, second, "load")
		if s.Error != nil {
			t.Fatalf("load: %+v", *s.Error)
		}
		users := s.chunks("user_message_chunk")
		for _, want := range []string{"please-edit the notes", "please-run the command", "please-delegate the count"} {
			if !strings.Contains(users, want) {
				t.Errorf("replayed user messages %q lack %q", users, want)
			}
		}
		if got := s.chunks("agent_message_chunk"); !strings.HasPrefix(got, "I changed hello to goodbye.") {
			t.Errorf("replayed answers %q", got)
		}
		edit := s.call(t, "Edit notes.txt")
		if got := s.statuses(edit.ToolCallID); !slices.Equal(got, []string{"pending", "completed"}) {
			t.Errorf("replayed edit statuses %v", got)
		}
		for _, e := range s.Events {
			if e.Kind == "update" && e.SessionID != sessionID {
				t.Errorf("update for session %s", e.SessionID)
			}
		}
		after := stepNamed(t, second, "prompt-after-load")
		if got := after.stopReason(t); got != "end_turn" {
			t.Errorf("prompt after load: %s", got)
		}
		ld, err := session.Load(filepath.Join(home, "sessions", sessionID, session.FileName))
		if err != nil {
			t.Fatal(err)
		}
		turns := 0
		for _, e := range ld.Events {
			if e.Type == session.TypeTurnEnd {
				turns++
			}
		}
		if turns != 9 { // seven prompts in the first connection, two after the load
			t.Errorf("the session log has %d turns, want 9", turns)
		}
	})

	t.Run("an editor hanging up mid-turn ends the turn", func(t *testing.T) {
		var r struct{ SessionID string }
		json.Unmarshal(stepNamed(t, tr.Connections[2].Steps, "prompt-then-hang-up").Result, &r)
		ld, err := session.Load(filepath.Join(home, "sessions", r.SessionID, session.FileName))
		if err != nil {
			t.Fatal(err)
		}
		if ld.Repair.Repaired() {
			t.Errorf("the log needed repair: %+v", ld.Repair)
		}
		last := ld.Events[len(ld.Events)-1]
		var end session.TurnEnd
		if last.Type != session.TypeTurnEnd || last.Decode(&end) != nil || end.Reason != session.ReasonAborted {
			t.Errorf("last event %s %s", last.Type, last.Data)
		}
	})

	t.Run("reins acp exits cleanly when the editor closes", func(t *testing.T) {
		for _, c := range tr.Connections {
			if c.Exit.Code == nil || *c.Exit.Code != 0 {
				t.Errorf("%s connection: exit %+v", c.Name, c.Exit)
			}
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
