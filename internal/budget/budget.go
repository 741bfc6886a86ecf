// Package budget is a spending limit over a whole delegation tree: tokens,
// US dollars and wall time, shared by a parent session and every descendant
// of every provider (docs/cli.md, "Budgets"). The agent loop asks it before
// each model request and charges it after each response, the subagent
// manager asks it before each child start and charges the usage of
// out-of-process children, and when it runs out every context bound to it
// (Bind) is cancelled with an *Exhausted cause, so running children are
// stopped through their own teardown and settle aborted.
//
// A budget is checked before work starts, never in the middle of a model
// response: a tree overshoots by at most one response per running agent
// (responses under way when it runs out are cut off by the cancellation).
package budget

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reinsdev/reins/internal/llm"
)

// Kind names the budget that ran out.
type Kind string

const (
	Tokens Kind = "tokens"
	USD    Kind = "usd"
	Time   Kind = "time"
)

// Code is the failure code `reins run --json` reports for a run a budget
// stopped.
const Code = "BUDGET"

// Limits are a budget's caps; a zero field is no cap.
type Limits struct {
	// Tokens caps input plus output tokens (cache reads and writes are
	// part of the input; reasoning is part of the output).
	Tokens int
	// USD caps the cost, at the price table (internal/models).
	USD float64
	// Time caps the wall time from the budget's start.
	Time time.Duration
}

// IsZero reports whether l caps nothing.
func (l Limits) IsZero() bool { return l.Tokens <= 0 && l.USD <= 0 && l.Time <= 0 }

// Exhausted is the error of a budget that ran out, and the cause a bound
// context is cancelled with. Its text is reins's own: safe for a
// diagnostic, a log and the terminal.
type Exhausted struct {
	Kind  Kind
	Limit string // the cap, as the user wrote it (20000 tokens, $0.50, 30s)
	Used  string // what was used when it ran out
	// Note says how the use was counted where that is not plain: the
	// tokens of unknown price a dollar cap counted at the fallback price.
	Note string
}

func (e *Exhausted) Error() string {
	if e.Note != "" {
		return fmt.Sprintf("the %s budget ran out (used %s of %s; %s)", e.Kind, e.Used, e.Limit, e.Note)
	}
	return fmt.Sprintf("the %s budget ran out (used %s of %s)", e.Kind, e.Used, e.Limit)
}

// WallClockSpent reports whether the time budget ran out: a child being
// torn down for it is owed no grace (childproc.Lifetime.Hurried).
func (e *Exhausted) WallClockSpent() bool { return e.Kind == Time }

// Budget is one budget of the tree. A child budget (an agent file's
// `budget:`) charges its parents too and counts as exhausted when any of
// them is. Its methods are safe for concurrent use; a nil *Budget is no
// budget: it allows everything.
type Budget struct {
	limits Limits
	parent *Budget
	began  time.Time
	timer  *time.Timer
	done   chan struct{} // closed when this budget (not a parent) ran out

	mu       sync.Mutex
	tokens   int
	usd      float64
	unpriced int     // tokens charged without a known price
	fallback float64 // what those tokens count at FallbackInput/Output
	err      *Exhausted
}

// New starts a budget with limits l; its time counts from now. Stop
// releases its timer.
func New(l Limits) *Budget {
	b := &Budget{limits: l, began: time.Now(), done: make(chan struct{})}
	if l.Time > 0 {
		b.timer = time.AfterFunc(l.Time, func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.exhaust(&Exhausted{Kind: Time, Limit: l.Time.String(), Used: l.Time.String()})
		})
	}
	return b
}

// Child returns a budget with limits l inside b: what it is charged, b is
// charged too. A nil b gives a root budget; zero limits give b itself.
func (b *Budget) Child(l Limits) *Budget {
	if l.IsZero() {
		return b
	}
	c := New(l)
	c.parent = b
	return c
}

// Stop releases the time limit's timer of b (not of its parents). The
// budget keeps what it counted.
func (b *Budget) Stop() {
	if b != nil && b.timer != nil {
		b.timer.Stop()
	}
}

// exhaust records the first cause; b.mu is held.
func (b *Budget) exhaust(e *Exhausted) {
	if b.err != nil {
		return
	}
	b.err = e
	close(b.done)
}

