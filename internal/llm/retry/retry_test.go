package retry

import (
	"context"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDelay(t *testing.T) {
	p := Policy{InitialDelay: 500 * time.Millisecond, MaxDelay: 10 * time.Second, Jitter: 0.1}
	tests := []struct {
		n          int
		retryAfter time.Duration
		r          float64
		want       time.Duration
	}{
		{1, 0, 0.5, 500 * time.Millisecond},
		{2, 0, 0.5, time.Second},
		{3, 0, 0.5, 2 * time.Second},
		{6, 0, 0.5, 10 * time.Second}, // 16 s capped
		{40, 0, 0.5, 10 * time.Second},
		{1, 0, 0, 450 * time.Millisecond}, // -10 %
		{1, 0, 1, 550 * time.Millisecond}, // +10 %
		{1, 3 * time.Second, 0.5, 3 * time.Second},
		{1, 11 * time.Second, 0.5, 500 * time.Millisecond}, // beyond maxDelay: not honoured
	}
	for _, tc := range tests {
		if got := p.Delay(tc.n, tc.retryAfter, tc.r); got != tc.want {
			t.Errorf("Delay(%d, %v, %v) = %v, want %v", tc.n, tc.retryAfter, tc.r, got, tc.want)
		}
	}
}

func fail(code llm.Code) llm.Finish { return llm.Finish{Kind: llm.FinishError, Code: code} }

func TestRun(t *testing.T) {
	tests := []struct {
		name      string
		results   []llm.Finish
		max       int
		wantCalls int
		wantKind  llm.FinishKind
		wantCode  llm.Code
	}{
		{"success first", []llm.Finish{{Kind: llm.FinishStop}}, 2, 1, llm.FinishStop, ""},
		{"empty then ok", []llm.Finish{fail(llm.CodeEmptyResponse), {Kind: llm.FinishStop}}, 2, 2, llm.FinishStop, ""},
		{"always empty exhausts", []llm.Finish{fail(llm.CodeEmptyResponse), fail(llm.CodeEmptyResponse), fail(llm.CodeEmptyResponse), fail(llm.CodeEmptyResponse)}, 2, 3, llm.FinishError, llm.CodeEmptyResponse},
		{"not retryable", []llm.Finish{fail(llm.CodeAuth), {Kind: llm.FinishStop}}, 2, 1, llm.FinishError, llm.CodeAuth},
		{"zero retries", []llm.Finish{fail(llm.CodeServer), {Kind: llm.FinishStop}}, 0, 1, llm.FinishError, llm.CodeServer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultPolicy()
			p.MaxRetries = tc.max
			var slept []time.Duration
			var before, after []int
			e := &Executor{Policy: p, Rand: func() float64 { return 0.5 },
				Sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }}
			calls := 0
			f := e.Run(context.Background(), func(context.Context) llm.Finish {
				calls++
				return tc.results[calls-1]
			}, Hooks{Before: func(a Attempt) { before = append(before, a.N) }, After: func(a Attempt) { after = append(after, a.N) }})
			if calls != tc.wantCalls || f.Kind != tc.wantKind || f.Code != tc.wantCode {
				t.Errorf("calls %d finish %+v, want %d calls and %s %s", calls, f, tc.wantCalls, tc.wantKind, tc.wantCode)
			}
			if len(before) != tc.wantCalls-1 || len(after) != len(before) || len(slept) != len(before) {
				t.Errorf("hooks before %v after %v sleeps %v for %d calls", before, after, slept, calls)
			}
		})
	}
}

func TestRunCancelDuringSleep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := DefaultPolicy()
	p.InitialDelay, p.MaxDelay = time.Hour, time.Hour
	e := &Executor{Policy: p}
	after := false
	f := e.Run(ctx, func(context.Context) llm.Finish { return fail(llm.CodeEmptyResponse) },
		Hooks{Before: func(Attempt) { cancel() }, After: func(Attempt) { after = true }})
	if f.Kind != llm.FinishAborted || after {
		t.Errorf("finish %+v, after hook ran %v; want aborted without a started retry", f, after)
	}
}
