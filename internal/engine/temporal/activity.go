package temporal

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/engine/remote"
	"github.com/reinsdev/reins/internal/engine/wire"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
	"go.temporal.io/sdk/temporal"
)

// RunFunc runs one child to its settled outcome on this worker. An error
// is a run that could not be set up here; it is not retried.
type RunFunc func(ctx context.Context, t Task) (Outcome, error)

// Activities are a worker's activities.
type Activities struct {
	Run RunFunc
	// Every is the heartbeat period (0: HeartbeatEvery).
	Every time.Duration
}

// RunChild is the activity: it runs the child while heartbeating, so that
// a worker that dies is noticed within HeartbeatTimeout, and so that a
// cancel of the workflow reaches the child (Temporal delivers it on a
// heartbeat) and ends it through its own teardown.
func (a *Activities) RunChild(ctx context.Context, t Task) (Outcome, error) {
	every := a.Every
	if every <= 0 {
		every = HeartbeatEvery
	}
	sp := &spend{}
	ctx = context.WithValue(ctx, spendKey{}, sp)
	pg := newProgress(t.MaxOutput)
	ctx = context.WithValue(ctx, progressKey{}, pg)
	hctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			// The details are the child tree's spend so far, which the
			// parent's side charges live, and the child's current
			// selection, which it settles from when the worker stops
			// answering (internal/engine/remote).
			out, ws := pg.load()
			activity.RecordHeartbeat(ctx, wire.Beat{Spent: sp.load(), Output: out, WorkerSession: ws})
			select {
			case <-tick.C:
			case <-pg.changed:
				// A message completed: beat now, not at the next tick.
			case <-hctx.Done():
				return
			}
		}
	}()
	out, err := a.Run(ctx, t)
	stop()
	wg.Wait()
	if err != nil {
		return Outcome{}, temporal.NewNonRetryableApplicationError("the child could not be set up on this worker", ErrTypeConfiguration, nil)
	}
	return out, nil
}

// progress is a running child's current selection, for the heartbeat to
// carry (Runner.Run folds the child's events into it).
type progress struct {
	max     int
	changed chan struct{} // a message completed since the last beat

	mu     sync.Mutex
	fold   outcome.Fold
	worker string
}

type progressKey struct{}

func newProgress(max int) *progress {
	if max <= 0 {
		max = config.DefaultMaxResultBytes
	}
	return &progress{max: max, changed: make(chan struct{}, 1)}
}

func progressOf(ctx context.Context) *progress {
	p, _ := ctx.Value(progressKey{}).(*progress)
	return p
}

// Reporter is what a running Child tells its activity's heartbeat: each
// event of the child's own session (folded into the selection the
// heartbeat carries, so a parent that settles without the worker's answer
// still reports the earlier complete message) and the id of the worker
// session the child's log nests under.
type Reporter interface {
	Push(e session.Event)
	SetWorker(id string)
}

var _ Reporter = (*progress)(nil)

type reporterKey struct{}

// WithReporter is ctx carrying r as the Reporter of the child run in it,
// for a Child driven outside an activity.
func WithReporter(ctx context.Context, r Reporter) context.Context {
	return context.WithValue(ctx, reporterKey{}, r)
}

// ReporterOf is the heartbeat's Reporter of the activity ctx runs in (or
// the one WithReporter gave), nil outside one.
func ReporterOf(ctx context.Context) Reporter {
	if p := progressOf(ctx); p != nil {
		return p
	}
	r, _ := ctx.Value(reporterKey{}).(Reporter)
	return r
}

// Push folds one event of the child's own session. A completed message
// (or a step's end) wakes the heartbeat.
func (p *progress) Push(e session.Event) {
	p.mu.Lock()
	p.fold.Push(e)
	wake := e.Type == session.TypeAssistantMessage || e.Type == session.TypeStepEnd || e.Type == session.TypeTurnEnd
	p.mu.Unlock()
	if wake {
		select {
		case p.changed <- struct{}{}:
		default:
		}
	}
}

func (p *progress) SetWorker(id string) {
	p.mu.Lock()
	p.worker = id
	p.mu.Unlock()
}

// load is the child's selection now, under the one rule (a complete
// message beats text streamed after it; before one, the streamed text),
// at most the result cap, and the worker session.
func (p *progress) load() ([]llm.Block, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return remote.Bound(p.fold.Collect(), p.max), p.worker
}

// spend is a running child tree's budget, for the heartbeat to report
// (Runner.Run watches it when the task has a budget).
type spend struct {
	mu sync.Mutex
	b  *budget.Budget
}

type spendKey struct{}

func spendOf(ctx context.Context) *spend {
	s, _ := ctx.Value(spendKey{}).(*spend)
	return s
}

func (s *spend) watch(b *budget.Budget) {
	s.mu.Lock()
	s.b = b
	s.mu.Unlock()
}

// load is the spend so far (zero before a budget is watched).
func (s *spend) load() wire.Spent {
	s.mu.Lock()
	b := s.b
	s.mu.Unlock()
	tok, usd, unpriced, _ := b.Used()
	return wire.Spent{Tokens: tok, USD: usd, Unpriced: unpriced}
}
