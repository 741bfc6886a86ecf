// Package progress is what `reins run` shows on a terminal while it
// works: the progress lines on stderr (the current step, tool calls,
// children, retries, compactions) and the answer streamed to stdout as it
// arrives. Off a terminal both stay quiet until the answer is done, so
// pipes and files get only what the command promises. Everything a model,
// a tool or an agent file wrote is escaped (termsafe).
package progress

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tui/callpreview"
	"github.com/reinsdev/reins/internal/tui/linediff"
	"github.com/reinsdev/reins/internal/tui/toolsummary"
)

// Progress prints the current step, tool calls, running children and
// retries on stderr — only when stderr is a terminal, so pipes and files
// get nothing but what the command promises.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	on    bool
	color bool
	// bg are the background children running (by run id), counted from
	// the events so that no lock beyond the log's is taken.
	bg map[string]bool
	// answer, when the answer streams to the same terminal, has its
	// partly written line ended before a progress line.
	answer *Answer
}

// New is the progress of a run on w: on when w is a terminal, dimmed
// when color (NO_COLOR unset); answer, when the answer streams to the same
// terminal, has its partly written line ended before each progress line.
func New(w io.Writer, on, color bool, answer *Answer) *Progress {
	return &Progress{w: w, on: on, color: on && color, answer: answer}
}

func (p *Progress) printf(format string, args ...any) {
	// Tool names, labels and agents come from the model or agent files:
	// escaped before our own color codes are added.
	p.answer.breakLine()
	line := termsafe.EscapeLine(fmt.Sprintf(format, args...))
	if p.color {
		line = "\x1b[2m" + line + "\x1b[0m"
	}
	fmt.Fprintln(p.w, line)
}

// Event is called with every session event (under the log's lock: it
// must stay cheap).
func (p *Progress) Event(e session.Event) {
	if d, ok := e.Payload.(session.HookRun); ok && d.ToUser != "" {
		// What a hook says to the user (systemMessage, a blocked
		// prompt's reason, stderr of a failed hook) is shown as Claude
		// Code shows it, terminal or not: it is the hook's message, not
		// progress.
		p.mu.Lock()
		p.hookText(d)
		p.mu.Unlock()
	}
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch d := e.Payload.(type) {
	case session.StepStart:
		p.printf("· step %d", d.Step+1)
	case session.ToolCall:
		if sum := toolsummary.Of(d.Arguments); sum != "" && sum != "{}" {
			p.printf("  ↳ %s %s", d.Name, sum)
		} else {
			p.printf("  ↳ %s", d.Name)
		}
	case session.LLMRetry:
		p.printf("  ⟳ retry %d/%d after %s in %d ms", d.Retry, d.MaxRetries, d.Failure.Code, d.DelayMs)
	case session.SubagentStart:
		p.printf("  ⇢ subagent %s (%s)", d.Label, d.Agent)
		if d.Background {
			if p.bg == nil {
				p.bg = map[string]bool{}
			}
			p.bg[d.RunID] = true
		}
	case session.SubagentEnd:
		p.printf("  ⇠ subagent %s", d.StopReason)
		delete(p.bg, d.RunID)
	case session.ContextCompacted:
		p.printf("  ⇲ context compacted (%s): the older history is now a summary", d.Reason)
	case session.TurnEnd:
		// reins run keeps the session alive until its background jobs
		// end (subagent.RunUntilIdle): say so rather than look hung.
		if n := len(p.bg); n > 0 {
			p.printf("… waiting for %d background job(s) to finish (Ctrl-C stops them)", n)
		}
	}
}

// maxHookLines bounds the lines of one hook's text on stderr.
const maxHookLines = 20

// hookText prints d's text to the user, each line escaped (the hook's
// output), at most maxHookLines lines and 200 columns each.
func (p *Progress) hookText(d session.HookRun) {
	head := "hook " + d.Event
	if d.Tool != "" {
		head += " " + d.Tool
	}
	lines := strings.Split(strings.TrimRight(d.ToUser, "\n"), "\n")
	more := 0
	if len(lines) > maxHookLines {
		lines, more = lines[:maxHookLines], len(lines)-maxHookLines
	}
	p.answer.breakLine()
	for i, l := range lines {
		l = termsafe.EscapeLine(termsafe.Clip(l, 200))
		if i == 0 {
			fmt.Fprintf(p.w, "reins: %s: %s\n", termsafe.EscapeLine(head), l)
		} else {
			fmt.Fprintf(p.w, "  %s\n", l)
		}
	}
	if more > 0 {
		fmt.Fprintf(p.w, "  … %d more lines\n", more)
	}
}

// BeforeRun is the run's tool.Env.BeforeRun (harness.SessionOptions):
// a file tool's call shows the change it makes against the files in cwd
// as they are just before it runs, removed lines included, at most
// callpreview.MaxSettled lines and then how many more — the rule of the
// interactive terminal's settled calls.
func (p *Progress) BeforeRun(cwd string) func(context.Context, string, json.RawMessage) {
	return func(_ context.Context, name string, args json.RawMessage) {
		if !p.on || !callpreview.FileTool(name) {
			return
		}
		d := callpreview.Of(cwd, name, args).Diff
		shown, more := callpreview.Capped(d, callpreview.MaxSettled)
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, l := range shown {
			switch l.Kind {
			case linediff.Gap:
				p.printf("    ⋯ %d unchanged lines", l.N)
			case callpreview.FileHead:
				p.printf("    %s", l.Text)
			case linediff.Del:
				p.printf("    - %s", l.Text)
			case linediff.Add:
				p.printf("    + %s", l.Text)
			default:
				p.printf("      %s", l.Text)
			}
		}
		if more > 0 {
			p.printf("    … %d more lines", more)
		}
	}
}
