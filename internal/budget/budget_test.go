package budget

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reinsdev/reins/internal/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func usd(v float64) *float64 { return &v }

func TestChargeExhausts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		limits  Limits
		charges []llm.Usage
		want    Kind // "" : still open
	}{
		{"no caps", Limits{}, []llm.Usage{{InputTokens: 1e9}}, ""},
		{"tokens under", Limits{Tokens: 100}, []llm.Usage{{InputTokens: 50, OutputTokens: 49}}, ""},
		{"tokens reached", Limits{Tokens: 100}, []llm.Usage{{InputTokens: 50}, {OutputTokens: 50}}, Tokens},
		{"cache reads are input", Limits{Tokens: 100}, []llm.Usage{{InputTokens: 100, CacheReadTokens: 90}}, Tokens},
		{"usd under", Limits{USD: 1}, []llm.Usage{{InputTokens: 1, CostUSD: usd(0.5)}}, ""},
		{"usd reached", Limits{USD: 1}, []llm.Usage{{InputTokens: 1, CostUSD: usd(0.5)}, {InputTokens: 1, CostUSD: usd(0.5)}}, USD},
		{"unknown cost counts at the fallback price", Limits{USD: 1}, []llm.Usage{{InputTokens: 1e6}}, USD},
		{"unknown cost under the cap at the fallback price", Limits{USD: 1}, []llm.Usage{{InputTokens: 1000}}, ""},
		{"tokens first", Limits{Tokens: 10, USD: 1}, []llm.Usage{{InputTokens: 10, CostUSD: usd(2)}}, Tokens},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := New(tc.limits)
			defer b.Stop()
			for _, u := range tc.charges {
				b.Charge(u)
			}
			var e *Exhausted
			got := Kind("")
			if errors.As(b.Err(), &e) {
				got = e.Kind
			}
			if got != tc.want {
				t.Fatalf("exhausted %q, want %q (err %v)", got, tc.want, b.Err())
			}
		})
	}
}

func TestChildChargesParent(t *testing.T) {
	root := New(Limits{Tokens: 100})
	child := root.Child(Limits{Tokens: 30})
	defer root.Stop()
	defer child.Stop()
	child.Charge(llm.Usage{InputTokens: 30})
	if child.Err() == nil {
		t.Fatal("the child's own cap did not bite")
	}
	if root.Err() != nil {
		t.Fatal("a child's exhaustion exhausted the tree")
	}
	if n, _, _, _ := root.Used(); n != 30 {
		t.Fatalf("root counted %d, want 30", n)
	}
	sibling := root.Child(Limits{Tokens: 1000})
	root.Charge(llm.Usage{InputTokens: 70})
	if sibling.Err() == nil {
		t.Fatal("the tree ran out but a child budget inside it did not say so")
	}
	if root.Child(Limits{}) != root {
		t.Fatal("a zero child budget is not its parent")
	}
}

func TestRemainingIsTightest(t *testing.T) {
	root := New(Limits{Tokens: 100, USD: 2})
	child := root.Child(Limits{Tokens: 50})
	defer root.Stop()
	root.Charge(llm.Usage{InputTokens: 60, CostUSD: usd(0.5)})
	r := child.Remaining()
	if r.Tokens != 40 || r.USD != 1.5 || r.Time != 0 {
		t.Fatalf("remaining %+v, want 40 tokens, $1.5, no time cap", r)
	}
	root.Charge(llm.Usage{InputTokens: 100})
	if r := child.Remaining(); r.Tokens != 1 {
		t.Fatalf("an exhausted cap passes down as %d, want 1 (0 would mean none)", r.Tokens)
	}
}

func TestTimeBudgetCancelsBoundContext(t *testing.T) {
	b := New(Limits{Time: 20 * time.Millisecond})
	defer b.Stop()
	ctx, release := b.Bind(context.Background())
	defer release()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the time budget never cancelled the bound context")
	}
	e, ok := Of(ctx)
	if !ok || e.Kind != Time {
		t.Fatalf("cause %v, want the time budget", context.Cause(ctx))
	}
}

func TestBindAfterExhaustionIsCancelled(t *testing.T) {
	b := New(Limits{Tokens: 1})
	b.Charge(llm.Usage{OutputTokens: 1})
	ctx, release := b.Bind(context.Background())
	defer release()
	if ctx.Err() == nil {
		t.Fatal("binding a spent budget gave a live context")
	}
	var nilB *Budget
	ctx2, release2 := nilB.Bind(context.Background())
	defer release2()
	if ctx2.Err() != nil || nilB.Err() != nil {
		t.Fatal("a nil budget limits something")
	}
	nilB.Charge(llm.Usage{InputTokens: 5})
}

// TestUnpricedCountsAtFallback: usage of a model without a price (a child
// on a local or unlisted model) is never free under a dollar cap: it
// counts at the stated fallback price, and the cap bites.
func TestUnpricedCountsAtFallback(t *testing.T) {
	b := New(Limits{USD: 0.002})
	defer b.Stop()
	// 180 unpriced requests of ~1000 tokens each would have gone uncapped.
	n := 0
	for ; n < 180 && b.Err() == nil; n++ {
		b.Charge(llm.Usage{InputTokens: 1000, OutputTokens: 40})
	}
	var e *Exhausted
	if !errors.As(b.Err(), &e) || e.Kind != USD {
		t.Fatalf("after %d unpriced responses: err %v, want the usd budget exhausted", n, b.Err())
	}
	// $15/M in, $75/M out: 1000 in + 40 out = $0.018 — the first response.
	if n != 1 || !strings.Contains(e.Error(), "1040 tokens of unknown price counted at $15/$75 per million in/out") {
		t.Errorf("stopped after %d responses: %v", n, e)
	}
	if r := b.Remaining(); r.USD > 1e-6 {
		t.Errorf("remaining %v after the fallback spent it", r.USD)
	}
	// A child budget charges its parent the same way.
	root := New(Limits{USD: 1})
	defer root.Stop()
	child := root.Child(Limits{Tokens: 1 << 30})
	child.Charge(llm.Usage{InputTokens: 1_000_000, OutputTokens: 0})
	if !errors.As(root.Err(), &e) {
		t.Errorf("root not exhausted by a child's unpriced million tokens ($15): %v", root.Err())
	}
}
