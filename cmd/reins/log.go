package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/spf13/cobra"
)

func newLogCmd(s *streams) *cobra.Command {
	var (
		asJSON bool
		lf     listFilter
	)
	c := &cobra.Command{
		Use:   "log [SESSION]",
		Short: "List sessions newest first, or render one (children as a tree)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := sessionsRoot()
			if len(args) == 0 {
				if lf.limit < 0 {
					return &exitError{code: exitUsage, msg: "--limit: want 0 or more"}
				}
				if lf.all && lf.cwd != "" {
					return &exitError{code: exitUsage, msg: "--all and --cwd: give one"}
				}
				if !lf.all {
					// Without --all: one workspace, the current directory
					// unless --cwd names another.
					dir := lf.cwd
					if dir == "" {
						dir, _ = os.Getwd()
					}
					abs, err := filepath.Abs(dir)
					if err != nil {
						return &exitError{code: exitUsage, msg: "--cwd: " + err.Error()}
					}
					lf.cwd = abs
				}
				return listSessions(s.out, root, asJSON, lf)
			}
			id, err := resolveSessionArg(root, args[0])
			if err != nil {
				return err
			}
			return showSession(s.out, root, id, asJSON)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the raw events (or, without SESSION, the headers)")
	c.Flags().IntVar(&lf.limit, "limit", 20, "list at most N sessions (0: no limit)")
	c.Flags().StringVar(&lf.cwd, "cwd", "", "list the sessions of this workspace (default: the current directory)")
	c.Flags().BoolVar(&lf.all, "all", false, "list the sessions of every workspace")
	return c
}

// listFilter selects the sessions `reins log` lists.
type listFilter struct {
	limit int
	cwd   string // absolute; empty: every workspace (--all)
	all   bool
}

// sessionInfo is one session of the listing.
type sessionInfo struct {
	header session.Header
	turns  int
	last   string // the last turn's end reason
	prompt string // the first user message
	usage  llm.Usage
	err    error
}

// scanSessions reads every session of root, newest first (session.Scan).
func scanSessions(root string) ([]sessionInfo, error) {
	infos, err := session.Scan(root)
	out := make([]sessionInfo, len(infos))
	for i, in := range infos {
		out[i] = sessionInfo{header: in.Header, turns: in.Turns, last: in.Last, prompt: in.Prompt, usage: in.Usage, err: in.Err}
	}
	return out, err
}

func listSessions(w io.Writer, root string, asJSON bool, lf listFilter) error {
	infos, err := scanSessions(root)
	if err != nil {
		return &exitError{code: exitFailed, msg: err.Error()}
	}
	children := map[string][]sessionInfo{}
	var roots []sessionInfo
	ids := map[string]bool{}
	for _, in := range infos {
		ids[in.header.ID] = true
	}
	for _, in := range infos {
		if p := in.header.ParentSession; p != "" && ids[p] {
			children[p] = append(children[p], in)
		} else if lf.cwd == "" || in.header.Cwd == lf.cwd {
			roots = append(roots, in)
		}
	}
	if lf.limit > 0 && len(roots) > lf.limit {
		roots = roots[:lf.limit]
	}
	if asJSON {
		enc := json.NewEncoder(jsonSafe{w})
		enc.SetEscapeHTML(false)
		var walk func(in sessionInfo)
		walk = func(in sessionInfo) {
			if in.err == nil {
				enc.Encode(in.header)
			}
			for _, c := range children[in.header.ID] {
				walk(c)
			}
		}
		for _, in := range roots {
			walk(in)
		}
		return nil
	}
	if len(roots) == 0 {
		if lf.cwd != "" {
			fmt.Fprintf(w, "no sessions of %s in %s (reins log --all lists every workspace's)\n", lf.cwd, root)
		} else {
			fmt.Fprintf(w, "no sessions in %s\n", root)
		}
		return nil
	}
	var walk func(in sessionInfo, depth int)
	walk = func(in sessionInfo, depth int) {
		indent := strings.Repeat("  ", depth)
		if depth > 0 {
			indent = strings.Repeat("  ", depth-1) + "└ "
		}
		var line string
		if in.err != nil {
			line = fmt.Sprintf("%s  unreadable: %v", in.header.ID, in.err)
		} else {
			h := in.header
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
				h.CreatedAt.Local().Format("2006-01-02 15:04"), h.Cwd, agent, model, in.turns, orDash(in.last),
				usageText(in.usage), promptPreview(in.prompt, 60))
		}
		fmt.Fprintf(w, "%s%s\n", indent, termsafe.EscapeLine(line))
		for _, c := range children[in.header.ID] {
			walk(c, depth+1)
		}
	}
	for _, in := range roots {
		walk(in, 0)
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

// escapeControl replaces control characters with Go escapes.
func escapeControl(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func showSession(w io.Writer, root, id string, asJSON bool) error {
	p := filepath.Join(root, id, session.FileName)
	ld, err := session.Load(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &exitError{code: exitFailed, msg: fmt.Sprintf("no such session %s in %s", id, root)}
		}
		return &exitError{code: exitFailed, msg: err.Error()}
	}
	if asJSON {
		bw := bufio.NewWriter(w)
		enc := json.NewEncoder(jsonSafe{bw})
		enc.SetEscapeHTML(false)
		enc.Encode(ld.Header)
		for _, e := range ld.Events {
			enc.Encode(e)
		}
		return bw.Flush()
	}
	r := &renderer{w: w, root: root}
	r.session(ld, 0)
	return nil
}

// jsonSafe escapes, as \u sequences, the runes encoding/json leaves raw
// that a terminal would act on (C1 controls, bidi overrides): the JSON
// means the same. json.Encoder writes each value in one Write, so no rune
// is split across calls.
type jsonSafe struct{ w io.Writer }

func (j jsonSafe) Write(p []byte) (int, error) {
	if _, err := j.w.Write(termsafe.JSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
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

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
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
	continued := map[string]int{}
	for _, e := range ld.Events {
		var d session.SubagentStart
		if e.Type == session.TypeSubagentStart && e.Decode(&d) == nil && d.Continues != "" {
			continued[d.Continues]++
		}
	}
	tally := session.TallyOf(ld.Events)
	turn := -1 // the tally's index of the turn being rendered
	for _, e := range ld.Events {
		switch e.Type {
		case session.TypeTurnStart:
			var d session.TurnStart
			e.Decode(&d)
			turn++
			r.line(depth, "turn %d%s", d.Turn, traceText(d.TraceID))
		case session.TypeTurnEnd:
			var d session.TurnEnd
			e.Decode(&d)
			s := "└ " + d.Reason
			if d.By != "" {
				s += " by " + d.By
			}
			if d.Failure != nil {
				s += fmt.Sprintf(": %s (%s)", d.Failure.Code, d.Failure.Message)
			}
			if turn >= 0 && turn < len(tally.Turns) {
				s += turnText(tally.Turn(turn))
			} else if d.Usage != nil {
				s += "  " + usageText(*d.Usage)
			}
			r.line(depth, "%s", s)
		case session.TypeStepStart:
			var d session.StepStart
			e.Decode(&d)
			r.line(depth+1, "step %d", d.Step+1)
		case session.TypeUserMessage:
			var d session.UserMessage
			e.Decode(&d)
			r.line(depth+1, "user: %s", clip(d.Message.Text(), 200))
		case session.TypeAssistantMessage:
			var d session.AssistantMessage
			e.Decode(&d)
			r.assistant(depth+2, d)
		case session.TypeToolCall:
			var d session.ToolCall
			e.Decode(&d)
			r.line(depth+2, "→ %s %s", d.Name, clip(d.Arguments, 120))
		case session.TypeToolResult:
			var d session.ToolResult
			e.Decode(&d)
			mark := "✓"
			if d.IsError {
				mark = "✗"
			}
			r.line(depth+2, "%s %s", mark, clip(d.Content, 160))
		case session.TypeLLMRetry:
			var d session.LLMRetry
			e.Decode(&d)
			r.line(depth+2, "⟳ retry %d/%d after %s, waiting %d ms", d.Retry, d.MaxRetries, d.Failure.Code, d.DelayMs)
		case session.TypeSubagentStart:
			var d session.SubagentStart
			e.Decode(&d)
			bg := ""
			if d.Background {
				bg = " (background)"
			}
			if d.Continues != "" {
				r.line(depth+2, "⇢ continue %s: subagent %q%s (its turns are under the child's first run)", d.Continues, d.Label, bg)
				continue
			}
			id := subagent.ChildID(h.ID, d.RunID)
			if n := continued[id]; n > 0 {
				id += fmt.Sprintf(", continued %d×", n)
			}
			r.line(depth+2, "⇢ subagent %q agent %s provider %s%s [%s]", d.Label, d.Agent, d.Provider, bg, id)
			if child, err := session.Load(filepath.Join(r.root, d.ChildSession, session.FileName)); err == nil {
				r.session(child, depth+3)
			} else if d.ChildSession != "" {
				r.line(depth+3, "child session %s: %v", d.ChildSession, err)
			}
		case session.TypeSubagentEnd:
			var d session.SubagentEnd
			e.Decode(&d)
			s := "⇠ subagent " + d.StopReason
			if d.Continues != "" {
				s = "⇠ continuation of " + d.Continues + " " + d.StopReason
			}
			if d.DurationMs > 0 {
				s += " after " + msText(d.DurationMs)
			}
			if d.Usage != nil {
				s += "  " + usageText(*d.Usage)
			}
			if d.Diagnostic != "" {
				s += "  " + d.Diagnostic
			}
			r.line(depth+2, "%s", s)
		case session.TypeJobNotice:
			var d session.JobNotice
			e.Decode(&d)
			r.line(depth+2, "job %s %s", d.JobID, d.Status)
		case session.TypeContextCompacted:
			var d session.ContextCompacted
			e.Decode(&d)
			s := fmt.Sprintf("⇲ context compacted (%s): events %d–%d replaced by a summary", d.Reason, d.Replaces.FromSeq, d.Replaces.ToSeq)
			if d.Usage != nil {
				s += "  " + usageText(*d.Usage)
			}
			r.line(depth+1, "%s", s)
			r.line(depth+2, "summary: %s", clip(d.Summary, 400))
		}
	}
	if depth == 0 {
		r.line(depth, "%s", totalText(&tally))
	}
}

// turnText is a turn's figures on its turn/end line (session.Tally): its
// usage, its children's included, and its wall time.
func turnText(t session.TurnTally) string {
	s := ""
	if u := t.Usage(); !u.IsZero() {
		s += "  " + usageText(u)
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
		s += usageText(u) + "  "
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
		suffix += "  " + usageText(*d.Usage)
	}
	if len(d.Message.Content) == 0 {
		r.line(depth, "assistant: (no content)%s", suffix)
		return
	}
	for _, b := range d.Message.Content {
		switch b.Type {
		case llm.BlockReasoning:
			r.line(depth, "thinking: %s", clip(b.Text, 160))
		case llm.BlockText:
			r.line(depth, "assistant: %s", clip(b.Text, 400))
		}
	}
	if suffix != "" {
		r.line(depth, "%s", strings.TrimSpace(suffix))
	}
}

// usageText is the usage line of reins log: the tokens as reins view says
// them, and the cost as costText says it.
func usageText(u llm.Usage) string {
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
