package subagent

import (
	"context"
	"errors"
	"fmt"
	"github.com/reinsdev/reins/internal/sandbox"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/internal/worktree"
)

// Manager runs one parent session's children: it enforces the depth and
// parallelism limits, writes subagent/start and subagent/end into the
// parent's log, keeps the background jobs, and delivers their settlement
// notices to the parent's loop (it is the loop's agent.Inbox).
type Manager struct {
	Agents    *config.Agents
	Providers map[string]Provider
	Limits    config.Subagents
	// Log is the parent's session log; Depth the parent's depth.
	Log        *session.Log
	Depth      int
	Cwd        string
	Permission tool.Permission
	// ToolNames are the parent's effective tool names (nil: every tool);
	// MaxSteps and MaxTokens its limits. Every request carries them down:
	// delegation never widens rights.
	ToolNames []string
	MaxSteps  int
	MaxTokens int
	// Sandbox is the parent's base sandbox policy (Off, DenyNetwork); each
	// request narrows it to the child's mode, cwd and agent file.
	Sandbox sandbox.Policy
	// Logf is the host log, for raw causes that must not reach the model.
	Logf func(format string, args ...any)
	// Notify shows the user (never the model: it is not a result, a
	// diagnostic or a session event) one line about a child, such as why
	// it died while it started (StartError.Notice). Nil: the host log has
	// it only.
	Notify func(line string)
	// Budget is the delegation tree's budget (nil: none): no child starts
	// once it ran out, and running children are stopped (budget.go).
	Budget *budget.Budget
	// ObserveRemote, when set, receives the events of out-of-process
	// children as they arrive (Request.Observe).
	ObserveRemote func(session.Header, session.Event)
	// Engine, when set, starts every child instead of its provider doing
	// it here (subagents.engine, docs/engine.md); nil is the local engine.
	Engine Engine
	// Tracer, when set, opens a span per child run (trace.go).
	Tracer RunTracer
	// OutputTool names the tool a cut result's marker tells the caller to
	// read on with (empty: subagent_output, the model's; `reins mcp
	// serve`'s caller has child_output).
	OutputTool string

	once     sync.Once
	mu       sync.Mutex
	sem      chan struct{}
	runs     int
	jobs     []*job
	settled  []*job // background jobs whose notice is not delivered yet
	wake     chan struct{}
	ctx      context.Context // lifetime of background jobs
	cancel   context.CancelCauseFunc
	wg       sync.WaitGroup
	usage    llm.Usage
	closed   bool
	reserved int      // background starts admitted and under way, counted against maxBackgroundJobs
	stalls   []string // notices of stalled background jobs, not delivered yet (stall.go)
	jobSeq   int      // job ids handed out (admitJob), in the model's call order
	kids     children
	iso      isolation // children with isolation: worktree (isolation.go)
	spec     specCache // the subagent tool's spec (tool.go)
}

// Job statuses (docs/subagents.md).
const (
	JobRunning   = "running"
	JobCompleted = "completed"
	JobFailed    = "failed"
	JobKilled    = "killed"
)

type job struct {
	id          string
	description string
	status      string
	result      outcome.Result
	run         Run
	killed      bool
	runID       string
	started     time.Time
	done        chan struct{}
	childID     string // the child: line of its results
	continues   string // the child a continuation continues
}

func (m *Manager) init() {
	m.once.Do(func() {
		n := m.Limits.MaxParallel
		if n <= 0 {
			n = config.DefaultMaxParallel
		}
		m.sem = make(chan struct{}, n)
		m.wake = make(chan struct{}, 1)
		m.ctx, m.cancel = context.WithCancelCause(context.Background())
		m.runs = max(m.runs, m.loadChildren())
	})
}

