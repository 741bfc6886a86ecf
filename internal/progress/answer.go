package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/termsafe"
)

// Answer writes the answer text of `reins run` to stdout as it
// arrives — only when stdout is a terminal and --json is off; otherwise it
// writes nothing until done, which prints the selected output once, as
// before. On a terminal each text delta is escaped (termsafe.Escape), so
// the model's text cannot drive the terminal.
type Answer struct {
	mu      sync.Mutex
	w       io.Writer
	on      bool
	wrote   bool // any answer text was shown
	midLine bool // the last text shown did not end a line
	err     error
}

// NewAnswer is the answer of a run on w; on streams it (a terminal
// without --json).
func NewAnswer(w io.Writer, on bool) *Answer {
	return &Answer{w: w, on: on}
}

// Event is called with every session event (under the log's lock).
func (a *Answer) Event(e session.Event) {
	if a == nil || !a.on {
		return
	}
	switch d := e.Payload.(type) {
	case session.AssistantChunk:
		if d.Chunk.Type != llm.ChunkTextDelta || d.Chunk.Delta == "" {
			return
		}
		a.write(termsafe.Escape(d.Chunk.Delta))
	case session.LLMRetry, session.StepEnd:
		// A retried attempt's text was never an answer, and a step's text
		// is followed by tool calls or the next step: either way the next
		// text starts on a line of its own.
		a.breakLine()
	}
}

func (a *Answer) write(s string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return
	}
	_, a.err = io.WriteString(a.w, s)
	a.wrote = true
	a.midLine = !strings.HasSuffix(s, "\n")
}

// breakLine ends a partly written line, so that a progress line on the
// same terminal (stderr) or the next text starts at the left margin.
func (a *Answer) breakLine() {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.midLine && a.err == nil {
		_, a.err = io.WriteString(a.w, "\n")
		a.midLine = false
	}
}

// Done finishes the answer. When text was streamed, it only ends the last
// line: the user has read the answer already. Otherwise (not a terminal,
// or a run that streamed no text) it prints output once, escaped on a
// terminal, raw into a pipe or file (there it is the product).
func (a *Answer) Done(output string) error {
	a.mu.Lock()
	wrote, err := a.wrote, a.err
	a.mu.Unlock()
	if err != nil {
		return err
	}
	if a.on && wrote {
		a.breakLine()
		return a.err
	}
	if output == "" {
		return nil
	}
	if a.on {
		output = termsafe.Escape(output)
	}
	_, err = fmt.Fprintln(a.w, output)
	return err
}
