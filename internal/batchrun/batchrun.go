// Package batchrun is where a batch's tasks run (`reins batch`): each
// workspace's harness and the batch session whose children the tasks
// there are. It is the batch's composition root, above internal/harness,
// so that internal/batch (the task file, results, resume, the progress
// bar) builds no sessions (internal/importrules).
package batchrun

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/reinsdev/reins/internal/batch"
	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/tool"
)

// WorkspaceOptions are what a batch's workspaces are opened with: the
// batch's flags, its engine and its budget.
type WorkspaceOptions struct {
	// Base is the harness of the batch's own folder, which its caller
	// opened and closes; Harness is what another workspace's is opened
	// with (its Cwd is that workspace).
	Base    *harness.Harness
	Harness harness.Options
	// Notice is called for each workspace as it is checked, to say once
	// what its untrusted or broken files are.
	Notice func(*harness.Harness)
	// Model and BaseURL are the model spec every task runs on.
	Model, BaseURL      string
	MaxSteps, MaxTokens int
	Parallel            int // most tasks running at once
	Permission          tool.Permission
	Engine              subagent.Engine
	// Budget is the batch's: every task's child charges it.
	Budget *budget.Budget
}

// AgentError is a task that names an agent its workspace does not define:
// found before any task runs.
type AgentError struct{ Task, Agent, Dir string }

func (e *AgentError) Error() string {
	return fmt.Sprintf("task %s: no agent %q in %s (see reins agents)", e.Task, e.Agent, e.Dir)
}

// Workspaces are a batch's workspaces. Each is opened (its harness and
// its batch session, whose manager runs the tasks there) for a task and
// kept while tasks of it are left, but an idle one is closed once more
// than maxOpen are open: a batch across thousands of repositories holds a
// bounded number of logs and harnesses open, and a batch in one folder
// has one batch session.
type Workspaces struct {
	o WorkspaceOptions

	// children maps a task's label ("batch task ID") to its child
	// session, from the subagent/start events of the batch sessions, so
	// that each result names the session `reins log` shows.
	children sync.Map
	// runs maps a task's label to its run id, for an engine whose child
	// session is known only when the run settled (temporal).
	runs sync.Map

	mu   sync.Mutex
	left map[string]int // tasks not yet finished, by workspace
	open map[string]*workspace
}

// workspace is one workspace of a batch: its harness and the batch
// session whose children the tasks there are.
type workspace struct {
	h       *harness.Harness
	sess    *harness.Session
	running int // tasks of it running now
	// turn is the one turn the batch session's events are written in
	// (turn/start when it opens, turn/end when it closes), so its log
	// has a turn like every other session's; aborted makes that turn end
	// aborted (a task was cut by an interrupt or the budget).
	turn    int
	aborted atomic.Bool
}

// NewWorkspaces is the workspaces of a batch; Close closes what is left
// open.
func NewWorkspaces(o WorkspaceOptions) *Workspaces {
	return &Workspaces{o: o, left: map[string]int{}, open: map[string]*workspace{}}
}

// Check settles every task's workspace (its cwd made absolute) and agent
// (defaultAgent for a task that names none) before any task runs: a bad
// cwd, agent (AgentError) or model stops the batch at once.
func (ws *Workspaces) Check(tasks []batch.Task, defaultAgent string) error {
	base := ws.o.Base
	// Each workspace's agents, read once; its harness is closed at once.
	checked := map[string]*config.Agents{}
	for i, t := range tasks {
		dir := base.Cwd
		if t.Cwd != "" {
			dir = t.Cwd
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(base.Cwd, dir)
			}
			dir = filepath.Clean(dir)
		}
		agents := checked[dir]
		if agents == nil {
			h, err := ws.check(dir)
			if err != nil {
				return fmt.Errorf("task %s: %w", t.ID, err)
			}
			agents = h.Agents
			if h != base {
				h.Close()
			}
			checked[dir] = agents
		}
		if t.Agent == "" {
			tasks[i].Agent = defaultAgent
		}
		name := tasks[i].Agent
		if name == "" {
			name = "general"
		}
		if _, ok := agents.Get(name); !ok {
			return &AgentError{Task: t.ID, Agent: name, Dir: dir}
		}
		tasks[i].Cwd = dir
		ws.left[dir]++
	}
	return nil
}

// Run runs task t (checked) as a child of its workspace's batch session,
// under key (subagent.Params.Key; empty: none), and returns its result.
func (ws *Workspaces) Run(ctx context.Context, t batch.Task, key string) batch.Result {
	p, err := ws.acquire(t.Cwd)
	defer ws.release(t.Cwd, p)
	var r outcome.Result
	if err == nil {
		r, err = p.sess.Subagents.Run(ctx, subagent.Params{Description: taskLabel(t.ID), Prompt: t.Prompt, Agent: t.Agent, Key: key})
		if err == nil && r.StopReason == outcome.StopAborted {
			p.aborted.Store(true)
		}
	}
	if err != nil {
		// Checked before the batch started (workspace, agent, model);
		// what is left is the file system or a refused start.
		ws.o.Base.Logf("batch task %s: %v", t.ID, err)
		r = outcome.Result{StopReason: outcome.StopError}
	}
	res := batch.FromSubagent(t.ID, r)
	if id, ok := ws.children.LoadAndDelete(taskLabel(t.ID)); ok {
		res.SessionID = id.(string)
	}
	if runID, ok := ws.runs.LoadAndDelete(taskLabel(t.ID)); ok && res.SessionID == "" {
		// A temporal child's session is on its worker, known only
		// with its result (the engine's ChildSession).
		if e, ok := ws.o.Engine.(interface{ ChildSession(string) string }); ok {
			res.SessionID = e.ChildSession(runID.(string))
		}
	}
	return res
}

