package mcpserve

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tool"
)

// placeKey is what a server session is for: a workspace, a model, an
// effort and a mode. Calls that share them share the session (their
// children are its children, as a batch's tasks are its session's).
type placeKey struct {
	dir, model, effort string
	perm               tool.Permission
}

// place is one server session: its harness (the base one, or one opened
// for its workspace or effort), the session whose manager runs its calls,
// and the calls running there, found by their label and child session.
type place struct {
	h    *harness.Harness
	sess *harness.Session
	turn int

	mu        sync.Mutex
	id        string // the server session's id, once it is made
	byLabel   map[string]*call
	bySession map[string]*call
	// early is the latest activity of children whose subagent/start is
	// not written yet (a child runs before its parent's log names it),
	// by child session; at most maxEarly.
	early map[string]string
}

const maxEarly = 64

// place opens (or finds) the server session for k. Configuration, trust
// and agents are those of k.dir, as for `reins run` there.
func (s *Server) place(k placeKey) (*place, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.places[k]; p != nil {
		return p, nil
	}
	if s.ctx.Err() != nil {
		return nil, fmt.Errorf("the server is shutting down")
	}
	if len(s.places) >= maxPlaces {
		return nil, fmt.Errorf("this server already holds %d sessions (one per workspace, model, effort and permission); restart it to use another", maxPlaces)
	}
	h := s.o.Base
	if k.dir != h.Cwd || k.effort != "" {
		opts := s.o.Harness
		opts.Cwd = k.dir
		if k.effort != "" {
			e, err := llm.ParseEffort(k.effort)
			if err != nil {
				return nil, fmt.Errorf("effort: want low, medium or high")
			}
			opts.Effort = e
		}
		var err error
		if h, err = harness.New(opts); err != nil {
			return nil, err
		}
		h.Engine = s.o.Engine
	}
	p := &place{h: h, byLabel: map[string]*call{}, bySession: map[string]*call{}, early: map[string]string{}}
	fail := func(err error) (*place, error) {
		if h != s.o.Base {
			h.Close()
		}
		return nil, err
	}
	m, err := h.ResolveModel(k.model, s.o.BaseURL)
	if err != nil {
		return fail(err)
	}
	if h != s.o.Base {
		s.observeOn(h)
	}
	sess, err := h.NewSession(harness.SessionOptions{Model: m, MaxSteps: s.o.MaxSteps, MaxTokens: s.o.MaxTokens,
		Permission: k.perm, Agent: "mcp-serve", Origin: session.OriginMCPServe, Budget: s.o.Budget,
		ChildQuestions: questions{s: s, p: p}})
	if err != nil {
		return fail(err)
	}
	p.mu.Lock()
	p.sess, p.id = sess, sess.Log.Header().ID
	p.mu.Unlock()
	s.obsMu.Lock()
	s.observed = append(s.observed, p)
	s.obsMu.Unlock()
	mgr := sess.Subagents
	// The server's queue (fifo) holds calls beyond maxParallel in order;
	// the manager's own limit must never hold one it let through.
	mgr.Limits.MaxParallel = s.queue.n
	// The calls are the server session's children: depth 1, which even
	// subagents.maxDepth 0 must allow.
	mgr.Limits.MaxDepth = max(mgr.Limits.MaxDepth, 1)
	mgr.OutputTool = "child_output"
	p.turn = sess.Log.NextTurn()
	if _, err := sess.Log.Append(session.TypeTurnStart, session.TurnStart{Turn: p.turn}); err != nil {
		s.o.Base.Logf("mcp serve session: turn/start: %v", err)
	}
	s.places[k] = p
	return p, nil
}

// close ends the session's one turn and closes it (and its harness, when
// it is not the base one). Its manager's Close tears down what is left.
func (p *place) close(base *harness.Harness) {
	if _, err := p.sess.Log.Append(session.TypeTurnEnd, session.TurnEnd{Turn: p.turn, Reason: session.ReasonCompleted}); err != nil {
		base.Logf("mcp serve session: turn/end: %v", err)
	}
	if err := p.sess.Close(); err != nil {
		base.Logf("mcp serve session close: %v", err)
	}
	if p.h != base {
		p.h.Close()
	}
}

