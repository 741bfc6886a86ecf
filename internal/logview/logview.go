// Package logview renders session logs as text: the listing of a
// sessions directory and one session with its children nested under the
// calls that started them (`reins log`, docs/cli.md). Everything it prints
// that a model, a tool or a child wrote is escaped (termsafe); the usage
// and durations are the one tally of internal/session.
package logview

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/termsafe"
)

// Filter selects the sessions List lists.
type Filter struct {
	Limit int    // at most this many root sessions; 0: no limit
	Cwd   string // absolute; empty: every workspace
}

// List prints the sessions of root newest first, each child under its
// parent; asJSON prints their headers as JSON lines instead. Its error is
// the sessions directory's.
func List(w io.Writer, root string, asJSON bool, lf Filter) error {
	infos, err := session.Scan(root)
	if err != nil {
		return err
	}
	children := map[string][]session.Info{}
	var roots []session.Info
	ids := map[string]bool{}
	for _, in := range infos {
		ids[in.Header.ID] = true
	}
	for _, in := range infos {
		if p := in.Header.ParentSession; p != "" && ids[p] {
			children[p] = append(children[p], in)
		} else if lf.Cwd == "" || in.Header.Cwd == lf.Cwd {
			roots = append(roots, in)
		}
	}
	more := 0 // sessions --limit left out: the text list says so
	if lf.Limit > 0 && len(roots) > lf.Limit {
		roots, more = roots[:lf.Limit], len(roots)-lf.Limit
	}
	if asJSON {
		enc := json.NewEncoder(termsafe.JSONWriter{W: w})
		enc.SetEscapeHTML(false)
		var walk func(in session.Info)
		walk = func(in session.Info) {
			if in.Err == nil {
				enc.Encode(in.Header)
			}
			for _, c := range children[in.Header.ID] {
				walk(c)
			}
		}
		for _, in := range roots {
			walk(in)
		}
		return nil
	}
	if len(roots) == 0 {
		if lf.Cwd != "" {
			fmt.Fprintf(w, "no sessions of %s in %s (reins log --all lists every workspace's)\n", lf.Cwd, root)
		} else {
			fmt.Fprintf(w, "no sessions in %s\n", root)
		}
		return nil
	}
	var walk func(in session.Info, depth int)
	walk = func(in session.Info, depth int) {
		indent := strings.Repeat("  ", depth)
		if depth > 0 {
			indent = strings.Repeat("  ", depth-1) + "└ "
		}
		var line string
		if in.Err != nil {
			line = fmt.Sprintf("%s  unreadable: %v", in.Header.ID, in.Err)
		} else {
			h := in.Header
			model := "-"
			if h.Model != "" {
				model = h.Provider + "/" + h.Model
			}
			agent := h.Agent
			if agent == "" {
				agent = "-"
			}
			// promptPreview quotes and escapes the prompt; the rest of the
			// line is escaped below like every rendered line.
			line = fmt.Sprintf("%s  %s  %s  agent %s  %s  %d turn(s)  last: %s  %s  %s", h.ID,
				h.CreatedAt.Local().Format("2006-01-02 15:04"), h.Cwd, agent, model, in.Turns, orDash(string(in.Last)),
				UsageText(in.Usage), promptPreview(in.Prompt, 60))
		}
		fmt.Fprintf(w, "%s%s\n", indent, termsafe.EscapeLine(line))
		for _, c := range children[in.Header.ID] {
			walk(c, depth+1)
		}
	}
	for _, in := range roots {
		walk(in, 0)
	}
	if more > 0 {
		fmt.Fprintf(w, "… %d more (reins log --limit N lists more, --limit 0 every one)\n", more)
	}
	return nil
}

