package childtree

import (
	"encoding/json"
	"strings"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tui/termtext"
	"github.com/reinsdev/reins/internal/tui/toolsummary"
)

// Live children (issue 30 item 6): while a child runs, its row in the
// tree shows what it is doing now — its latest tool call or the last line
// of the text it is writing — from the child's own events: an in-process
// child's log, and the events an ACP, pi or reins child's stream is mapped
// to (subagent.Tap, through the harness's ObserveRemote). The row appears
// when the parent's subagent call starts, before the child's process is
// up (an ACP agent's handshake can take seconds), and takes the child's
// identity when its subagent/start comes.

// Bounds of the live activity kept.
const (
	maxLiveTail    = 512 // bytes of a child's latest text kept for its row
	maxPendingLive = 64  // children whose events came before their subagent/start
)

// activity is what a running child did last.
type activity struct {
	text string // the tail of its streamed text (raw; escaped when drawn)
	call string // its latest tool call, "name summary" (raw)
	// callLast: the call came after the text, so the row shows the call.
	callLast bool
}

// fold applies one of the child's events.
func (a *activity) fold(e session.Event) {
	switch d := e.Payload.(type) {
	case session.AssistantChunk:
		if d.Chunk.Type != llm.ChunkTextDelta || d.Chunk.Delta == "" {
			return
		}
		a.text = termtext.LastBytes(a.text+d.Chunk.Delta, maxLiveTail)
		a.callLast = false
	case session.ToolCall:
		a.call = d.Name
		if s := toolsummary.Of(d.Arguments); s != "" && s != "{}" {
			a.call += " " + s
		}
		a.callLast = true
	case session.StepStart:
		a.text = "" // a new step's text starts afresh
	}
}

// line is the activity as one escaped line, "" when there is none.
func (a *activity) line() string {
	if a.callLast && a.call != "" {
		return "⋯ " + termsafe.EscapeLine(termtext.OneLine(a.call))
	}
	lines := strings.Split(strings.TrimRight(a.text, " \t\r\n"), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return ""
	}
	return "“" + termsafe.EscapeLine(termtext.OneLine(last)) + "”"
}

// Known reports whether events of hd belong in the tree: a child's it
// shows, or an out-of-process child's (session id <parent>/<run>, the tap's
// ids) whose subagent/start has not come yet.
func (t *Tree) Known(hd session.Header, root string) bool {
	if t.bySess[hd.ID] != nil {
		return true
	}
	p := hd.ParentSession
	return p != "" && (p == root || t.bySess[p] != nil) && strings.HasPrefix(hd.ID, p+"/")
}

// live folds a child's event into its row's activity; events of a child
// whose subagent/start is still to come wait (bounded) for it.
func (t *Tree) live(hd session.Header, e session.Event) {
	switch e.Payload.(type) {
	case session.AssistantChunk, session.ToolCall, session.StepStart:
	default:
		return
	}
	if n := t.bySess[hd.ID]; n != nil {
		if n.end.IsZero() {
			n.act.fold(e)
		}
		return
	}
	if p := hd.ParentSession; p == "" || !strings.HasPrefix(hd.ID, p+"/") {
		return // not an out-of-process child's
	}
	if t.pending == nil {
		t.pending = map[string]*activity{}
	}
	a := t.pending[hd.ID]
	if a == nil {
		if len(t.pending) >= maxPendingLive {
			return
		}
		a = &activity{}
		t.pending[hd.ID] = a
	}
	a.fold(e)
}

// callStarted adds a row for a subagent call of session parent the moment
// the call is made; its subagent/start fills it in (claim).
func (t *Tree) callStarted(parent string, e session.Event) {
	d, ok := e.Payload.(session.ToolCall)
	if !ok || d.Name != "subagent" {
		return
	}
	if len(t.nodes) >= maxNodes {
		return // subagent/start counts it as dropped
	}
	var p struct {
		Description string `json:"description"`
		Agent       string `json:"agent"`
		Background  bool   `json:"run_in_background"`
	}
	_ = json.Unmarshal([]byte(d.Arguments), &p)
	agent := p.Agent
	if agent == "" {
		agent = "general"
	}
	t.nodes = append(t.nodes, &Node{callID: d.CallID, parent: parent, agent: agent, provider: "…",
		label: p.Description, background: p.Background, start: e.Time})
}

// claim returns the row a subagent call of parent labelled label made
// before its subagent/start, nil if there is none.
func (t *Tree) claim(parent, label string) *Node {
	var first *Node
	for _, n := range t.nodes {
		if n.callID == "" || n.runID != "" || n.parent != parent {
			continue
		}
		if n.label == label {
			return n
		}
		if first == nil {
			first = n
		}
	}
	return first
}

// callEnded drops the row of a subagent call that ended without starting
// a child (refused, over budget, failed to start: its result says why).
func (t *Tree) callEnded(parent string, e session.Event) {
	d, ok := e.Payload.(session.ToolResult)
	if !ok {
		return
	}
	for i, n := range t.nodes {
		if n.callID == d.CallID && n.runID == "" && n.parent == parent {
			t.nodes = append(t.nodes[:i], t.nodes[i+1:]...)
			return
		}
	}
}
