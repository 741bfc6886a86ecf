package reinschild

import (
	"encoding/json"
	"sync"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/sdk"
)

// maxTapped bounds the sessions a forwarder places in the tree.
const maxTapped = 1024

// forwarder passes a reins child's session/events to the run's tap,
// placed in the tree: the first session the runtime reports is the
// child's own; subagent/started names the parents of the others. A
// session reported before its subagent/started is placed under the
// child's own.
type forwarder struct {
	tap *subagent.Tap

	mu     sync.Mutex
	root   string
	parent map[string]string
	depth  map[string]int
}

func newForwarder(tap *subagent.Tap) *forwarder {
	if tap == nil {
		return nil
	}
	return &forwarder{tap: tap, parent: map[string]string{}, depth: map[string]int{}}
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
		f.tap.Forward(p.SessionID, parent, depth, session.Event{Type: p.Event.Type, Seq: p.Event.Seq, Time: p.Event.Time, Data: p.Event.Data})
	}
}
