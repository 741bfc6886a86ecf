package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/progress"
	"github.com/reinsdev/reins/internal/session"
)

// hostile is model text a terminal must never receive raw: a clipboard
// write (OSC 52), a screen clear, a C1 CSI and a bidi override.
const hostile = "hi\x1b]52;c;ZXZpbA==\x07\x1b[2J\u009b31m\u202egnp.exe"

// wantInert checks out carries no raw escape or override and shows the
// escaped form instead.
func wantInert(t *testing.T, out string) {
	t.Helper()
	for _, bad := range []string{"\x1b]", "\x1b[2J", "\x07", "\u009b", "\u202e"} {
		if strings.Contains(out, bad) {
			t.Errorf("output carries raw %q:\n%q", bad, out)
		}
	}
	if !strings.Contains(out, `\x1b]52;c;ZXZpbA==`) {
		t.Errorf("output does not show the escaped sequence:\n%q", out)
	}
}

// TestLogEscapesControls: reins log renders model text, tool names,
// arguments and results with their control characters escaped; --json
// stays JSON, which escapes them itself.
func TestLogEscapesControls(t *testing.T) {
	home := t.TempDir()
	root := filepath.Join(home, "sessions")
	l, err := session.Create(root, session.Header{ID: "s1", Cwd: "/w" + hostile, CreatedAt: time.Unix(0, 0).UTC()}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	text := func(s string) llm.Message {
		return llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: s}}}
	}
	l.Append(session.TypeTurnStart, session.TurnStart{})
	l.Append(session.TypeStepStart, session.StepStart{})
	l.Append(session.TypeAssistantMessage, session.AssistantMessage{Message: text(hostile)})
	l.Append(session.TypeToolCall, session.ToolCall{CallID: "c1", Name: "read" + hostile, Arguments: `{"p":"` + hostile + `"}`})
	l.Append(session.TypeToolResult, session.ToolResult{CallID: "c1", Content: hostile, IsError: true})
	l.Append(session.TypeTurnEnd, session.TurnEnd{Reason: session.ReasonCompleted})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"log", "s1"}, {"log", "--all"}} {
		cmd := reinsCmd(t, home, args...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("reins %v: %v", args, err)
		}
		wantInert(t, string(out))
	}
	out, err := reinsCmd(t, home, "log", "--json", "s1").Output()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(out, "\x1b\x07") || bytes.Contains(out, []byte("\u009b")) {
		t.Errorf("--json carries raw controls: %q", out)
	}
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		if !json.Valid(line) {
			t.Errorf("--json line is not JSON: %q", line)
		}
	}
}

// TestProgressEscapesControls: the progress lines on a terminal show tool
// names and subagent labels escaped.
func TestProgressEscapesControls(t *testing.T) {
	var buf bytes.Buffer
	p := progress.New(&buf, true, true, nil)
	for _, ev := range []struct {
		typ  string
		data any
	}{
		{session.TypeToolCall, session.ToolCall{Name: "read" + hostile}},
		{session.TypeSubagentStart, session.SubagentStart{Label: hostile, Agent: hostile}},
	} {
		e, err := session.MakeEvent(ev.typ, 0, time.Time{}, ev.data)
		if err != nil {
			t.Fatal(err)
		}
		p.Event(e)
	}
	// Our own dim/reset codes are the only escapes left.
	out := strings.NewReplacer("\x1b[2m", "", "\x1b[0m", "").Replace(buf.String())
	wantInert(t, out)
}
