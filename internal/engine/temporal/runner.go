package temporal

import (
	"context"
	"errors"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/engine/wire"
	"github.com/reinsdev/reins/internal/engine/workspace"
	"github.com/reinsdev/reins/internal/telemetry"
	"github.com/reinsdev/reins/internal/tool"
)

// Child runs a task's child on this worker, checked (its permission
// narrowed, its workspace allowed) and with the parent's budget
// remainder (nil: none): the worker's composition root (cmd/reins-temporal,
// internal/worker) supplies it, so that the engine places runs and builds
// no sessions. A set-up failure is an error; everything after the child
// started is its Outcome (its Spent is filled in here).
type Child func(ctx context.Context, t Task, perm tool.Permission, bud *budget.Budget) (Outcome, error)

// Runner runs a worker's children: it checks each task against this
// worker's limits, bounds it by the parent's budget and trace, and hands it
// to Child, which runs it with this machine's configuration (REINS_HOME,
// config layers, trust, keys).
type Runner struct {
	// Child runs a checked task.
	Child Child
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
	if len(t.Seed) == 0 && t.Continues != "" {
		return Outcome{}, errors.New("a continuation without the child's conversation")
	}
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
	ctx = telemetry.Continue(ctx, t.Trace.Parent, t.Trace.State) // the parent's trace, when it has one
	out, err := r.Child(ctx, t, perm, bud)
	if err != nil {
		return Outcome{}, err
	}
	if bud != nil {
		tok, usd, unpriced, _ := bud.Used()
		out.Spent = &wire.Spent{Tokens: tok, USD: usd, Unpriced: unpriced}
	}
	return out, nil
}
