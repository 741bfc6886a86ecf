package main

import (
	"fmt"
	"github.com/charmbracelet/x/term"
	"io"
	"os"
	"sync"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/termsafe"
)

// progress prints the current step, tool calls, running children and
// retries on stderr — only when stderr is a terminal, so pipes and files
// get nothing but what the command promises. NO_COLOR is honoured.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	on    bool
	color bool
	// bg are the background children running (by run id), counted from
	// the events so that no lock beyond the log's is taken.
	bg map[string]bool
	// answer, when the answer streams to the same terminal, has its
	// partly written line ended before a progress line.
	answer *answerStream
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w}
	if isTerminal(w) {
		p.on = true
		p.color = os.Getenv("NO_COLOR") == ""
	}
	return p
}

// isTerminal reports whether v (a stream: stdin, stdout, stderr) is a
// character device (a terminal).
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	// A terminal answers the terminal ioctl; a character device alone is
	// not one (/dev/null, /dev/full: taking those for terminals lost the
	// failed writes of `reins version > /dev/full`, exit 0).
	return term.IsTerminal(f.Fd())
}

func (p *progress) printf(format string, args ...any) {
	// Tool names, labels and agents come from the model or agent files:
	// escaped before our own color codes are added.
	p.answer.breakLine()
	line := termsafe.EscapeLine(fmt.Sprintf(format, args...))
	if p.color {
		line = "\x1b[2m" + line + "\x1b[0m"
	}
	fmt.Fprintln(p.w, line)
}

// event is called with every session event (under the log's lock: it
// must stay cheap).
func (p *progress) event(e session.Event) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Type {
	case session.TypeStepStart:
		var d session.StepStart
		e.Decode(&d)
		p.printf("· step %d", d.Step+1)
	case session.TypeToolCall:
		var d session.ToolCall
		e.Decode(&d)
		if sum := toolSummary(d.Arguments); sum != "" && sum != "{}" {
			p.printf("  ↳ %s %s", d.Name, sum)
		} else {
			p.printf("  ↳ %s", d.Name)
		}
	case session.TypeLLMRetry:
		var d session.LLMRetry
		e.Decode(&d)
		p.printf("  ⟳ retry %d/%d after %s in %d ms", d.Retry, d.MaxRetries, d.Failure.Code, d.DelayMs)
	case session.TypeSubagentStart:
		var d session.SubagentStart
		e.Decode(&d)
		p.printf("  ⇢ subagent %s (%s)", d.Label, d.Agent)
		if d.Background {
			if p.bg == nil {
				p.bg = map[string]bool{}
			}
			p.bg[d.RunID] = true
		}
	case session.TypeSubagentEnd:
		var d session.SubagentEnd
		e.Decode(&d)
		p.printf("  ⇠ subagent %s", d.StopReason)
		delete(p.bg, d.RunID)
	case session.TypeContextCompacted:
		var d session.ContextCompacted
		e.Decode(&d)
		p.printf("  ⇲ context compacted (%s): the older history is now a summary", d.Reason)
	case session.TypeTurnEnd:
		// reins run keeps the session alive until its background jobs
		// end (subagent.RunUntilIdle): say so rather than look hung.
		if n := len(p.bg); n > 0 {
			p.printf("… waiting for %d background job(s) to finish (Ctrl-C stops them)", n)
		}
	}
}