// Params are the subagent tool's parameters.
type Params struct {
	Description     string `json:"description"`
	Prompt          string `json:"prompt"`
	Agent           string `json:"agent,omitempty"`
	RunInBackground bool   `json:"run_in_background,omitempty"`
	// Continue names a child (its child: line) to send Prompt to as a
	// follow-up; Fork starts a child with a copy of the parent's
	// conversation (continuation.go).
	Continue string `json:"continue,omitempty"`
	Fork     bool   `json:"fork,omitempty"`
	// Seed, never from the model, starts an in-process child whose
	// conversation is these events (Conversation) rather than empty or
	// the parent's: how a Temporal worker runs a fork or a continuation
	// it was shipped (docs/engine.md).
	Seed []session.Event `json:"-"`
	// Isolation is `worktree` to run the child in a git worktree of its
	// own (isolation.go); "" takes the agent file's.
	Isolation string `json:"isolation,omitempty"`
	// Key, never from the model, names the run across processes (a
	// `reins batch` task's, the same on --resume): an engine that keeps
	// runs beyond reins (temporal) re-attaches to the run it started under
	// this key instead of starting it again. Empty: none.
	Key string `json:"-"`
}

// DepthError is a delegation deeper than maxDepth.
type DepthError struct{ Depth, Max int }

func (e *DepthError) Error() string {
	return fmt.Sprintf("subagent depth %d exceeds maxDepth %d", e.Depth, e.Max)
}

// request validates p and builds the provider request; errors here are
// the caller's and publish nothing.
func (m *Manager) request(p Params) (Request, Provider, error) {
	if p.Continue != "" {
		return m.continueRequest(p)
	}
	ag, prov, err := m.resolve(p)
	if err != nil {
		return Request{}, nil, err
	}
	depth := m.Depth + 1
	m.mu.Lock()
	m.runs++
	id := fmt.Sprintf("run-%d", m.runs)
	m.mu.Unlock()
	// The child's mode is the parent's: an agent file's `permission` is
	// only the ACP answer policy, never a mode. Min keeps an unset or
	// unknown mode from reading as a wider default.
	perm := m.Permission.Min(tool.FullAccess)
	pol := m.Sandbox
	pol.Mode, pol.Workspace = sandbox.Mode(perm), m.Cwd
	userHome, _ := os.UserHomeDir()
	writable, dropped := childWritable(ag.Writable, userHome)
	if len(dropped) > 0 {
		m.logf("subagent %s (%s): sandbox.writable %q dropped: an agent's own config in the user's home is never writable by a child", id, ag.Name, dropped)
	}
	pol.Writable = append(slices.Clip(pol.Writable), writable...)
	if ag.NetworkOff {
		pol.DenyNetwork = true
	}
	var fork []session.Event
	switch {
	case p.Seed != nil:
		if ag.Provider != "" && ag.Provider != config.ProviderInProcess {
			return Request{}, nil, fmt.Errorf("agent %q uses provider %s: %w", ag.Name, ag.Provider, ErrForkProvider)
		}
		fork = p.Seed
	case p.Fork:
		if fork, err = m.forkEvents(ag); err != nil {
			return Request{}, nil, err
		}
	}
	return Request{
		Fork:  fork,
		RunID: id, ChildID: ChildID(m.Log.Header().ID, id), Agent: ag, Prompt: p.Prompt, Label: p.Description, ParentSession: m.Log.Header().ID,
		Depth: depth, Cwd: m.Cwd, Permission: perm, Sandbox: pol,
		Tools: ChildTools(m.ToolNames, ag.Tools), MaxSteps: m.MaxSteps, MaxTokens: m.MaxTokens,
		Budget: m.Budget.Child(budget.Limits(ag.Budget)), StallTimeout: m.Limits.StallTimeout,
		Observe: m.ObserveRemote, Key: p.Key,
	}, prov, nil
}

// resolve checks p and finds its agent definition and provider.
func (m *Manager) resolve(p Params) (*config.Agent, Provider, error) {
	if strings.TrimSpace(p.Prompt) == "" {
		return nil, nil, errors.New("subagent needs a prompt")
	}
	depth := m.Depth + 1
	if depth > m.Limits.MaxDepth {
		return nil, nil, &DepthError{Depth: depth, Max: m.Limits.MaxDepth}
	}
	name := p.Agent
	if name == "" {
		name = "general"
	}
	ag, ok := m.Agents.Get(name)
	if b := m.Agents.Broken(name); !ok && b != nil {
		return nil, nil, b // the skipped file's own message
	}
	if !ok {
		return nil, nil, fmt.Errorf("unknown agent %q (available: %s)", name, strings.Join(m.agentNames(), ", "))
	}
	provider := ag.Provider
	if provider == "" {
		provider = config.ProviderInProcess
	}
	prov, ok := m.Providers[provider]
	if !ok {
		return nil, nil, fmt.Errorf("agent %q uses provider %s: %w", name, provider, ErrNoProvider)
	}
	return ag, prov, nil
}

