// Package childtree is the interactive screen's live tree of a session's
// children: every child (and grandchild) from the parent's subagent/start
// and subagent/end events, what each running child does now from its own
// events, and the background jobs; drawn as one escaped row per child.
package childtree

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/internal/tui/termtext"
)

// Styles are the colours of the rows; Stop colours a stop reason.
type Styles struct {
	Dim, Running lipgloss.Style
	Stop         func(reason string) string
}

// maxNodes bounds the children the tree keeps per turn; later ones are
// counted, not shown (a model that starts thousands of children still
// gets a screen that fits).
const maxNodes = 200

// Node is one child run in the delegation tree, built from the parent's
// subagent/start and subagent/end events and the child's own events.
type Node struct {
	runID      string
	session    string // the child's session id
	parent     string // the session that started it
	agent      string
	provider   string
	label      string
	background bool
	jobID      string
	jobStatus  string
	start      time.Time
	end        time.Time // zero while it runs
	stop       string    // stop reason on settlement
	diagnostic string
	usage      llm.Usage // the child's own steps while it runs; its total on settlement
	branch     string    // an isolated child's branch (isolation: worktree)
	callID     string    // the subagent call that made the row (live.go)
	act        activity  // what it is doing now, while it runs
	// calls are the child's own tool calls in flight (call id → tool
	// name), so that a result can be told a refusal; refused counts the
	// refused ones and refusal is the first one's text (the row shows it:
	// a child that completed after a refusal did not do all it was asked).
	calls   map[string]string
	refused int
	refusal string
}

// maxCalls bounds the calls in flight a row remembers.
const maxCalls = 64

// Tree is the live delegation tree of a session: every child (and
// grandchild) with its state, and the background jobs.
type Tree struct {
	nodes   []*Node
	byRun   map[string]*Node
	bySess  map[string]*Node
	dropped int
	// lastJob is the background run whose subagent/end came last: the
	// job/notice that follows it (subagent.Manager.Drain) is its own.
	lastJob *Node
	// pending is the activity of out-of-process children whose events
	// came before their subagent/start (live.go).
	pending map[string]*activity
}

// New is an empty tree.
func New() *Tree {
	return &Tree{byRun: map[string]*Node{}, bySess: map[string]*Node{}}
}

// Running reports whether any child is still running.
func (t *Tree) Running() bool {
	for _, n := range t.nodes {
		if n.end.IsZero() {
			return true
		}
	}
	return false
}

// Empty reports whether the tree has nothing to show.
func (t *Tree) Empty() bool { return len(t.nodes) == 0 && t.dropped == 0 }

// Event folds one event of session hd (the root or any descendant).
func (t *Tree) Event(hd session.Header, e session.Event) {
	switch d := e.Payload.(type) {
	case session.SubagentStart:
		n := t.claim(hd.ID, d.Label)
		if n == nil {
			if len(t.nodes) >= maxNodes {
				t.dropped++
				return
			}
			n = &Node{start: e.Time}
			t.nodes = append(t.nodes, n)
		}
		n.runID, n.session, n.parent, n.agent, n.provider = d.RunID, d.ChildSession, hd.ID, d.Agent, d.Provider
		n.label, n.background, n.branch = d.Label, d.Background, d.Branch
		if n.background {
			n.jobStatus = subagent.JobRunning
		}
		t.byRun[d.RunID] = n
		if d.ChildSession != "" {
			t.bySess[d.ChildSession] = n
		}
		// An out-of-process child's events carry <parent>/<run>.
		tap := hd.ID + "/" + d.RunID
		t.bySess[tap] = n
		if a := t.pending[tap]; a != nil {
			n.act = *a
			delete(t.pending, tap)
		}
	case session.SubagentEnd:
		n := t.byRun[d.RunID]
		if n == nil {
			return
		}
		n.end, n.stop, n.diagnostic = e.Time, d.StopReason, d.Diagnostic
		if d.DurationMs > 0 { // the log's own measure, from the call's start
			n.end = n.start.Add(time.Duration(d.DurationMs) * time.Millisecond)
		}
		if d.Branch != "" {
			n.branch = d.Branch
		}
		if d.Usage != nil {
			n.usage = *d.Usage
		}
		if n.background {
			t.lastJob = n
		}
	case session.JobNotice:
		if n := t.lastJob; n != nil && n.parent == hd.ID {
			n.jobID, n.jobStatus = d.JobID, d.Status
			t.lastJob = nil
		}
	case session.ToolCall:
		t.callStarted(hd.ID, e)
		t.live(hd, e)
		t.childCall(hd.ID, d)
	case session.ToolResult:
		t.callEnded(hd.ID, e)
		t.childResult(hd.ID, d)
	case session.AssistantChunk, session.StepStart:
		t.live(hd, e)
	case session.AssistantMessage:
		n := t.bySess[hd.ID]
		if n == nil || !n.end.IsZero() {
			return
		}
		if d.Usage != nil {
			n.usage = n.usage.Add(*d.Usage)
		}
	}
}

