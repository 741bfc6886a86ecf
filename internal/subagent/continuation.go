package subagent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
)

// Continuer is a provider whose children can take a follow-up after their
// run settled and was disposed (a cold resume): Continue starts a run of
// the child whose session is req.ChildSession, with its whole earlier
// conversation and req.Prompt as the next user message. Errors follow
// Provider.Start.
type Continuer interface {
	Continue(ctx context.Context, req Request) (Run, error)
}

// Keeper is a settled run that can stay alive for a follow-up: Again
// starts the next run on the same child (the same process or agent), and
// the new run owns the child from then on, so the kept run is never
// disposed after Again succeeded. A run that is not a Keeper is disposed
// as soon as it settles; its continuation is a cold resume.
type Keeper interface {
	Again(ctx context.Context, req Request) (Run, error)
}

// ErrNotContinuable is a continuation for a child whose provider cannot
// resume it.
var ErrNotContinuable = errors.New("this child cannot be continued")

// maxChildren bounds the child table; beyond it the oldest idle children
// are forgotten (a kept one is torn down first).
const maxChildren = 512

// maxHeldOutput and maxHeldTotal bound the child output the manager holds
// for subagent_output: per child and in all. Output beyond them is still
// in the child's log.
const (
	maxHeldOutput = 8 << 20
	maxHeldTotal  = 32 << 20
)

// childEntry is one named child: its first run and every continuation.
type childEntry struct {
	id       string
	agent    string // the agent definition it runs as
	provider string
	session  string // the child's session (Run.Session()): what a cold resume loads
	busy     bool   // a run of it is under way
	started  bool   // a run of it was published: there is something to continue
	kept     Run    // kept alive while idle; nil when torn down
	keptAt   int    // when it was kept, for eviction
	keptTime time.Time
	timer    *time.Timer
	// disposing is closed when its teardown finished; nil when none runs.
	disposing chan struct{}
	output    string // the rendered output of its latest run (held part)
	size      int    // the full size of that output in bytes
	seq       int    // when the output was recorded, for eviction
}

// children is the manager's child table: bounded, with its own lock, so a
// continuation never holds the manager's.
type children struct {
	mu      sync.Mutex
	byID    map[string]*childEntry
	order   []string // ids, oldest first
	held    int      // bytes of output held in all
	seq     int
	tearing int            // kept runs being disposed
	wg      sync.WaitGroup // the disposals under way, which Close waits for
	loaded  bool
	closed  bool
}

// ChildID is the id the model uses to name a child (session.ChildID, the
// one rule, which the commands that find a child by it share).
func ChildID(parentSession, runID string) string { return session.ChildID(parentSession, runID) }

// loadChildren rebuilds the child table from the parent's own log (a
// resumed parent continues the children of its earlier runs) and returns
// the highest run number used, so new run ids never repeat old ones.
func (m *Manager) loadChildren() int {
	k := &m.kids
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.loaded {
		return 0
	}
	k.loaded = true
	if k.byID == nil {
		k.byID = map[string]*childEntry{}
	}
	// A new session's log holds no children until this Manager starts
	// them: reading the file back would find none.
	if m.Log == nil || m.Log.Path() == "" || !m.Log.MayHold(session.TypeSubagentStart) {
		return 0
	}
	ld, err := session.Load(m.Log.Path())
	if err != nil {
		return 0
	}
	parent, maxRun := ld.Header.ID, 0
	byRun := map[string]*childEntry{} // run id -> its child
	for _, e := range ld.Events {
		if d, ok := e.Payload.(session.SubagentEnd); ok {
			// The output subagent_output pages through after a resume:
			// the child's result as the parent's log recorded it, rendered
			// as its tool result was.
			if c := byRun[d.RunID]; c != nil {
				r := outcome.Result{StopReason: outcome.StopReason(d.StopReason), Diagnostic: d.Diagnostic}
				if d.LastAssistantMessage != nil {
					r.Output = d.LastAssistantMessage.Content
				}
				k.hold(c, Render(r).Content)
			}
			continue
		}
		d, ok := e.Payload.(session.SubagentStart)
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(d.RunID, "run-")); err == nil && n > maxRun {
			maxRun = n
		}
		id := d.Continues
		if id == "" {
			id = ChildID(parent, d.RunID)
		}
		c := k.byID[id]
		if c == nil {
			c = &childEntry{id: id, agent: d.Agent, provider: d.Provider}
			k.add(c)
		}
		c.started = true
		if d.ChildSession != "" {
			c.session = d.ChildSession
		}
		byRun[d.RunID] = c
	}
	return maxRun
}

