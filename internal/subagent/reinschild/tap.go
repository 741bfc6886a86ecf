package reinschild

import (
	"encoding/json"
	"sync"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/sdk"
)

// maxTapped bounds the sessions a forwarder places in the tree.
const maxTapped = 1024

// forwarder reads a reins child's session/events as they arrive. It
// charges the run's budget with every model response of the child's tree
// (assistant/message usage, and the usage of its acp, pi and reins children at
// their subagent/end), so the parent's budget sees the child's spending
// live; and it passes every event to the run's tap, placed in the tree:
// the first session the runtime reports is the child's own, and
// subagent/started names the parents of the others (a session reported
// before its subagent/started is placed under the child's own).
type forwarder struct {
	tap    *subagent.Tap
	budget *budget.Budget
	remote map[string]bool // runs of the tree whose events do not come through: acp, pi and reins children

	mu     sync.Mutex
	root   string
	parent map[string]string
	depth  map[string]int
}

func newForwarder(tap *subagent.Tap, b *budget.Budget) *forwarder {
	if tap == nil && b == nil {
		return nil
	}
	return &forwarder{tap: tap, budget: b, remote: map[string]bool{}, parent: map[string]string{}, depth: map[string]int{}}
}

// charge counts the usage one event of the child's tree reports.
func (f *forwarder) charge(sessionID string, e session.Event) {
	if f.budget == nil {
		return
	}
	switch d := e.Payload.(type) {
	case session.AssistantMessage:
		if d.Usage != nil {
			f.budget.Charge(*d.Usage)
		}
	case session.SubagentStart:
		if d.Provider == config.ProviderACP || d.Provider == config.ProviderPi || d.Provider == config.ProviderReins {
			f.mu.Lock()
			if len(f.remote) < maxTapped {
				f.remote[sessionID+"/"+d.RunID] = true
			}
			f.mu.Unlock()
		}
	case session.SubagentEnd:
		if d.Usage == nil {
			return
		}
		f.mu.Lock()
		remote := f.remote[sessionID+"/"+d.RunID]
		f.mu.Unlock()
		if remote {
			f.budget.Charge(*d.Usage)
		}
	}
}

// notify handles one notification; it never blocks.
func (f *forwarder) notify(method string, params json.RawMessage) {
	if f == nil {
		return
	}
	switch method {
	case sdk.NotifySubagentStarted:
		var p sdk.SubagentStartedParams
		if json.Unmarshal(params, &p) != nil || p.ChildSessionID == "" {
			return
		}
		f.mu.Lock()
		if len(f.parent) < maxTapped {
			f.parent[p.ChildSessionID] = p.ParentSessionID
			f.depth[p.ChildSessionID] = f.depth[p.ParentSessionID] + 1
		}
		f.mu.Unlock()
	case sdk.NotifySessionEvent:
		var p sdk.SessionEventParams
		if json.Unmarshal(params, &p) != nil || p.SessionID == "" {
			return
		}
		f.mu.Lock()
		if f.root == "" {
			f.root = p.SessionID
		}
		parent, depth := f.tap.ParentSession(), 0
		if p.SessionID != f.root {
			parent, depth = f.root, 1
			if pp, ok := f.parent[p.SessionID]; ok {
				parent, depth = pp, f.depth[p.SessionID]
			}
		}
		f.mu.Unlock()
		// An event whose data is not its type's is passed on as an
		// unknown one is: its data as it came, no payload, nothing charged.
		e, _ := session.NewEvent(p.Event.Type, p.Event.Seq, p.Event.Time, p.Event.Data)
		f.charge(p.SessionID, e)
		f.tap.Forward(p.SessionID, parent, depth, e)
	}
}
