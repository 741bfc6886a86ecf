package temporal

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/engine/wire"
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
	hctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			// The details are the child tree's spend so far, which the
			// parent's side reads and charges live (run.watchSpent).
			activity.RecordHeartbeat(ctx, sp.load())
			select {
			case <-tick.C:
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