func (p *place) watch(c *call) {
	p.mu.Lock()
	p.byLabel[c.label] = c
	p.mu.Unlock()
}

func (p *place) unwatch(c *call) {
	p.mu.Lock()
	delete(p.byLabel, c.label)
	if _, sess := c.ids(); sess != "" && p.bySession[sess] == c {
		delete(p.bySession, sess)
	}
	p.mu.Unlock()
}

// observeOn routes every event of h's sessions (in-process children at
// any depth) and of its out-of-process children to the places: set once,
// before h makes a session, so the hooks never change while they run.
func (s *Server) observeOn(h *harness.Harness) {
	prevObs, prevRemote := h.Observe, h.ObserveRemote
	h.Observe = func(hd session.Header, e session.Event) {
		if prevObs != nil {
			prevObs(hd, e)
		}
		s.observe(hd, e)
	}
	h.ObserveRemote = func(hd session.Header, e session.Event) {
		if prevRemote != nil {
			prevRemote(hd, e)
		}
		s.observe(hd, e)
	}
}

func (s *Server) observe(hd session.Header, e session.Event) {
	s.obsMu.RLock()
	ps := s.observed
	s.obsMu.RUnlock()
	for _, p := range ps {
		p.observe(hd, e)
	}
}

// observe routes an event: the server session's subagent/start names a
// call's child and its session; an event of that child session is the
// call's latest activity.
func (p *place) observe(hd session.Header, e session.Event) {
	p.mu.Lock()
	id := p.id
	p.mu.Unlock()
	if id == "" {
		return
	}
	if hd.ID == id {
		if e.Type != session.TypeSubagentStart {
			return
		}
		var st session.SubagentStart
		if json.Unmarshal(e.Data, &st) != nil {
			return
		}
		p.mu.Lock()
		c := p.byLabel[st.Label]
		if c != nil && st.ChildSession != "" {
			p.bySession[st.ChildSession] = c
		}
		early, had := p.early[st.ChildSession]
		delete(p.early, st.ChildSession)
		p.mu.Unlock()
		if c == nil {
			return
		}
		child := st.Continues
		if child == "" {
			child = session.ChildID(hd.ID, st.RunID)
		}
		c.mu.Lock()
		c.child, c.session = child, st.ChildSession
		if had {
			c.activity = early
			c.actSeq++
		}
		c.mu.Unlock()
		c.markStarted()
		return
	}
	a := activity(e)
	p.mu.Lock()
	c := p.bySession[hd.ID]
	if c == nil && a != "" && hd.ParentSession == id {
		if _, ok := p.early[hd.ID]; ok || len(p.early) < maxEarly {
			p.early[hd.ID] = a
		}
	}
	p.mu.Unlock()
	if c == nil {
		return
	}
	if a != "" {
		c.mu.Lock()
		c.activity = a
		c.actSeq++
		c.mu.Unlock()
	}
}

// activity is the one line an event of a child says about what it is
// doing (a tool call, a line of its answer), escaped: child-written text.
func activity(e session.Event) string {
	switch e.Type {
	case session.TypeToolCall:
		var d session.ToolCall
		if json.Unmarshal(e.Data, &d) != nil || d.Name == "" {
			return ""
		}
		return "tool " + termsafe.Clip(termsafe.EscapeLine(d.Name), 80)
	case session.TypeAssistantMessage:
		var d session.AssistantMessage
		if json.Unmarshal(e.Data, &d) != nil {
			return ""
		}
		t := strings.TrimSpace(llm.BlocksText(d.Message.Content))
		if t == "" {
			return ""
		}
		if i := strings.IndexByte(t, '\n'); i >= 0 {
			t = t[:i]
		}
		return "says: " + termsafe.Clip(termsafe.EscapeLine(t), 120)
	}
	return ""
}
