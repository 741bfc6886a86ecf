package temporal

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/engine/wire"
	"github.com/reinsdev/reins/internal/engine/workspace"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/telemetry"
	"github.com/reinsdev/reins/internal/tool"
)

// Runner runs a worker's children: each in a harness of the task's
// workspace made from this machine's configuration (REINS_HOME, config
// layers, trust, keys), under a worker session that stands in for the
// remote parent, so the child's session log is written here and nests
// under it in `reins log`.
type Runner struct {
	// Options are the harness options of every task; Cwd is the task's.
	Options harness.Options
	// BaseURL is the worker's --base-url, for models of its provider.
	BaseURL string
	// MaxPermission is the widest mode a child gets on this worker
	// (`reins worker --permission`): a parent's wider mode is narrowed to
	// it, never widened.
	MaxPermission tool.Permission
	// Roots are the folders whose subfolders a task may name as its cwd
	// (workspace.Check): the worker's --cwd and --root folders.
	Roots []string
	Logf  func(format string, args ...any)
}

func (r *Runner) logf(format string, args ...any) {
	if r.Logf != nil {
		r.Logf(format, args...)
	}
}

// Run is the RunFunc: a set-up failure (a workspace, agent or model this
// worker does not have) is an error, for the host log; everything after
// the child started is its Result.
func (r *Runner) Run(ctx context.Context, t Task) (Outcome, error) {
	out, err := r.run(ctx, t)
	if err != nil {
		r.logf("worker: run %s of %s: %v", t.RunID, t.ParentSession, err)
	}
	return out, err
}

func (r *Runner) run(ctx context.Context, t Task) (Outcome, error) {
	perm, err := tool.ParsePermission(t.Permission)
	if err != nil {
		return Outcome{}, err
	}
	if r.MaxPermission != "" {
		perm = perm.Min(r.MaxPermission)
	}
	if t.Depth < 1 {
		return Outcome{}, errors.New("a child run has depth 1 or more")
	}
	if err := workspace.Check(t.Cwd, r.Roots, perm); err != nil {
		return Outcome{}, err
	}
	o := r.Options
	o.Cwd = t.Cwd
	h, err := harness.New(o)
	if err != nil {
		return Outcome{}, err
	}
	defer h.Close()
	// A parent that denies the network denies it to its children here too.
	h.Sandbox.DenyNetwork = h.Sandbox.DenyNetwork || t.DenyNetwork
	if _, ok := h.Agents.Get(t.Agent); !ok {
		return Outcome{}, fmt.Errorf("no agent %q on this worker", t.Agent)
	}
	m, err := h.ResolveModel(t.Model, r.BaseURL)
	if err != nil {
		return Outcome{}, err
	}
	// The child's own session, from the stand-in's subagent/start.
	var (
		childMu sync.Mutex
		child   string
	)
	// The parent's budget remainder bounds the child's whole tree here,
	// and what it spends is heartbeated back as it happens (Spend).
	var bud *budget.Budget
	if t.Budget != nil {
		bud = budget.New(*t.Budget)
		defer bud.Stop()
		if s := spendOf(ctx); s != nil {
			s.watch(bud)
		}
	}
	sess, err := h.NewSession(harness.SessionOptions{
		Model: m, MaxSteps: t.MaxSteps, MaxTokens: t.MaxTokens, Permission: perm, Tools: t.Tools, Budget: bud,
		Parent: t.ParentSession, Depth: t.Depth - 1, Agent: "worker",
		Observe: func(_ session.Header, e session.Event) {
			if st, ok := e.Payload.(session.SubagentStart); ok && st.ChildSession != "" {
				childMu.Lock()
				if child == "" {
					child = st.ChildSession
				}
				childMu.Unlock()
			}
		},
	})
	if err != nil {
		return Outcome{}, err
	}
	defer func() {
		if err := sess.Close(); err != nil {
			r.logf("worker: session %s close: %v", sess.Log.Header().ID, err)
		}
	}()
	// A fork or a continuation starts from the conversation it was
	// shipped; an empty one (nil) is a new child.
	var seed []session.Event
	if len(t.Seed) > 0 {
		seed = t.Seed
	} else if t.Continues != "" {
		return Outcome{}, errors.New("a continuation without the child's conversation")
	}
	ctx = telemetry.Continue(ctx, t.Trace.Parent, t.Trace.State) // the parent's trace, when it has one
	res, err := sess.Subagents.Run(ctx, subagent.Params{Description: t.Description, Prompt: t.Prompt, Agent: t.Agent, Seed: seed})
	if err != nil {
		return Outcome{}, err
	}
	childMu.Lock()
	defer childMu.Unlock()
	out := Outcome{Result: res, WorkerSession: sess.Log.Header().ID, ChildSession: child}
	if t.Provider == "" || t.Provider == config.ProviderInProcess {
		out.History = r.history(h, child)
	}
	if bud != nil {
		tok, usd, unpriced, _ := bud.Used()
		out.Spent = &wire.Spent{Tokens: tok, USD: usd, Unpriced: unpriced}
	}
	return out, nil
}

// history is the conversation of the child's log on this worker, shipped
// back for its next continuation: nil when it is larger than
// wire.MaxSeed (that continuation is refused not-continuable) or cannot
// be read.
func (r *Runner) history(h *harness.Harness, child string) []session.Event {
	if child == "" {
		return nil
	}
	ld, err := session.Load(filepath.Join(h.SessionsDir(), child, session.FileName))
	if err != nil {
		r.logf("worker: child %s: its log for a continuation: %v", child, err)
		return nil
	}
	conv, err := subagent.Conversation(ld.Events)
	if err != nil || wire.SeedSize(conv) > wire.MaxSeed {
		r.logf("worker: child %s: its conversation is not shipped back (%d events, err %v)", child, len(conv), err)
		return nil
	}
	return conv
}
