// Package retry is the one place reins decides whether and when a failed
// model attempt is tried again. Adapters make exactly one wire attempt and
// classify it; this package turns a provider's policy and that
// classification into a bounded, cancellable schedule.
package retry

import (
	"context"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/reinsdev/reins/internal/llm"
)

// Policy is a provider's retry policy (docs/config.md, docs/providers.md).
type Policy struct {
	MaxRetries     int
	InitialDelay   time.Duration
	MaxDelay       time.Duration
	Jitter         float64
	RetryableCodes []llm.Code
}

// DefaultPolicy is the policy of a provider the config does not mention.
func DefaultPolicy() Policy {
	return Policy{
		MaxRetries:   5,
		InitialDelay: 500 * time.Millisecond,
		MaxDelay:     10 * time.Second,
		Jitter:       0.1,
		RetryableCodes: []llm.Code{
			llm.CodeEmptyResponse, llm.CodeRateLimit, llm.CodeServer,
			llm.CodeTimeout, llm.CodeTransport, llm.CodeStreamClosed,
		},
	}
}

// Retryable reports whether a failure with code may be retried.
func (p Policy) Retryable(code llm.Code) bool { return slices.Contains(p.RetryableCodes, code) }

// Delay is the wait before retry n (1-based): min(initial·2^(n-1), max)
// scaled by 1±jitter, where r in [0,1) picks the point in that band. A
// provider's Retry-After within MaxDelay replaces the computed delay; one
// beyond it is not honoured (the cap is the user's bound on waiting).
func (p Policy) Delay(n int, retryAfter time.Duration, r float64) time.Duration {
	if retryAfter > 0 && retryAfter <= p.MaxDelay {
		return retryAfter
	}
	d := p.InitialDelay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		d *= 2
	}
	if d > p.MaxDelay {
		d = p.MaxDelay
	}
	scaled := float64(d) * (1 + p.Jitter*(2*r-1))
	if scaled < 0 {
		scaled = 0
	}
	return time.Duration(scaled)
}

// Attempt is one retry about to happen.
type Attempt struct {
	N       int           // 1-based retry number
	Max     int           // the policy's MaxRetries
	Delay   time.Duration // the wait before it
	Failure llm.Finish    // the failure being retried
}

// Hooks let the caller record a retry durably: Before runs before the
// sleep, After once the sleep is over and the attempt is about to start.
type Hooks struct {
	Before func(Attempt)
	After  func(Attempt)
}

// Executor runs attempts under a policy.
type Executor struct {
	Policy Policy
	// Sleep waits for d or until ctx is done; a real timer when nil.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a number in [0,1) for jitter; math/rand when nil.
	Rand func() float64
}

// Run calls attempt until it returns a finish that is not a retryable
// failure, or retries run out, and returns the last finish. A cancelled ctx
// during a sleep ends at once with an aborted finish.
func (e *Executor) Run(ctx context.Context, attempt func(ctx context.Context) llm.Finish, h Hooks) llm.Finish {
	for n := 1; ; n++ {
		f := attempt(ctx)
		if f.Kind != llm.FinishError || !e.Policy.Retryable(f.Code) || n > e.Policy.MaxRetries {
			return f
		}
		if ctx.Err() != nil {
			return aborted()
		}
		r := rand.Float64
		if e.Rand != nil {
			r = e.Rand
		}
		a := Attempt{N: n, Max: e.Policy.MaxRetries, Delay: e.Policy.Delay(n, f.RetryAfter, r()), Failure: f}
		if h.Before != nil {
			h.Before(a)
		}
		sleep := e.Sleep
		if sleep == nil {
			sleep = Sleep
		}
		if err := sleep(ctx, a.Delay); err != nil {
			return aborted()
		}
		if h.After != nil {
			h.After(a)
		}
	}
}

func aborted() llm.Finish {
	return llm.Finish{Kind: llm.FinishAborted, Code: llm.CodeAborted, Message: "cancelled during a retry wait"}
}

// Sleep waits for d or until ctx is done, whichever is first.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
