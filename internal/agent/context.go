package agent

import (
	"context"

	"github.com/reinsdev/reins/internal/compact"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/retry"
	"github.com/reinsdev/reins/internal/session"
)

// contextState is what the loop knows about the size of the history,
// kept beside it (under Agent.mu) so that no step re-measures the whole
// conversation: each message's position in the log and raw token
// estimate, their running sum, and the estimator calibrated by the
// provider's reports.
type contextState struct {
	seqs   []int64
	raw    []int
	rawSum int
	est    compact.Estimator
	// lastRaw is the raw estimate of the latest request, the measure of
	// an unknown window once the provider said it was exceeded.
	lastRaw int
	// failedAt is the history length when a compaction at the threshold
	// last failed: the next is tried only once the history has grown, so
	// a model that cannot summarize is not asked at every step.
	failedAt int
}

// retryAfterGrowth is how many messages the history grows by before a
// failed threshold compaction is tried again.
const retryAfterGrowth = 4

// settings returns a.Context with defaults for unset fields.
func (a *Agent) settings() compact.Settings {
	s := a.Context
	d := compact.Defaults()
	if s.CompactAt <= 0 {
		s.CompactAt = d.CompactAt
	}
	if s.MaxToolResultBytes <= 0 {
		s.MaxToolResultBytes = d.MaxToolResultBytes
	}
	return s
}

// record appends m, recorded by event seq, to the history, its tool
// results cut to the history's bound. a.mu is held.
func (a *Agent) record(seq int64, m llm.Message) {
	m = compact.CutToolResults(m, compact.ToolResultLimit(a.settings().MaxToolResultBytes, a.Window))
	r := compact.Raw(m)
	a.history = append(a.history, m)
	a.ctx.seqs = append(a.ctx.seqs, seq)
	a.ctx.raw = append(a.ctx.raw, r)
	a.ctx.rawSum += r
}

// requestRaw is the raw token estimate of req, whose messages are the
// current history: the system prompt and tools are measured, the history
// is the running sum.
func (a *Agent) requestRaw(req *llm.Request) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	raw := compact.RawText(req.System) + compact.RawTools(req.Tools) + a.ctx.rawSum
	a.ctx.lastRaw = raw
	return raw
}

// calibrate records what the provider billed for a request of raw size.
func (a *Agent) calibrate(raw int, u llm.Usage) {
	a.mu.Lock()
	a.ctx.est.Calibrate(raw, u.InputTokens)
	a.mu.Unlock()
}

// fitContext compacts the history when the next request would pass
// context.compactAt of the model's window. It reports false only when
// the log could not be written; a compaction that fails leaves the
// history whole, and the provider decides.
func (t *turn) fitContext(ctx context.Context) bool {
	a := t.a
	if a.Window <= 0 {
		return t.err == nil
	}
	a.mu.Lock()
	est := a.ctx.est.Tokens(compact.RawText(a.System) + compact.RawTools(a.Tools.Specs()) + a.ctx.rawSum)
	backoff := a.ctx.failedAt > 0 && len(a.history) < a.ctx.failedAt+retryAfterGrowth
	a.mu.Unlock()
	if !backoff && float64(est) > a.settings().CompactAt*float64(a.Window) {
		if !t.compact(ctx, session.CompactThreshold) {
			a.mu.Lock()
			a.ctx.failedAt = len(a.history)
			a.mu.Unlock()
		}
	}
	return t.err == nil
}

// defaultWindow stands in for an unknown window when a compaction is
// forced before any request overflowed: the summary's budget comes from it.
const defaultWindow = 128000

