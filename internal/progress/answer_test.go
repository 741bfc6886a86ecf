package progress

import (
	"bytes"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tui/toolsummary"
)

func chunk(t *testing.T, typ llm.ChunkType, delta string) session.Event {
	return ev(t, session.TypeAssistantChunk, session.AssistantChunk{Chunk: llm.Chunk{Type: typ, Delta: delta}})
}

// TestAnswerStreams (issue 15): on a terminal the answer's text deltas are
// written as they arrive, escaped; reasoning and tool-call arguments are
// not; done then only ends the line (the answer is not printed twice). A
// progress line (stderr, same terminal) never starts mid-line.
func TestAnswerStreams(t *testing.T) {
	var out, errw bytes.Buffer
	a := NewAnswer(&out, true)
	p := &Progress{w: &errw, on: true, answer: a}
	for _, e := range []session.Event{
		chunk(t, llm.ChunkReasoningDelta, "thinking"),
		chunk(t, llm.ChunkTextDelta, "Let me "),
		chunk(t, llm.ChunkTextDelta, "look."),
	} {
		a.Event(e)
	}
	if got := out.String(); got != "Let me look." {
		t.Fatalf("streamed %q before the step ended", got)
	}
	p.Event(ev(t, session.TypeToolCall, session.ToolCall{Name: "read", Arguments: `{"path":"a.go"}`}))
	if got := out.String(); got != "Let me look.\n" {
		t.Errorf("a progress line mid-line: stdout %q", got)
	}
	for _, e := range []session.Event{
		chunk(t, llm.ChunkToolCallDelta, `{"path":`),
		ev(t, session.TypeStepEnd, session.StepEnd{}),
		chunk(t, llm.ChunkTextDelta, "Done \x1b[31mred"),
	} {
		a.Event(e)
	}
	if err := a.Done("Done \x1b[31mred"); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "Let me look.\nDone \\x1b[31mred\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
}

// Not a terminal (or --json): nothing streams; done prints the selected
// output once, raw. On a terminal where no text streamed (an answer
// without deltas), done prints it escaped.
func TestAnswerNotStreamed(t *testing.T) {
	var out bytes.Buffer
	a := NewAnswer(&out, false)
	a.Event(chunk(t, llm.ChunkTextDelta, "partial"))
	if out.Len() != 0 {
		t.Fatalf("streamed %q to a non-terminal", out.String())
	}
	a.Done("final \x1b[0m")
	if got := out.String(); got != "final \x1b[0m\n" {
		t.Errorf("stdout %q", got)
	}
	out.Reset()
	b := NewAnswer(&out, true)
	b.Done("final \x1b[0m")
	if got := out.String(); got != "final \\x1b[0m\n" {
		t.Errorf("terminal without deltas: stdout %q", got)
	}
}

// TestProgressToolSummary (issue 15): each tool call's progress line shows
// a short summary of its arguments, escaped and cut.
func TestProgressToolSummary(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{`{"path":"main.go","offset":10}`, "  ↳ read path=main.go offset=10"},
		{`{"limit":2,"command":"go test\n./...","path":"x"}`, "  ↳ read path=x command=go test ./... limit=2"},
		{`{}`, "  ↳ read"},
		{``, "  ↳ read"},
		{`{"path":"a\u001b[31mb"}`, `  ↳ read path=a\x1b[31mb`},
		{`{"command":"` + strings.Repeat("x", 100) + `"}`, "  ↳ read command=" + strings.Repeat("x", 57) + "…"},
		{`not json`, "  ↳ read not json"},
	} {
		var buf bytes.Buffer
		p := &Progress{w: &buf, on: true}
		p.Event(ev(t, session.TypeToolCall, session.ToolCall{Name: "read", Arguments: tc.args}))
		if got := strings.TrimSuffix(buf.String(), "\n"); got != tc.want {
			t.Errorf("args %s: %q, want %q", tc.args, got, tc.want)
		}
	}
	if s := toolsummary.Of(`{"a":"` + strings.Repeat("y", 59) + `","b":"` + strings.Repeat("z", 59) + `","c":"w"}`); len(s) > toolsummary.Max {
		t.Errorf("summary of %d bytes", len(s))
	}
}
