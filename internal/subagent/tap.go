package subagent

import (
	"sync"
	"time"

	"github.com/reinsdev/reins/internal/session"
)

// Tap passes an out-of-process child's activity on to Request.Observe as
// session events of reins's vocabulary (docs/events.md), so a live stream
// (`reins run --stream-json`) shows ACP, pi and reins children like
// in-process ones. ACP and pi children keep no reins session: their
// events get a session id of the parent's and the run's ids
// (<parent>/<run>) and a sequence of their own. A nil *Tap (no observer)
// does nothing.
type Tap struct {
	observe func(session.Header, session.Event)
	header  session.Header

	mu  sync.Mutex
	seq int64
}

// NewTap returns the tap of req's run, nil when nobody observes.
func NewTap(req Request) *Tap {
	if req.Observe == nil {
		return nil
	}
	agent := ""
	if req.Agent != nil {
		agent = req.Agent.Name
	}
	return &Tap{observe: req.Observe, header: session.Header{
		ID: req.ParentSession + "/" + req.RunID, ParentSession: req.ParentSession,
		DelegationDepth: req.Depth, Agent: agent, Cwd: req.Cwd, Origin: session.OriginSubagent,
	}}
}

// Emit passes one event of the child's own (synthetic) session.
func (t *Tap) Emit(typ string, data any) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	e, err := session.MakeEvent(typ, t.seq, time.Now().UTC(), data)
	if err != nil {
		return
	}
	t.seq++
	t.observe(t.header, e)
}

// Forward passes an event of a reins child's real session sessionID, at
// depth below the run's own (0: the child itself; its descendants are
// deeper), whose parent session is parent.
func (t *Tap) Forward(sessionID, parent string, depth int, e session.Event) {
	if t == nil {
		return
	}
	h := t.header
	h.ID, h.ParentSession, h.DelegationDepth = sessionID, parent, t.header.DelegationDepth+depth
	if depth > 0 {
		h.Agent = "" // a grandchild's agent is not named in the protocol
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.observe(h, e)
}

// ParentSession is the session of the run's parent.
func (t *Tap) ParentSession() string {
	if t == nil {
		return ""
	}
	return t.header.ParentSession
}

// SessionID is the id the tap's synthetic events carry.
func (t *Tap) SessionID() string {
	if t == nil {
		return ""
	}
	return t.header.ID
}