// window is the window to compact against: the model's, else the size of
// the latest request (which the provider refused as too large), else
// defaultWindow.
func (a *Agent) window() int {
	if a.Window > 0 {
		return a.Window
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if w := a.ctx.est.Tokens(a.ctx.lastRaw); w > 0 {
		return w
	}
	return defaultWindow
}

// keepFraction of the window is kept whole, as the most recent messages.
const keepFraction = 0.3

// compact asks the model to summarize the older part of the history and,
// when it answers, records a context/compacted event and replaces that part
// of the history with the summary. It reports whether the history was
// compacted. A forced compaction keeps only the latest step whole.
func (t *turn) compact(ctx context.Context, reason session.CompactReason) bool {
	ok, _ := t.compactWhy(ctx, reason)
	return ok
}

// compactWhy is compact; when nothing was compacted, f says why: nil when
// there was nothing to summarize, else the summary request's failure.
func (t *turn) compactWhy(ctx context.Context, reason session.CompactReason) (ok bool, f *session.Failure) {
	a := t.a
	if a.Hooks != nil {
		trigger := "auto"
		if reason == session.CompactForced {
			trigger = "manual"
		}
		a.Hooks.PreCompact(ctx, trigger)
	}
	w := a.window()
	a.mu.Lock()
	hist := a.history[:len(a.history):len(a.history)]
	raw := a.ctx.raw[:len(a.ctx.raw):len(a.ctx.raw)]
	seqs := a.ctx.seqs[:len(a.ctx.seqs):len(a.ctx.seqs)]
	est := a.ctx.est
	a.mu.Unlock()

	keep := int(float64(w) * keepFraction)
	if reason == session.CompactForced {
		keep = 0
	}
	r, ok := compact.Choose(hist, raw, &est, keep)
	if !ok {
		return false, nil
	}
	budget := compact.BudgetFor(w, a.MaxOutput)
	req := compact.Request(a.ModelName, hist[r.From:r.To], &est, budget)
	// Write-ahead, as for every request: what the summary is built from is
	// on disk first.
	if !t.flush() {
		return false, &logWriteFailure
	}
	var asm *llm.Assembler
	finish := t.executor().Run(ctx, func(ctx context.Context) llm.Finish {
		asm = &llm.Assembler{}
		if a.Budget.Err() != nil { // no request once the budget ran out
			return llm.Finish{Kind: llm.FinishAborted}
		}
		for c := range a.Model.Stream(ctx, req) {
			asm.Push(c)
		}
		u := t.price(asm.Usage())
		t.usage = t.usage.Add(u)
		a.Budget.Charge(u)
		return asm.Finish()
	}, retry.Hooks{Before: func(retry.Attempt) { asm = nil }})
	if finish.Kind == llm.FinishError {
		return false, &session.Failure{Code: finish.Code, Message: finish.Message}
	}
	if finish.Kind == llm.FinishAborted {
		// Cancelled, or the budget ran out: no summary, and the step's own
		// request ends the turn aborted as it would have.
		return false, nil
	}
	var summary string
	if asm != nil && (finish.Kind == llm.FinishStop || finish.Kind == llm.FinishMaxTokens) {
		summary = llm.BlocksText(asm.Blocks())
	}
	if summary == "" {
		return false, &session.Failure{Code: llm.CodeNoSummary, Message: "the model gave no summary"}
	}
	// A summary never takes more room than its budget, whatever the model
	// or a proxy did with max_tokens.
	summary = compact.Cut(summary, budget.Output*8)
	d := session.ContextCompacted{
		Turn: t.n, Summary: summary, Reason: reason,
		Replaces: session.SeqRange{FromSeq: seqs[r.From], ToSeq: seqs[r.To-1]},
	}
	if u := t.price(asm.Usage()); !u.IsZero() {
		d.Usage = &u
	}
	t.append(session.TypeContextCompacted, d)
	if t.err != nil {
		return false, &logWriteFailure
	}
	t.trace().Compacted(reason, d.Replaces.FromSeq, d.Replaces.ToSeq, t.price(asm.Usage()))
	a.mu.Lock()
	defer a.mu.Unlock()
	a.replace(r, summary)
	return true, nil
}

// replace puts the summary in place of the history range r, as
// session.ApplyCompaction does to the log's history. a.mu is held.
func (a *Agent) replace(r compact.Range, summary string) {
	m := session.SummaryMessage(summary)
	rm := compact.Raw(m)
	n := len(a.history) - r.Len() + 1
	h := make([]llm.Message, 0, n)
	h = append(append(append(h, a.history[:r.From]...), m), a.history[r.To:]...)
	seqs := make([]int64, 0, n)
	seqs = append(append(append(seqs, a.ctx.seqs[:r.From]...), a.ctx.seqs[r.From]), a.ctx.seqs[r.To:]...)
	raw := make([]int, 0, n)
	raw = append(append(append(raw, a.ctx.raw[:r.From]...), rm), a.ctx.raw[r.To:]...)
	sum := 0
	for _, x := range raw {
		sum += x
	}
	a.history, a.ctx.seqs, a.ctx.raw, a.ctx.rawSum = h, seqs, raw, sum
}

func (t *turn) executor() *retry.Executor {
	if t.a.Retry != nil {
		return t.a.Retry
	}
	return &retry.Executor{Policy: retry.Policy{}}
}

// Compact runs a turn that asks the model for no answer and only compacts
// the history (`reins compact`, /compact): it keeps the first user message
// and the latest step whole and summarizes the rest. compacted is false
// when there was nothing to summarize (the turn completes, having changed
// nothing) or the summary request failed (the turn ends error with its
// code, llm.CodeNoSummary for an answer without text).
func (a *Agent) Compact(ctx context.Context) (res TurnResult, compacted bool) {
	t := &turn{a: a, n: a.Log.NextTurn()}
	t.append(session.TypeTurnStart, session.TurnStart{Turn: t.n})
	compacted, f := t.compactWhy(ctx, session.CompactForced)
	res = t.result(session.ReasonCompleted, nil)
	switch {
	case ctx.Err() != nil:
		res = t.aborted(ctx)
	case f != nil:
		res = t.result(session.ReasonError, f)
	}
	res = t.end(res)
	return res, compacted && t.err == nil
}