// childCall remembers a call of a child's own session (by its id) until
// its result.
func (t *Tree) childCall(sess string, d session.ToolCall) {
	n := t.bySess[sess]
	if n == nil {
		return
	}
	if n.calls == nil {
		n.calls = map[string]string{}
	}
	if len(n.calls) < maxCalls {
		n.calls[d.CallID] = d.Name
	}
}

// childResult counts a refused call of a child's own session.
func (t *Tree) childResult(sess string, d session.ToolResult) {
	n := t.bySess[sess]
	if n == nil {
		return
	}
	name, ok := n.calls[d.CallID]
	delete(n.calls, d.CallID)
	if !ok || !d.IsError || !tool.IsRefusal(name, d.Content) {
		return
	}
	n.refused++
	if n.refusal == "" {
		n.refusal = termtext.Cut(termtext.OneLine(d.Content), 200)
	}
}

// Jobs are the background runs, in start order.
func (t *Tree) Jobs() []*Node {
	var out []*Node
	for _, n := range t.nodes {
		if n.background {
			out = append(out, n)
		}
	}
	return out
}

// Render draws the tree under the session root, width columns wide.
// Every field that came from a model or an agent file is escaped.
func (t *Tree) Render(root string, now time.Time, width int, st Styles) []string {
	var lines []string
	var walk func(parent string, depth int)
	walk = func(parent string, depth int) {
		for _, n := range t.nodes {
			if n.parent != parent {
				continue
			}
			lines = append(lines, termtext.Fit(strings.Repeat("  ", depth)+n.Line(now, st), width))
			if a := n.act.line(); a != "" && n.end.IsZero() {
				lines = append(lines, termtext.Fit(strings.Repeat("  ", depth)+"    "+st.Dim.Render(a), width))
			}
			if n.diagnostic != "" {
				lines = append(lines, termtext.Fit(strings.Repeat("  ", depth)+"    "+st.Dim.Render(termsafe.EscapeLine(n.diagnostic)), width))
			}
			if n.refusal != "" {
				lines = append(lines, termtext.Fit(strings.Repeat("  ", depth)+"    "+st.Dim.Render("refused: "+termsafe.EscapeLine(n.refusal)), width))
			}
			walk(n.session, depth+1)
		}
	}
	walk(root, 0)
	if t.dropped > 0 {
		lines = append(lines, termtext.Fit(fmt.Sprintf("… and %d more children", t.dropped), width))
	}
	return lines
}

// Line is one child's row: state, agent, provider, label, elapsed, tokens
// and cost, and on settlement its stop reason.
func (n *Node) Line(now time.Time, st Styles) string {
	mark, state := "◌", st.Running.Render("running")
	if n.runID == "" {
		state = st.Running.Render("starting")
	}
	end := now
	if !n.end.IsZero() {
		end = n.end
		mark = "●"
		state = st.Stop(n.stop)
	}
	elapsed := end.Sub(n.start)
	if elapsed < 0 {
		elapsed = 0
	}
	kind := ""
	if n.background {
		kind = " [job"
		if n.jobID != "" {
			kind += " " + termsafe.EscapeLine(n.jobID)
		}
		kind += "]"
	}
	label := ""
	if n.label != "" {
		label = " " + st.Dim.Render(termsafe.EscapeLine(termtext.Cut(n.label, 40)))
	}
	if n.branch != "" {
		label += " " + st.Dim.Render("["+termsafe.EscapeLine(n.branch)+"]")
	}
	if n.refused > 0 {
		state += st.Stop(fmt.Sprintf(" (%d refused)", n.refused))
	}
	return fmt.Sprintf("%s %s (%s)%s%s  %s  %s  %s", mark, termsafe.EscapeLine(n.agent), termsafe.EscapeLine(n.provider),
		kind, label, state, Elapsed(elapsed), Usage(n.usage))
}

// Elapsed is a duration as the rows and the status line show it.
func Elapsed(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// Usage is "N tok $C"; "N tok unpriced" when the cost is unknown (nil)
// or reported as zero for tokens used — a pi child reports $0 where reins
// has no price, so "$0.0000" and "$?" said one thing two ways (issue 48);
// no cost at all before any token.
func Usage(u llm.Usage) string {
	n := u.InputTokens + u.OutputTokens
	switch {
	case n == 0 && (u.CostUSD == nil || *u.CostUSD == 0):
		return tokens(n) + " tok"
	case u.CostUSD == nil || *u.CostUSD == 0:
		return tokens(n) + " tok unpriced"
	}
	return fmt.Sprintf("%s tok $%.4f", tokens(n), *u.CostUSD)
}

func tokens(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// Len is the number of rows (children shown).
func (t *Tree) Len() int { return len(t.nodes) }