// Err is the cause of the first exhausted budget on the chain from b to
// the root, nil while every one has something left.
func (b *Budget) Err() error {
	for x := b; x != nil; x = x.parent {
		x.mu.Lock()
		err := x.err
		x.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// The fallback price, in US dollars per million tokens, of a usage whose
// model has no known price, when a dollar cap counts it: the dearest
// built-in prices (anthropic/claude-opus-4-1), so that a child on an
// unpriced model — a `reins run --budget-usd` whose children run a local
// or unlisted model — uses up the cap rather than running uncapped
// (docs/cli.md, "Budgets").
const (
	FallbackInputUSD  = 15.0
	FallbackOutputUSD = 75.0
)

// fallbackCost is u at the fallback price.
func fallbackCost(u llm.Usage) float64 {
	return (float64(u.InputTokens)*FallbackInputUSD + float64(u.OutputTokens)*FallbackOutputUSD) / 1e6
}

// Charge counts u against b and its parents and exhausts any whose cap it
// reaches. A usage whose cost is unknown counts its tokens, and against a
// dollar cap counts at the fallback price (Unpriced says how many such
// tokens there were; Used's dollars are the priced ones only).
func (b *Budget) Charge(u llm.Usage) {
	n := u.InputTokens + u.OutputTokens
	for x := b; x != nil; x = x.parent {
		x.mu.Lock()
		x.tokens += n
		if u.CostUSD != nil {
			x.usd += *u.CostUSD
		} else {
			x.unpriced += n
			x.fallback += fallbackCost(u)
		}
		l := x.limits
		switch {
		case l.Tokens > 0 && x.tokens >= l.Tokens:
			x.exhaust(&Exhausted{Kind: Tokens, Limit: strconv.Itoa(l.Tokens) + " tokens", Used: strconv.Itoa(x.tokens) + " tokens"})
		case l.USD > 0 && x.usd+x.fallback >= l.USD:
			e := &Exhausted{Kind: USD, Limit: Dollars(l.USD), Used: Dollars(x.usd + x.fallback)}
			if x.unpriced > 0 {
				e.Note = fmt.Sprintf("%d tokens of unknown price counted at $%g/$%g per million in/out", x.unpriced, FallbackInputUSD, FallbackOutputUSD)
			}
			x.exhaust(e)
		}
		x.mu.Unlock()
	}
}

// Dollars formats an amount the way budgets and `reins log` show it: to
// a millionth of a dollar, trailing zeros dropped ($0.0054, $2).
func Dollars(v float64) string {
	s := strconv.FormatFloat(v, 'f', 6, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return "$" + s
}

// Used is what b counted: tokens, dollars, the tokens of unknown price,
// and the time since b started.
func (b *Budget) Used() (tokens int, usd float64, unpriced int, elapsed time.Duration) {
	if b == nil {
		return 0, 0, 0, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tokens, b.usd, b.unpriced, time.Since(b.began)
}

// Limits is b's own caps.
func (b *Budget) Limits() Limits {
	if b == nil {
		return Limits{}
	}
	return b.limits
}

// Remaining is what is left along the chain from b to the root, each cap
// the tightest of them: what a remote child (a reins child's initialize)
// is given to enforce on its side. A capped dimension with nothing left
// is given as the smallest positive value, never as 0 (which means no
// cap).
func (b *Budget) Remaining() Limits {
	var r Limits
	for x := b; x != nil; x = x.parent {
		x.mu.Lock()
		l, tok, usd, began := x.limits, x.tokens, x.usd+x.fallback, x.began
		x.mu.Unlock()
		if l.Tokens > 0 {
			r.Tokens = tighter(r.Tokens, max(l.Tokens-tok, 1))
		}
		if l.USD > 0 {
			left := l.USD - usd
			if left <= 0 {
				left = 1e-9
			}
			if r.USD == 0 || left < r.USD {
				r.USD = left
			}
		}
		if l.Time > 0 {
			left := max(l.Time-time.Since(began), time.Millisecond)
			if r.Time == 0 || left < r.Time {
				r.Time = left
			}
		}
	}
	return r
}

func tighter(cur, v int) int {
	if cur == 0 || v < cur {
		return v
	}
	return cur
}

// doneChans are the done channels of the chain from b to the root.
func (b *Budget) doneChans() []chan struct{} {
	var out []chan struct{}
	for x := b; x != nil; x = x.parent {
		out = append(out, x.done)
	}
	return out
}

// Bind returns a context cancelled, with the *Exhausted cause, when b or
// a parent runs out (at once when one has). release ends the binding and
// must be called; a nil b binds nothing.
func (b *Budget) Bind(ctx context.Context) (context.Context, func()) {
	if b == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	if err := b.Err(); err != nil {
		cancel(err)
		return ctx, func() { cancel(nil) }
	}
	var wg sync.WaitGroup
	for _, d := range b.doneChans() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-d:
				cancel(b.Err())
			case <-ctx.Done():
			}
		}()
	}
	return ctx, func() {
		cancel(nil)
		wg.Wait()
	}
}

// Of reports the *Exhausted that cancelled ctx, if that is why it ended.
func Of(ctx context.Context) (*Exhausted, bool) {
	e, ok := context.Cause(ctx).(*Exhausted)
	return e, ok
}