// maxOpen is how many workspaces may stay open while idle.
func (ws *Workspaces) maxOpen() int { return max(2*ws.o.Parallel, 16) }

// harness is the harness of workspace dir: the base one for the batch's
// own cwd.
func (ws *Workspaces) harness(dir string) (*harness.Harness, error) {
	if dir == ws.o.Base.Cwd {
		return ws.o.Base, nil
	}
	opts := ws.o.Harness
	opts.Cwd = dir
	h, err := harness.New(opts)
	if err != nil {
		return nil, err
	}
	h.Engine = ws.o.Engine
	return h, nil
}

// check opens dir's harness before the batch starts, says once what its
// untrusted or broken files are, and checks that the model resolves there.
func (ws *Workspaces) check(dir string) (*harness.Harness, error) {
	h, err := ws.harness(dir)
	if err != nil {
		return nil, err
	}
	if ws.o.Notice != nil {
		ws.o.Notice(h)
	}
	if _, err := h.ResolveModel(ws.o.Model, ws.o.BaseURL); err != nil {
		if h != ws.o.Base {
			h.Close()
		}
		return nil, err
	}
	return h, nil
}

func (ws *Workspaces) acquire(dir string) (*workspace, error) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if p := ws.open[dir]; p != nil {
		p.running++
		return p, nil
	}
	h, err := ws.harness(dir)
	if err != nil {
		return nil, err
	}
	m, err := h.ResolveModel(ws.o.Model, ws.o.BaseURL)
	if err == nil {
		var sess *harness.Session
		sess, err = h.NewSession(harness.SessionOptions{Model: m, MaxSteps: ws.o.MaxSteps, MaxTokens: ws.o.MaxTokens, Permission: ws.o.Permission, Agent: "batch", Origin: session.OriginBatch, Budget: ws.o.Budget,
			Observe: ws.observe})
		if err == nil {
			mgr := sess.Subagents
			mgr.Limits.MaxParallel = ws.o.Parallel
			// The tasks are the batch session's children: depth 1, which
			// even subagents.maxDepth 0 must allow.
			mgr.Limits.MaxDepth = max(mgr.Limits.MaxDepth, 1)
			p := &workspace{h: h, sess: sess, running: 1, turn: sess.Log.NextTurn()}
			if _, err := sess.Log.Append(session.TypeTurnStart, session.TurnStart{Turn: p.turn}); err != nil {
				ws.o.Base.Logf("batch session: turn/start: %v", err)
			}
			ws.open[dir] = p
			return p, nil
		}
	}
	if h != ws.o.Base {
		h.Close()
	}
	return nil, err
}

// release counts a task of dir finished (p nil: it never opened) and
// closes the workspaces that are idle and either done or over maxOpen.
func (ws *Workspaces) release(dir string, p *workspace) {
	ws.mu.Lock()
	ws.left[dir]--
	if p != nil {
		p.running--
	}
	var closing []*workspace
	for d, q := range ws.open {
		if q.running == 0 && (ws.left[d] <= 0 || len(ws.open) > ws.maxOpen()) {
			closing = append(closing, q)
			delete(ws.open, d)
		}
	}
	ws.mu.Unlock()
	for _, q := range closing {
		ws.close(q)
	}
}

func (ws *Workspaces) close(p *workspace) {
	reason := session.ReasonCompleted
	if p.aborted.Load() {
		reason = session.ReasonAborted
	}
	if _, err := p.sess.Log.Append(session.TypeTurnEnd, session.TurnEnd{Turn: p.turn, Reason: reason}); err != nil {
		ws.o.Base.Logf("batch session: turn/end: %v", err)
	}
	if err := p.sess.Close(); err != nil {
		ws.o.Base.Logf("batch session close: %v", err)
	}
	if p.h != ws.o.Base {
		p.h.Close()
	}
}

// Close closes what an interrupted batch left open.
func (ws *Workspaces) Close() {
	ws.mu.Lock()
	open := ws.open
	ws.open = map[string]*workspace{}
	ws.mu.Unlock()
	for _, p := range open {
		ws.close(p)
	}
}

// taskLabel is the label of task id's child run.
func taskLabel(id string) string { return "batch task " + id }

// observe notes each task's child session as it starts.
func (ws *Workspaces) observe(_ session.Header, e session.Event) {
	st, ok := e.Payload.(session.SubagentStart)
	if !ok {
		return
	}
	if st.ChildSession != "" {
		ws.children.Store(st.Label, st.ChildSession)
	} else if st.RunID != "" {
		ws.runs.Store(st.Label, st.RunID)
	}
}