// promptPreview is the first line of a prompt, cut at n bytes and quoted
// (control characters escaped), so that one session is one line.
func promptPreview(p string, n int) string {
	p = strings.TrimSpace(p)
	first, _, more := strings.Cut(p, "\n")
	if len(first) > n {
		for n > 0 && (first[n]&0xC0) == 0x80 {
			n--
		}
		first, more = first[:n], true
	}
	if more {
		first += "…"
	}
	return strconv.Quote(first)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Load reads session id of root for Show or JSON; its error names the
// session when there is none.
func Load(root, id string) (*session.Loaded, error) {
	ld, err := session.Load(filepath.Join(root, id, session.FileName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no such session %s in %s", id, root)
	}
	return ld, err
}

// JSON writes ld's header and events as JSON lines, escaped for a
// terminal (termsafe.JSONWriter).
func JSON(w io.Writer, ld *session.Loaded) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(termsafe.JSONWriter{W: bw})
	enc.SetEscapeHTML(false)
	enc.Encode(ld.Header)
	for _, e := range ld.Events {
		enc.Encode(e)
	}
	return bw.Flush()
}

// Show prints ld readably: turns, steps, messages, tool calls, retries,
// usage, and each child session of root nested under its subagent call,
// then the tree's total.
func Show(w io.Writer, root string, ld *session.Loaded) {
	r := &renderer{w: w, root: root}
	r.session(ld, 0)
}

// renderer prints a session readably: turns, steps, messages, tool calls,
// retries, usage, and each child session nested under its subagent call.
type renderer struct {
	w    io.Writer
	root string
}

func (r *renderer) line(depth int, format string, args ...any) {
	fmt.Fprintf(r.w, "%s%s\n", strings.Repeat("  ", depth), termsafe.EscapeLine(fmt.Sprintf(format, args...)))
}

func (r *renderer) session(ld *session.Loaded, depth int) {
	h := ld.Header
	what := "session"
	if h.ParentSession != "" {
		what = "child session"
	}
	r.line(depth, "%s %s  cwd %s  created %s  depth %d", what, h.ID, h.Cwd, h.CreatedAt.Local().Format(time.DateTime), h.DelegationDepth)
	if ld.Repair.Repaired() {
		// A live session (another reins holds its lock) is not broken: its
		// last turn is open and its last line may be half written.
		if pid := session.Writer(filepath.Join(r.root, h.ID, session.FileName)); pid > 0 {
			r.line(depth, "(running in pid %d: the last turn is still open)", pid)
		} else {
			r.line(depth, "(repaired on load: an interrupted write or turn)")
		}
	}
	// A continued child is rendered once, at its first run, with every
	// turn it ran; each continuation is a line that names it.
	p := session.PictureOf(h, ld.Events)
	for _, e := range p.Entries {
		switch d := e.Payload.(type) {
		case session.TurnStart:
			r.line(depth, "turn %d%s", d.Turn, traceText(d.TraceID))
		case session.TurnEnd:
			s := "└ " + d.EndText()
			if d.Failure != nil {
				s += fmt.Sprintf(": %s (%s)", d.Failure.Code, d.Failure.Message)
			}
			if e.Turn >= 0 && e.Turn < len(p.Tally.Turns) {
				s += turnText(p.Tally.Turn(e.Turn))
			} else if d.Usage != nil {
				s += "  " + UsageText(*d.Usage)
			}
			r.line(depth, "%s", s)
		case session.StepStart:
			r.line(depth+1, "step %d", d.Step+1)
		case session.UserMessage:
			who := "user"
			if d.Notice != "" { // reins's own message to the model
				who = "notice"
			}
			r.line(depth+1, "%s: %s", who, termsafe.Clip(d.Message.Text(), 200))
		case session.AssistantMessage:
			r.assistant(depth+2, d)
		case session.ToolCall:
			r.line(depth+2, "→ %s %s", d.Name, termsafe.Clip(d.Arguments, 120))
		case session.ToolResult:
			mark := "✓"
			if d.IsError {
				mark = "✗"
			}
			r.line(depth+2, "%s %s", mark, termsafe.Clip(d.Content, 160))
		case session.LLMRetry:
			r.line(depth+2, "⟳ retry %d/%d after %s, waiting %d ms", d.Retry, d.MaxRetries, d.Failure.Code, d.DelayMs)
		case session.SubagentStart:
			bg := ""
			if d.Background {
				bg = " (background)"
			}
			if d.Continues != "" {
				r.line(depth+2, "⇢ continue %s: subagent %q%s (its turns are under the child's first run)", d.Continues, d.Label, bg)
				continue
			}
			id := session.ChildID(h.ID, d.RunID)
			if n := p.Continued[id]; n > 0 {
				id += fmt.Sprintf(", continued %d×", n)
			}
			r.line(depth+2, "⇢ subagent %q agent %s provider %s%s [%s]", d.Label, d.Agent, d.Provider, bg, id)
			if child, err := session.Load(filepath.Join(r.root, d.ChildSession, session.FileName)); err == nil {
				r.session(child, depth+3)
			} else if d.ChildSession != "" {
				r.line(depth+3, "child session %s: %v", d.ChildSession, err)
			}
		case session.SubagentEnd:
			what := "⇠ subagent "
			if d.Continues != "" {
				what = "⇠ continuation of " + d.Continues + " "
			}
			r.line(depth+2, "%s%s", what, d.EndText(UsageText))
		case session.HookRun:
			s := fmt.Sprintf("⚑ hook %s %s: %s (exit %d, %d ms", d.Event, d.Tool, termsafe.Clip(d.Command, 80), d.Exit, d.DurationMs)
			if d.Decision != "" {
				s += ", " + d.Decision
			}
			r.line(depth+2, "%s)", s)
			for _, t := range []string{d.Problem, d.ToModel, d.ToUser} {
				if t != "" {
					r.line(depth+3, "→ %s", termsafe.Clip(t, 200))
				}
			}
		case session.JobNotice:
			r.line(depth+2, "job %s %s", d.JobID, d.Status)
		case session.ContextCompacted:
			s := fmt.Sprintf("⇲ context compacted (%s): events %d–%d replaced by a summary", d.Reason, d.Replaces.FromSeq, d.Replaces.ToSeq)
			if d.Usage != nil {
				s += "  " + UsageText(*d.Usage)
			}
			r.line(depth+1, "%s", s)
			r.line(depth+2, "summary: %s", termsafe.Clip(d.Summary, 400))
		}
	}
	if depth == 0 {
		r.line(depth, "%s", totalText(&p.Tally))
	}
}

// turnText is a turn's figures on its turn/end line (session.Tally): its
// usage, its children's included, and its wall time.
func turnText(t session.TurnTally) string {
	s := ""
	if u := t.Usage(); !u.IsZero() {
		s += "  " + UsageText(u)
		if !t.Children.IsZero() {
			s += " (children included)"
		}
	}
	return s + "  in " + msText(t.DurationMs())
}

// totalText is a session's last line: the tree's usage and the time spent
// in turns (session.Tally).
func totalText(t *session.Tally) string {
	what := "total"
	if t.ChildRuns > 0 {
		what = "tree total (this session and its children)"
	}
	s := what + ": "
	if u := t.Usage(); !u.IsZero() {
		s += UsageText(u) + "  "
	}
	return s + fmt.Sprintf("%d turn(s) in %s", len(t.Turns), msText(t.DurationMs()))
}

// msText is a duration in milliseconds as Go writes it (1.5s).
func msText(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() }

func (r *renderer) assistant(depth int, d session.AssistantMessage) {
	suffix := ""
	if d.Interrupted {
		suffix = " (interrupted)"
	}
	if d.Usage != nil {
		suffix += "  " + UsageText(*d.Usage)
	}
	if len(d.Message.Content) == 0 {
		r.line(depth, "assistant: (no content)%s", suffix)
		return
	}
	for _, b := range d.Message.Content {
		switch b.Type {
		case llm.BlockReasoning:
			r.line(depth, "thinking: %s", termsafe.Clip(b.Text, 160))
		case llm.BlockText:
			r.line(depth, "assistant: %s", termsafe.Clip(b.Text, 400))
		}
	}
	if suffix != "" {
		r.line(depth, "%s", strings.TrimSpace(suffix))
	}
}

// UsageText is the usage line of reins log (and of reins demo): the
// tokens as reins view says them, and the cost as costText says it.
func UsageText(u llm.Usage) string {
	s := u.TokensText()
	if c := costText(u); c != "" {
		s += "  " + c
	}
	return s
}

// costText is usage's cost: unknown (some price is missing) is said, never
// shown as $0.
func costText(u llm.Usage) string {
	if u.IsZero() {
		return ""
	}
	if u.CostUSD == nil {
		return "cost unknown"
	}
	return "cost " + budget.Dollars(*u.CostUSD)
}

// traceText names a traced turn's OpenTelemetry trace (docs/telemetry.md):
// the id to look the turn up by in Jaeger, Tempo or any OTLP backend.
func traceText(id string) string {
	if id == "" {
		return ""
	}
	return "  trace " + id
}