// add records a new child, forgetting the oldest idle ones beyond
// maxChildren. k.mu is held.
func (k *children) add(c *childEntry) {
	k.byID[c.id] = c
	k.order = append(k.order, c.id)
	for i := 0; len(k.byID) > maxChildren && i < len(k.order); {
		old := k.byID[k.order[i]]
		if old == nil || old.busy || old.kept != nil {
			i++
			continue
		}
		k.held -= len(old.output)
		delete(k.byID, old.id)
		k.order = append(k.order[:i], k.order[i+1:]...)
	}
}

// entry returns the child of req, recording it first if it is new: the
// run's start (childStarted) and its end (childDone) may each be the first
// the table hears of a child, and both must record it the same way (an
// empty provider is the in-process one). k.mu is held.
func (k *children) entry(req Request) *childEntry {
	if k.byID == nil {
		k.byID = map[string]*childEntry{}
	}
	c := k.byID[req.ChildID]
	if c == nil {
		provider := req.Agent.Provider
		if provider == "" {
			provider = config.ProviderInProcess
		}
		c = &childEntry{id: req.ChildID, agent: req.Agent.Name, provider: provider}
		k.add(c)
	}
	return c
}

func (k *children) get(id string) *childEntry {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.byID[id]
}

// continueRequest builds the request of a continuation of child p.Continue:
// the child's agent, provider and session, and a provider that reuses the
// kept child or resumes it cold. The child is marked busy until its run
// is recorded (childDone).
func (m *Manager) continueRequest(p Params) (Request, Provider, error) {
	if p.Fork {
		return Request{}, nil, errors.New("continue and fork exclude each other: a fork starts a new child")
	}
	if strings.TrimSpace(p.Prompt) == "" {
		return Request{}, nil, errors.New("subagent needs a prompt")
	}
	k := &m.kids
	k.mu.Lock()
	c := k.byID[p.Continue]
	if c == nil {
		k.mu.Unlock()
		return Request{}, nil, fmt.Errorf("no child %q in this session: a child can be continued only by the session that started it (its id is the last line of its result, child: <id>)", clipID(p.Continue))
	}
	if c.busy {
		k.mu.Unlock()
		return Request{}, nil, fmt.Errorf("child %s is still running; wait for its result (job_output) before continuing it", c.id)
	}
	if !c.started && c.kept == nil {
		k.mu.Unlock()
		return Request{}, nil, fmt.Errorf("child %s never started, so there is nothing to continue; start a new subagent", c.id)
	}
	if _, ok := m.Providers[c.provider].(Continuer); !ok && c.kept == nil {
		k.mu.Unlock()
		return Request{}, nil, fmt.Errorf("child %s was torn down after its idle timeout (subagents.idleTimeout) and its provider %s cannot resume it; start a new subagent", c.id, c.provider)
	}
	if p.Agent != "" && p.Agent != c.agent {
		k.mu.Unlock()
		return Request{}, nil, fmt.Errorf("child %s runs as agent %q; leave agent out to continue it", c.id, c.agent)
	}
	k.mu.Unlock()
	req, prov, err := m.request(Params{Description: p.Description, Prompt: p.Prompt, Agent: c.agent, RunInBackground: p.RunInBackground})
	if err != nil {
		return Request{}, nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if c.busy || k.byID[c.id] != c { // raced with another continuation
		return Request{}, nil, fmt.Errorf("child %s is still running; wait for its result (job_output) before continuing it", c.id)
	}
	c.busy = true
	req.ChildID, req.Continues, req.ChildSession = c.id, c.id, c.session
	return req, resumer{c: c, base: prov, kids: k}, nil
}

// resumer starts a continuation: on the kept child when there is one,
// else by a cold resume of its session.
type resumer struct {
	c    *childEntry
	base Provider
	kids *children
}

func (r resumer) Start(ctx context.Context, req Request) (Run, error) {
	r.kids.mu.Lock()
	kept := r.c.kept
	if r.c.timer != nil {
		r.c.timer.Stop()
	}
	r.c.kept, r.c.timer = nil, nil
	wait := r.c.disposing
	r.kids.mu.Unlock()
	if kept != nil {
		if k, ok := kept.(Keeper); ok {
			run, err := k.Again(ctx, req)
			if err == nil {
				return run, nil
			}
		}
		// The kept child could not take the follow-up: tear it down and
		// resume cold, as after its idle timeout.
		_ = kept.Dispose()
	}
	if wait != nil {
		// Its idle teardown is under way: the cold resume opens what the
		// teardown is still closing (a session log, a session id).
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, &StartError{Err: ctx.Err()}
		}
	}
	cont, ok := r.base.(Continuer)
	if !ok {
		return nil, &StartError{Err: ErrNotContinuable}
	}
	return cont.Continue(ctx, req)
}