func (m *Manager) agentNames() []string {
	var out []string
	for _, a := range m.Agents.List() {
		out = append(out, a.Name)
	}
	return out
}

// acquire takes a parallelism slot.
func (m *Manager) acquire(ctx context.Context) error {
	select {
	case m.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (m *Manager) release() { <-m.sem }

// begin takes a parallelism slot and starts a run, writing subagent/start
// while the caller's tool call — and so the parent's turn — is still open.
// A failed start releases the slot and returns the settled failure:
// nothing was published.
func (m *Manager) begin(ctx context.Context, req Request, prov Provider, p Params, background bool) (Run, *outcome.Result) {
	if r, over := overBudget(req); over {
		return nil, &r
	}
	if err := m.acquire(ctx); err != nil {
		r := outcome.Settle(outcome.Result{StopReason: outcome.StopAborted})
		return nil, &r
	}
	start := prov.Start
	if m.Engine != nil {
		start = func(ctx context.Context, req Request) (Run, error) { return m.Engine.Start(ctx, req, prov) }
	}
	run, err := start(ctx, req)
	if err != nil {
		m.release()
		if m.Logf != nil {
			m.Logf("subagent %s (%s) failed to start: %v", req.RunID, req.Agent.Name, err)
		}
		r := outcome.Result{StopReason: outcome.StopError}
		var se *StartError
		if errors.As(err, &se) {
			r.Diagnostic = se.Diagnostic
			if se.StopReason != "" {
				r.StopReason = se.StopReason
			}
			if se.Notice != "" && m.Notify != nil && ctx.Err() == nil {
				m.Notify(fmt.Sprintf("subagent %s (%s) failed to start: %s", req.RunID, termsafe.EscapeLine(req.Agent.Name), se.Notice))
			}
		}
		if ctx.Err() != nil {
			r = outcome.Result{StopReason: outcome.StopAborted}
		}
		r = outcome.Settle(r)
		return nil, &r
	}
	provider := req.Agent.Provider
	if provider == "" {
		provider = config.ProviderInProcess
	}
	if _, err := m.Log.Append(session.TypeSubagentStart, session.SubagentStart{
		RunID: req.RunID, ChildSession: run.Session(), Agent: req.Agent.Name,
		Provider: provider, Label: p.Description, Background: background, Continues: req.Continues,
		Branch: m.isoBranch(req.ChildID),
	}); err != nil {
		// A child the parent's log does not know of must not run on: its
		// work and its session would be nobody's. The parent's turn ends
		// LOG_WRITE at its next write, which fails with the same error.
		m.logf("subagent %s (%s): the parent's log refused subagent/start: %v", req.RunID, req.Agent.Name, err)
		run.Cancel()
		if derr := run.Dispose(); derr != nil {
			m.logf("subagent %s dispose: %v", req.RunID, derr)
		}
		m.release()
		r := outcome.Settle(outcome.Result{StopReason: outcome.StopError})
		return nil, &r
	}
	m.childStarted(req, run)
	return run, nil
}

func (m *Manager) logf(format string, args ...any) {
	if m.Logf != nil {
		m.Logf(format, args...)
	}
}

// finish waits for a published run, disposes it and releases its slot.
func (m *Manager) finish(ctx context.Context, req Request, run Run) outcome.Result {
	defer m.release()
	ctx, unbind := req.Budget.Bind(ctx) // a budget that runs out stops the run
	defer unbind()
	res := outcome.Settle(stallResult(req, run, budgetResult(req, run, run.Wait(ctx))))
	res = m.settleIsolated(req, res) // its work committed on its branch
	req.endTrace(run.Session(), res)
	if err := m.park(req, run); err != nil && m.Logf != nil {
		m.Logf("subagent %s dispose: %v", req.RunID, err)
	}
	m.mu.Lock()
	m.usage = m.usage.Add(res.Usage)
	m.mu.Unlock()
	return res
}

func (m *Manager) endEvent(runID, childID string, r outcome.Result, d time.Duration) session.SubagentEnd {
	e := session.SubagentEnd{
		RunID: runID, StopReason: string(r.StopReason), LastAssistantMessage: outcome.LastAssistantMessage(r.Output),
		Diagnostic: r.Diagnostic, DurationMs: d.Milliseconds(), Worktree: r.Worktree,
	}
	if r.Worktree != "" {
		e.Branch = worktree.Branch(childID)
	}
	if !r.Usage.IsZero() {
		u := r.Usage
		e.Usage = &u
	}
	return e
}

// Delegate runs the subagent tool: a foreground run to its end, or a
// background job started at once.
func (m *Manager) Delegate(ctx context.Context, p Params) tool.Result {
	m.init()
	req, prov, err := m.isolatedRequest(ctx, p)
	if err != nil {
		return tool.Result{Content: "Error: " + err.Error(), IsError: true}
	}
	if p.RunInBackground {
		a, _ := ctx.Value(admissionKey{}).(*admission)
		if a == nil || a.used {
			// Not admitted by the loop (a direct call): admit now.
			var release func()
			ctx, release = m.admitJob(ctx, p)
			defer release()
			a = ctx.Value(admissionKey{}).(*admission)
		}
		a.used = true
		if a.refused != nil {
			m.childIdle(req) // a refused continuation leaves its child free
			m.abandonIsolated(req)
			return *a.refused
		}
		return m.startJob(a.id, m.traceRun(ctx, req, true), prov, p)
	}
	return m.present(req, Render(m.runForeground(ctx, req, prov, p)))
}

// Run runs one foreground child for p to its end and returns its settled
// result, as the subagent tool does before rendering it: `reins batch`
// runs each task this way. An error is the caller's (an unknown agent, the
// depth limit) and published nothing.
func (m *Manager) Run(ctx context.Context, p Params) (outcome.Result, error) {
	m.init()
	req, prov, err := m.isolatedRequest(ctx, p)
	if err != nil {
		return outcome.Result{}, err
	}
	res := m.runForeground(ctx, req, prov, p)
	// Its result is what SubagentOutput pages through, and the child is
	// free for a continuation (Params.Continue), as after the tool.
	m.childDone(req, Render(res).Content)
	return res, nil
}

func (m *Manager) runForeground(ctx context.Context, req Request, prov Provider, p Params) outcome.Result {
	t0 := time.Now()
	req = m.traceRun(ctx, req, false)
	run, fail := m.begin(ctx, req, prov, p, false)
	if fail != nil {
		m.abandonIsolated(req)
		req.endTrace("", *fail)
		return *fail
	}
	res := m.finish(ctx, req, run)
	end := m.endEvent(req.RunID, req.ChildID, res, time.Since(t0))
	end.Continues = req.Continues
	if _, err := m.Log.Append(session.TypeSubagentEnd, end); err != nil {
		// The result is still the tool's answer; the parent's turn ends
		// LOG_WRITE at its next write, which fails with the same error.
		m.logf("subagent %s (%s): the parent's log refused subagent/end: %v", req.RunID, req.Agent.Name, err)
	}
	return res
}

// admission is a background call's place under maxBackgroundJobs, taken in
// the model's call order (subagentTool.Admit): either a reserved slot and
// its job id, or the refusal.
type admission struct {
	id      string
	refused *tool.Result
	used    bool // Delegate took it; release leaves the slot to the job
}

type admissionKey struct{}

// admitJob reserves a background slot and the next job id for p, or
// records why p is refused. The returned release frees a reserved slot
// that Delegate did not use (the call was skipped).
func (m *Manager) admitJob(ctx context.Context, p Params) (context.Context, func()) {
	m.init()
	a := &admission{}
	ctx = context.WithValue(ctx, admissionKey{}, a)
	max := m.Limits.MaxBackgroundJobs
	if max <= 0 {
		max = config.DefaultMaxBackgroundJobs
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		r := tool.Errorf("Error: the session is closing; no new background jobs")
		a.refused = &r
		return ctx, func() {}
	}
	running := m.reserved
	for _, j := range m.jobs {
		if j.status == JobRunning {
			running++
		}
	}
	if running >= max {
		r := tool.Errorf("Error: %d background jobs are already running (maxBackgroundJobs %d); wait for one with job_output or stop one with job_kill", running, max)
		a.refused = &r
		return ctx, func() {}
	}
	m.reserved++
	m.jobSeq++
	a.id = fmt.Sprintf("job-%d", m.jobSeq)
	return ctx, func() {
		if !a.used {
			m.mu.Lock()
			m.reserved--
			m.mu.Unlock()
		}
	}
}

// startJob starts an admitted background job: its slot is reserved and
// its id is id.
func (m *Manager) startJob(id string, req Request, prov Provider, p Params) tool.Result {
	// The child starts (and subagent/start is written) inside this tool
	// call, so the event lies in the parent's turn; only the wait is in
	// the background.
	ctx, cancel := context.WithCancelCause(m.ctx)
	t0 := time.Now()
	req.OnStall = m.stallNotice(id, p.Description, req.StallTimeout)
	run, fail := m.begin(ctx, req, prov, p, true)
	m.mu.Lock()
	m.reserved--
	if fail != nil {
		m.mu.Unlock()
		cancel(nil)
		m.abandonIsolated(req)
		req.endTrace("", *fail)
		return m.present(req, Render(*fail))
	}
	j := &job{id: id, description: p.Description, status: JobRunning,
		runID: req.RunID, started: t0, run: run, done: make(chan struct{}),
		childID: req.ChildID, continues: req.Continues}
	m.jobs = append(m.jobs, j)
	m.wg.Add(1)
	m.mu.Unlock()

	go func() {
		defer m.wg.Done()
		defer cancel(nil)
		res := m.finish(ctx, req, run)
		m.childDone(req, Render(res).Content)
		m.mu.Lock()
		j.result = res
		switch {
		case res.StopReason == outcome.StopCompleted:
			j.status = JobCompleted
		case j.killed && res.Diagnostic == "":
			j.status = JobKilled
		default:
			j.status = JobFailed
		}
		m.settled = append(m.settled, j)
		m.mu.Unlock()
		close(j.done)
		select {
		case m.wake <- struct{}{}:
		default:
		}
	}()
	return tool.Result{Content: fmt.Sprintf("Started background job %s (subagent: %s). Read its output with job_output; stop it with job_kill.", j.id, p.Description) + outcome.ChildLine(req.ChildID)}
}

// Drain is the parent loop's inbox: for each background job settled since
// the last call it appends subagent/end and job/notice to the parent's log
// (through appendEvent, inside the parent's turn) and returns the notice
// the parent model receives as a user message.
func (m *Manager) Drain(appendEvent func(typ string, data any)) []string {
	m.init()
	m.mu.Lock()
	settled := m.settled
	m.settled = nil
	out := m.takeStallNotes()
	m.mu.Unlock()
	for _, j := range settled {
		end := m.endEvent(j.runID, j.childID, j.result, time.Since(j.started))
		end.Continues = j.continues
		appendEvent(session.TypeSubagentEnd, end)
		appendEvent(session.TypeJobNotice, session.JobNotice{JobID: j.id, Status: j.status})
		out = append(out, Notice(j.id, j.description, j.status, j.result)+outcome.ChildLine(j.childID))
	}
	return out
}

// Notice is the settlement message of docs/subagents.md.
func Notice(id, description, status string, r outcome.Result) string {
	inner := "status: " + status
	if status == JobFailed {
		inner += "; " + string(r.StopReason)
		if r.Diagnostic != "" {
			inner += "; diagnostic: " + r.Diagnostic
		}
	}
	return fmt.Sprintf("background job %s (subagent: %s) finished [%s]. Read its output with job_output.", id, description, inner)
}

// Busy reports whether a job is running or a notice is undelivered:
// `reins run` keeps the parent alive until it is not.
func (m *Manager) Busy() bool {
	m.init()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.settled) > 0 || len(m.stalls) > 0 {
		return true
	}
	for _, j := range m.jobs {
		if j.status == JobRunning {
			return true
		}
	}
	return false
}

// WaitSettled blocks until a notice is pending or ctx is done.
func (m *Manager) WaitSettled(ctx context.Context) error {
	m.init()
	for {
		m.mu.Lock()
		pending := len(m.settled) > 0 || len(m.stalls) > 0
		m.mu.Unlock()
		if pending {
			return nil
		}
		select {
		case <-m.wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ChildUsage is the summed usage of every settled child.
func (m *Manager) ChildUsage() llm.Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.usage
}

// Close cancels every running job as its parent and waits until all are
// settled and disposed. It is idempotent.
func (m *Manager) Close() {
	m.init()
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.cancel(agent.ErrAbortedByParent)
	m.wg.Wait()
	m.closeChildren()
	m.closeIsolated()
}

// KillRunning kills every running background job (as job_kill does: a
// local cancel, so each settles killed) and waits until each has settled.
// Their notices stay pending for the parent's next Drain.
func (m *Manager) KillRunning() {
	m.init()
	m.mu.Lock()
	var running []*job
	for _, j := range m.jobs {
		if j.status == JobRunning {
			j.killed = true
			running = append(running, j)
		}
	}
	m.mu.Unlock()
	for _, j := range running {
		j.run.Cancel()
	}
	for _, j := range running {
		<-j.done
	}
}

// job is the background job id for the job tools; nil with the tools'
// error result when there is none.
func (m *Manager) job(id string) (*job, tool.Result) {
	m.init()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, j := range m.jobs {
		if j.id == id {
			return j, tool.Result{}
		}
	}
	return nil, tool.Errorf("Error: no background job %q", id)
}

// JobOutput is the job_output tool.
func (m *Manager) JobOutput(id string) tool.Result {
	j, errRes := m.job(id)
	if j == nil {
		return errRes
	}
	m.mu.Lock()
	status, res := j.status, j.result
	m.mu.Unlock()
	if status == JobRunning {
		return tool.Result{Content: fmt.Sprintf("job %s (subagent: %s) is still running.", j.id, j.description) + outcome.ChildLine(j.childID)}
	}
	r := Render(res)
	r.Content = m.page(j.childID, r.Content, 0, len(r.Content))
	if status == JobKilled {
		r.Content = fmt.Sprintf("job %s was killed.\n", j.id) + r.Content
	}
	return r
}

// JobList is the job_list tool.
func (m *Manager) JobList() tool.Result {
	m.init()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.jobs) == 0 {
		return tool.Result{Content: "no background jobs"}
	}
	var b strings.Builder
	for _, j := range m.jobs {
		fmt.Fprintf(&b, "%s [%s] subagent: %s\n", j.id, j.status, j.description)
	}
	return tool.Result{Content: strings.TrimRight(b.String(), "\n")}
}

// JobKill is the job_kill tool: a local cancel; the job settles killed.
func (m *Manager) JobKill(id string) tool.Result {
	j, errRes := m.job(id)
	if j == nil {
		return errRes
	}
	m.mu.Lock()
	if j.status != JobRunning {
		status := j.status
		m.mu.Unlock()
		return tool.Errorf("Error: job %s already finished [status: %s]", id, status)
	}
	j.killed = true
	run := j.run
	m.mu.Unlock()
	run.Cancel()
	<-j.done
	return tool.Result{Content: fmt.Sprintf("job %s killed", id)}
}

// Render is the subagent tool result of docs/subagents.md
// (outcome.RenderText) as a tool result.
func Render(r outcome.Result) tool.Result {
	content, isErr := outcome.RenderText(r)
	return tool.Result{Content: content, IsError: isErr}
}