// childStarted records the child of a published run: a new child enters
// the table; a continuation's child learns its (possibly new) session.
func (m *Manager) childStarted(req Request, run Run) {
	k := &m.kids
	k.mu.Lock()
	defer k.mu.Unlock()
	c := k.entry(req)
	c.busy, c.started = true, true
	if s := run.Session(); s != "" {
		c.session = s
	}
}

// park ends a settled run's life: a Keeper stays alive for
// subagents.idleTimeout (a continuation reuses it), anything else is
// disposed now. At most maxKept children are kept; parking one more tears
// the longest-idle one down. Its error is for the host log.
func (m *Manager) park(req Request, run Run) error {
	idle := m.Limits.IdleTimeout
	if idle <= 0 {
		idle = config.DefaultIdleTimeout
	}
	k := &m.kids
	k.mu.Lock()
	c := k.byID[req.ChildID]
	if _, ok := run.(Keeper); !ok || c == nil || k.closed {
		k.mu.Unlock()
		return run.Dispose()
	}
	var evict *childEntry
	n := 0
	for _, o := range k.byID {
		if o.kept != nil {
			n++
			if evict == nil || o.keptAt < evict.keptAt {
				evict = o
			}
		}
	}
	if n < m.maxKept() {
		evict = nil
	}
	k.seq++
	c.kept, c.keptAt, c.keptTime = run, k.seq, time.Now()
	c.timer = time.AfterFunc(idle, func() { m.teardown(c, run) })
	var old Run
	if evict != nil {
		old = k.unkeep(evict)
	}
	k.mu.Unlock()
	if old != nil {
		m.dispose(evict, old)
	}
	return nil
}

// Pider is a run whose child is a process tree led by Pid: while it is
// kept, /jobs shows what it holds in memory (internal/procmem).
type Pider interface{ Pid() int }

// KeptChild is a child kept alive while idle, waiting for a continuation
// until subagents.idleTimeout stops it.
type KeptChild struct {
	ID, Agent, Provider string
	// Since is when it was kept; Stops when the idle timeout stops it.
	Since, Stops time.Time
	// Pid leads its process tree; 0 for an in-process child.
	Pid int
}

// KeptChildren lists the children kept alive while idle, oldest first.
func (m *Manager) KeptChildren() []KeptChild {
	idle := m.Limits.IdleTimeout
	if idle <= 0 {
		idle = config.DefaultIdleTimeout
	}
	k := &m.kids
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []KeptChild
	for _, id := range k.order {
		c := k.byID[id]
		if c == nil || c.kept == nil {
			continue
		}
		kc := KeptChild{ID: c.id, Agent: c.agent, Provider: c.provider, Since: c.keptTime, Stops: c.keptTime.Add(idle)}
		if p, ok := c.kept.(Pider); ok {
			kc.Pid = p.Pid()
		}
		out = append(out, kc)
	}
	return out
}

// maxKept bounds the children kept alive while idle: as many as may run
// at once.
func (m *Manager) maxKept() int {
	if n := m.Limits.MaxParallel; n > 0 {
		return n
	}
	return config.DefaultMaxParallel
}

// unkeep takes c's kept run for disposal: its timer stops and a
// continuation waits for the disposal (c.disposing). k.mu is held.
func (k *children) unkeep(c *childEntry) Run {
	run := c.kept
	if c.timer != nil {
		c.timer.Stop()
	}
	c.kept, c.timer = nil, nil
	if run != nil {
		k.tearing++
		k.wg.Add(1)
		c.disposing = make(chan struct{})
	}
	return run
}

// dispose disposes a run unkeep took and lets waiting continuations on.
func (m *Manager) dispose(c *childEntry, run Run) {
	if err := run.Dispose(); err != nil {
		m.logf("subagent %s teardown: %v", c.id, err)
	}
	k := &m.kids
	k.mu.Lock()
	k.tearing--
	close(c.disposing)
	c.disposing = nil
	k.mu.Unlock()
	k.wg.Done()
}

// teardown disposes a child kept past its idle timeout; a continuation
// comes back from its log.
func (m *Manager) teardown(c *childEntry, run Run) {
	k := &m.kids
	k.mu.Lock()
	if c.kept != run {
		k.mu.Unlock()
		return
	}
	k.unkeep(c)
	k.mu.Unlock()
	m.dispose(c, run)
}

// closeChildren tears down every kept child (the parent is closing) and
// keeps new ones from being kept.
func (m *Manager) closeChildren() {
	k := &m.kids
	k.mu.Lock()
	k.closed = true
	type pair struct {
		c   *childEntry
		run Run
	}
	var kept []pair
	for _, c := range k.byID {
		if c.kept != nil {
			kept = append(kept, pair{c, k.unkeep(c)})
		}
	}
	k.mu.Unlock()
	for _, p := range kept {
		m.dispose(p.c, p.run)
	}
	k.wg.Wait() // idle teardowns that were under way
}

// Kept reports how many finished children are alive: kept for a
// continuation, or still being torn down.
func (m *Manager) Kept() int {
	k := &m.kids
	k.mu.Lock()
	defer k.mu.Unlock()
	n := k.tearing
	for _, c := range k.byID {
		if c.kept != nil {
			n++
		}
	}
	return n
}

// Release tears down the kept child whose session is childSession, so
// that session can be opened elsewhere (an SDK client prompting the child
// session directly). It reports whether one was kept; a continuation
// afterwards resumes the child from its log.
func (m *Manager) Release(childSession string) bool {
	k := &m.kids
	k.mu.Lock()
	var (
		c   *childEntry
		run Run
	)
	for _, o := range k.byID {
		if o.kept != nil && o.session == childSession {
			c, run = o, k.unkeep(o)
			break
		}
	}
	k.mu.Unlock()
	if run == nil {
		return false
	}
	m.dispose(c, run)
	return true
}

// clipID bounds an id the model sent before it is quoted back to it.
func clipID(id string) string {
	const max = 64
	if len(id) <= max {
		return id
	}
	return strings.ToValidUTF8(id[:max], "") + "…"
}

// childIdle frees a continuation's child that never ran (its call was
// refused after the request was built).
func (m *Manager) childIdle(req Request) {
	if req.Continues == "" {
		return
	}
	k := &m.kids
	k.mu.Lock()
	if c := k.byID[req.ChildID]; c != nil {
		c.busy = false
	}
	k.mu.Unlock()
}
