// Package agent is the loop: a turn runs steps — one model request, retried
// under the provider's policy, plus the tool calls it asks for — until the
// model stops calling tools, a limit is hit, or the context is cancelled.
// Everything the model sees passes through the session log first, and the
// history it is shown is exactly what the log holds.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/compact"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/retry"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tool"
)

// Cancellation causes: cancel a turn's context with one of these (via
// context.WithCancelCause) to say who aborted it; plain cancellation counts
// as the user.
var (
	ErrAbortedByUser    = errors.New("aborted by the user")
	ErrAbortedByParent  = errors.New("aborted by the parent")
	ErrAbortedByTimeout = errors.New("aborted by a timeout")
)

// logWriteFailure is the failure of a turn ended by llm.CodeLogWrite; the
// cause (the file system's error) is for the caller's host log.
var logWriteFailure = session.Failure{Code: llm.CodeLogWrite, Message: "the session log could not be written"}

// CodeHookBlocked is the failure code of a turn whose prompt a
// UserPromptSubmit hook refused; CodeHookStopped of one a hook ended
// with continue: false (docs/hooks.md). The hook's own words are in its
// hook/run event, for the user.
const (
	CodeHookBlocked = "HOOK_BLOCKED"
	CodeHookStopped = "HOOK_STOPPED"
)

// MaxStopContinues bounds how many times Stop hooks may continue one
// turn: a hook that always blocks cannot keep a turn alive forever.
const MaxStopContinues = 5

// Hooks are the user's hooks the loop runs (internal/hooks.Runner,
// docs/hooks.md); the tool calls' run in tool.Registry.Run.
type Hooks interface {
	// UserPromptSubmit runs before a prompt is sent: block refuses it,
	// context is added for the model before it.
	UserPromptSubmit(ctx context.Context, prompt string) (block bool, context string)
	// Stop runs when the model would end the turn; a reason continues
	// the turn with it as the next message. active: a Stop hook already
	// continued this turn; last is the model's final text.
	Stop(ctx context.Context, active bool, last string) (reason string)
	// PreCompact runs before the history is summarized.
	PreCompact(ctx context.Context, trigger string)
	// Halted says a hook answered continue: false; ClearHalt forgets it
	// when a turn starts.
	Halted() (string, bool)
	ClearHalt()
}

// DefaultMaxSteps is the default step limit of a turn.
const DefaultMaxSteps = 50

// Agent runs turns of one session. Its fields are set before the first
// turn and not changed while one runs.
type Agent struct {
	Model     llm.Model
	ModelName string // the model name sent on requests
	Provider  string // the provider name recorded in llm/retry
	System    string
	Tools     *tool.Registry
	Env       *tool.Env
	Log       *session.Log
	MaxSteps  int
	MaxTokens int
	Retry     *retry.Executor
	// Inbox, when set, is drained before every step.
	Inbox Inbox
	// Budget, when set, is the delegation tree's budget: no model request
	// starts once it ran out, and every response's usage is charged to it.
	Budget *budget.Budget
	// Cost prices one response's usage at the model's price (nil result:
	// unknown); nil leaves every cost unknown.
	Cost func(llm.Usage) *float64
	// Window and MaxOutput are the model's context window and output
	// limit in tokens (internal/models; 0: unknown, and the loop compacts
	// only when the provider says the window was exceeded). Context is
	// config `context:` (zero: compact.Defaults).
	Window    int
	MaxOutput int
	Context   compact.Settings
	// Redact, when set, is applied to every tool result before it is
	// logged or sent: it replaces the known secret values (SPEC §12).
	Redact func(string) string
	// Trace, when set, sees the session's runs, turns, model requests and
	// tool calls (trace.go; internal/telemetry's spans).
	Trace Tracer
	// Hooks, when set, are the user's hooks (internal/hooks).
	Hooks Hooks

	mu      sync.Mutex
	history []llm.Message
	loaded  bool
	ctx     contextState
	notes   []note // Notify's, undelivered; guarded by mu
}

// note is a notice waiting for the next step (Notify).
type note struct{ kind, text string }

// Notify has the model told text before its next step (in this turn, or
// before the next turn's prompt): a user message marked with kind (session.UserMessage's
// Notice), appended to the log and the history — the system prompt stays
// as it is, so a provider's prompt cache still holds. A later notice of
// the same kind replaces one not yet delivered: the model is told the
// state as it is, not every change on the way.
func (a *Agent) Notify(kind, text string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, n := range a.notes {
		if n.kind == kind {
			a.notes = append(a.notes[:i], a.notes[i+1:]...)
			break
		}
	}
	a.notes = append(a.notes, note{kind, text})
}

// takeNotes returns the notices waiting and forgets them.
func (a *Agent) takeNotes() []note {
	a.mu.Lock()
	defer a.mu.Unlock()
	ns := a.notes
	a.notes = nil
	return ns
}

// Inbox delivers what arrived while the loop was busy or idle (background
// job settlements). Drain records its events through appendEvent — inside
// the current turn, so every event stays enclosed by one — and returns the
// texts the model receives as user messages.
type Inbox interface {
	Drain(appendEvent func(typ string, data any)) []string
}

// TurnResult is how a turn ended.
type TurnResult struct {
	Turn    int
	Reason  session.EndReason
	By      string
	Failure *session.Failure
	Usage   llm.Usage
}

// LoadHistory seeds the history from events of an earlier run (resume).
func (a *Agent) LoadHistory(events []session.Event) error {
	es, err := session.HistoryEntries(events)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.history, a.ctx = nil, contextState{}
	for _, e := range es {
		a.record(e.Seq, e.Message)
	}
	a.loaded = true
	return nil
}

// RunTurn runs one turn for a user prompt and returns how it ended. It
// never returns early without a turn/end in the log: every outcome,
// cancellation included, is recorded, and synced to disk before RunTurn
// returns, so whoever reports the outcome (an exit status, a protocol
// response, a parent's subagent/end) reports what the log holds. A turn
// whose log could not be written ends error llm.CodeLogWrite.
func (a *Agent) RunTurn(ctx context.Context, prompt string) TurnResult {
	t := &turn{a: a, n: a.Log.NextTurn()}
	ctx = t.startTrace(ctx)
	return t.end(t.run(ctx, prompt))
}

// end records the turn's end as res says, syncs the log and returns res,
// or the llm.CodeLogWrite result when the log could not be written: the one
// way every kind of turn (a prompt's, CloseTurn's, Compact's) closes.
func (t *turn) end(res TurnResult) TurnResult {
	end := session.TurnEnd{Turn: t.n, Reason: res.Reason, By: res.By, Failure: res.Failure}
	if !res.Usage.IsZero() {
		u := res.Usage
		end.Usage = &u
	}
	t.append(session.TypeTurnEnd, end)
	t.sync()
	if t.err != nil {
		res = t.logWriteResult()
	}
	t.trace().End(res)
	return res
}

// CloseTurn records a turn that asks no model: it delivers the inbox (the
// subagent/end and job/notice events and the notice messages of jobs that
// settled, killed ones included) and ends with reason, by and f. A run
// that stops waiting for its background jobs — the user interrupted it,
// or it reached its wake-up bound — kills them and closes with this turn,
// so no job leaves the log without its end.
func (a *Agent) CloseTurn(reason session.EndReason, by string, f *session.Failure) TurnResult {
	if reason == session.ReasonAborted {
		by = a.abortedBy(by)
	}
	t := &turn{a: a, n: a.Log.NextTurn()}
	t.append(session.TypeTurnStart, session.TurnStart{Turn: t.n})
	if a.Inbox != nil {
		for _, s := range a.Inbox.Drain(t.appendEvent) {
			t.user(s)
		}
	}
	return t.end(TurnResult{Turn: t.n, Reason: reason, By: by, Failure: f})
}

// AbortedBy says who ended a turn whose context is done: the cause the
// context was cancelled with (ErrAbortedByParent, ErrAbortedByTimeout),
// else the user.
func AbortedBy(ctx context.Context) string {
	if _, ok := budget.Of(ctx); ok {
		return session.AbortedByBudget
	}
	cause := context.Cause(ctx)
	// A liveness timeout (childproc.ErrStalled): its model request made no
	// progress. Recognised by its marker method so the loop links no child
	// lifecycle.
	var lt interface{ LivenessTimeout() }
	if errors.As(cause, &lt) {
		return session.AbortedByTimeout
	}
	switch cause {
	case ErrAbortedByParent:
		return session.AbortedByParent
	case ErrAbortedByTimeout:
		return session.AbortedByTimeout
	}
	return session.AbortedByUser
}

// Severity orders turn end reasons from best (completed, 0) to worst
// (error): the outcome of a run of several turns is its worst turn's.
func Severity(reason session.EndReason) int {
	switch reason {
	case session.ReasonCompleted:
		return 0
	case session.ReasonMaxTokens:
		return 1
	case session.ReasonRefusal:
		return 2
	case session.ReasonAborted:
		return 3
	}
	return 4
}

// LogError returns the first error of the session log, nil while every
// write succeeded: the cause behind a llm.CodeLogWrite turn.
func (a *Agent) LogError() error { return a.Log.Err() }

type turn struct {
	a     *Agent
	n     int
	usage llm.Usage
	err   error // first log failure; ends the turn
	// pauses counts the turn's pause_turn continuations; each costs a step.
	pauses int
	tr     TurnTrace // the turn's span (trace.go)
}

// appendEvent is append for the inbox, which needs no seq.
func (t *turn) appendEvent(typ string, data any) { t.append(typ, data) }

// append appends an event to the log and returns its seq.
func (t *turn) append(typ string, data any) int64 {
	e, err := t.a.Log.Append(typ, data)
	if err != nil && t.err == nil {
		t.err = err
	}
	return e.Seq
}

// flush writes what the turn appended to the file (write-ahead of a model
// request); sync also fsyncs it (write-ahead of a tool's effects and of
// the turn's outcome). Both report whether the log is still good.
func (t *turn) flush() bool      { return t.keep(t.a.Log.Flush()) }
func (t *turn) sync() bool       { return t.keep(t.a.Log.Sync()) }
func (t *turn) syncBehind() bool { return t.keep(t.a.Log.SyncBehind()) }

func (t *turn) keep(err error) bool {
	if err != nil && t.err == nil {
		t.err = err
	}
	return t.err == nil
}

func (t *turn) logWriteResult() TurnResult {
	f := logWriteFailure
	return TurnResult{Turn: t.n, Reason: session.ReasonError, Failure: &f, Usage: t.usage}
}

// addHistory adds m, recorded by the event seq, to the history.
func (t *turn) addHistory(seq int64, m llm.Message) {
	t.a.mu.Lock()
	t.a.record(seq, m)
	t.a.mu.Unlock()
}

func (t *turn) snapshot() []llm.Message {
	t.a.mu.Lock()
	defer t.a.mu.Unlock()
	return append([]llm.Message(nil), t.a.history...)
}

func (t *turn) user(text string) {
	m := llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: text}}}
	t.addHistory(t.append(session.TypeUserMessage, session.UserMessage{Message: m}), m)
}

// notices appends the notices waiting (Agent.Notify) as user messages.
func (t *turn) notices() {
	for _, n := range t.a.takeNotes() {
		m := llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: n.text}}}
		t.addHistory(t.append(session.TypeUserMessage, session.UserMessage{Message: m, Notice: n.kind}), m)
	}
}

func (t *turn) run(ctx context.Context, prompt string) TurnResult {
	t.append(session.TypeTurnStart, session.TurnStart{Turn: t.n, TraceID: t.trace().TraceID()})
	// A resumed session may end in tool calls a crash left unanswered; a
	// provider refuses such a history, so answer them, durably, first.
	for _, c := range session.DanglingCalls(t.snapshot()) {
		t.toolResult(0, c.ID, tool.Result{Content: "tool call was interrupted before it returned a result", IsError: true})
	}
	// The state the model should know comes before the prompt it bears on
	// (and the prompt stays the last message, which an echo model answers).
	t.notices()
	if t.a.Hooks != nil {
		t.a.Hooks.ClearHalt()
	}
	if prompt != "" { // an empty prompt: a turn that only delivers the inbox
		if t.a.Hooks != nil {
			block, extra := t.a.Hooks.UserPromptSubmit(ctx, prompt)
			if block {
				return t.result(session.ReasonError, &session.Failure{Code: CodeHookBlocked, Message: "a UserPromptSubmit hook refused the prompt; it was not sent"})
			}
			if extra != "" {
				t.notice(session.NoticeHook, "[UserPromptSubmit hook context]\n"+extra)
			}
		}
		t.user(prompt)
	}
	maxSteps := t.maxSteps()
	stops := 0
	for step := 0; ; step++ {
		if ctx.Err() != nil || t.a.Budget.Err() != nil {
			return t.aborted(ctx)
		}
		if step+t.pauses >= maxSteps {
			return t.maxStepsResult()
		}
		t.notices() // a change while the turn runs
		if t.a.Inbox != nil {
			for _, s := range t.a.Inbox.Drain(t.appendEvent) {
				t.user(s)
			}
		}
		if !t.fitContext(ctx) {
			return t.logWriteResult()
		}
		t.append(session.TypeStepStart, session.StepStart{Turn: t.n, Step: step})
		done, res := t.step(ctx, step)
		t.append(session.TypeStepEnd, session.StepEnd{Turn: t.n, Step: step})
		if !t.flush() {
			return t.logWriteResult()
		}
		if r, ok := t.hooked(ctx, done, res, &stops); ok {
			return r
		} else if done && r.Reason == "" {
			continue // a Stop hook continued the turn
		}
		if done {
			return res
		}
	}
}

// hooked applies the hooks' word after a step: a continue: false ends
// the turn (ok); a Stop hook that blocks a turn that completed continues
// it, at most MaxStopContinues times, with its reason as the next message
// (r zero, ok false).
func (t *turn) hooked(ctx context.Context, done bool, res TurnResult, stops *int) (r TurnResult, ok bool) {
	h := t.a.Hooks
	if h == nil {
		return res, false
	}
	if _, halted := h.Halted(); halted {
		return t.result(session.ReasonError, &session.Failure{Code: CodeHookStopped, Message: "a hook stopped the turn (continue: false)"}), true
	}
	if !done || res.Reason != session.ReasonCompleted || *stops >= MaxStopContinues || ctx.Err() != nil {
		return res, false
	}
	reason := h.Stop(ctx, *stops > 0, lastAssistantText(t.snapshot()))
	if _, halted := h.Halted(); halted {
		return t.result(session.ReasonError, &session.Failure{Code: CodeHookStopped, Message: "a hook stopped the turn (continue: false)"}), true
	}
	if reason == "" {
		return res, false
	}
	*stops++
	t.notice(session.NoticeHook, "[Stop hook] "+reason)
	return TurnResult{}, false
}

// lastAssistantText is the text of the history's last assistant message.
func lastAssistantText(history []llm.Message) string {
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role != llm.RoleAssistant {
			continue
		}
		var sb strings.Builder
		for _, b := range history[i].Content {
			if b.Type == llm.BlockText {
				sb.WriteString(b.Text)
			}
		}
		return sb.String()
	}
	return ""
}

// notice appends a user message marked kind (a hook's words for the model).
func (t *turn) notice(kind, text string) {
	m := llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: text}}}
	t.addHistory(t.append(session.TypeUserMessage, session.UserMessage{Message: m, Notice: kind}), m)
}

func (t *turn) result(reason session.EndReason, f *session.Failure) TurnResult {
	return TurnResult{Turn: t.n, Reason: reason, Failure: f, Usage: t.usage}
}

func (t *turn) aborted(ctx context.Context) TurnResult {
	r := t.result(session.ReasonAborted, nil)
	r.By = t.a.abortedBy(AbortedBy(ctx))
	return r
}

// abortedBy is who ended an aborted turn: by, unless the budget ran out —
// then whoever cancelled did so because of it.
func (a *Agent) abortedBy(by string) string {
	if a.Budget.Err() != nil {
		return session.AbortedByBudget
	}
	return by
}

// price sets u's cost from the model's price, when u has none.
func (t *turn) price(u llm.Usage) llm.Usage {
	if u.CostUSD == nil && t.a.Cost != nil && !u.IsZero() {
		u.CostUSD = t.a.Cost(u)
	}
	return u
}

// maxSteps is the turn's step limit (MaxSteps, DefaultMaxSteps when 0).
func (t *turn) maxSteps() int {
	if t.a.MaxSteps > 0 {
		return t.a.MaxSteps
	}
	return DefaultMaxSteps
}

// maxStepsResult ends a turn that used up its steps (pauses included).
func (t *turn) maxStepsResult() TurnResult {
	n := t.maxSteps()
	return t.result(session.ReasonError, &session.Failure{Code: llm.CodeMaxSteps, Message: fmt.Sprintf("turn reached its limit of %d steps", n)})
}

// step runs one model request (with retries) and its tool calls. done
// reports that the turn is over, with res saying how.
func (t *turn) step(ctx context.Context, step int) (done bool, res TurnResult) {
	var (
		content []llm.Block
		finish  llm.Finish
	)
	// pause_turn continues the same step: the partial message is appended
	// and the model asked again.
	overflowed := false
	for {
		var asm *llm.Assembler
		exec := t.a.Retry
		if exec == nil {
			exec = &retry.Executor{Policy: retry.Policy{}}
		}
		finish = exec.Run(ctx, func(ctx context.Context) llm.Finish {
			asm = &llm.Assembler{}
			// Write-ahead: everything the request is built from (turn/start,
			// the prompt, delivered notices, step/start, a retry) is in
			// the file before the model is asked, and made durable while
			// it answers, so the sync before a tool or the turn's end has
			// little left to do.
			if !t.syncBehind() {
				return llm.Finish{Kind: llm.FinishError, Code: llm.CodeLogWrite, Message: logWriteFailure.Message}
			}
			if t.a.Budget.Err() != nil { // no request once the budget ran out
				return llm.Finish{Kind: llm.FinishAborted}
			}
			req := &llm.Request{
				Model: t.a.ModelName, System: t.a.System, Messages: t.snapshot(),
				Tools: t.a.Tools.Specs(), MaxTokens: t.a.MaxTokens,
			}
			raw := t.a.requestRaw(req)
			traced := t.trace().Request(ctx, step, req)
			for c := range t.a.Model.Stream(ctx, req) {
				t.append(session.TypeAssistantChunk, session.AssistantChunk{Turn: t.n, Step: step, Chunk: c})
				asm.Push(c)
			}
			u := t.price(asm.Usage())
			t.a.calibrate(raw, u)
			t.usage = t.usage.Add(u)
			t.a.Budget.Charge(u)
			fin := asm.Finish()
			traced(u, fin, asm.Blocks())
			return fin
		}, retry.Hooks{
			Before: func(r retry.Attempt) {
				id := strconv.Itoa(t.n) + "." + strconv.Itoa(step) + "." + strconv.Itoa(r.N)
				asm = nil // the failed attempt is never an answer
				t.trace().Retry(step, r)
				t.append(session.TypeLLMRetry, session.LLMRetry{
					RetryID: id, Turn: t.n, Step: step, Provider: t.a.Provider, Retry: r.N,
					MaxRetries: r.Max, DelayMs: r.Delay.Milliseconds(),
					Failure: session.Failure{Code: r.Failure.Code, Message: r.Failure.Message},
				})
				t.flush()
			},
			After: func(r retry.Attempt) {
				id := strconv.Itoa(t.n) + "." + strconv.Itoa(step) + "." + strconv.Itoa(r.N)
				t.append(session.TypeLLMRetryStarted, session.LLMRetryStarted{RetryID: id, Turn: t.n, Step: step, Retry: r.N})
			},
		})
		if t.err != nil {
			return true, t.logWriteResult()
		}
		if asm == nil { // cancelled during a retry wait
			asm = &llm.Assembler{}
		}
		usage := t.price(asm.Usage())
		if finish.Kind == llm.FinishError && finish.Code == llm.CodeContextWindowExceeded && !overflowed && ctx.Err() == nil {
			// One compaction and one more try of the step.
			overflowed = true
			if t.compact(ctx, session.CompactOverflow) {
				continue
			}
			if t.err != nil {
				return true, t.logWriteResult()
			}
		}
		switch finish.Kind {
		case llm.FinishError:
			return true, t.result(session.ReasonError, &session.Failure{Code: finish.Code, Message: finish.Message})
		case llm.FinishAborted:
			// Keep what was streamed: text and reasoning are a partial
			// answer; tool calls may be cut and are never kept.
			var partial []llm.Block
			for _, b := range asm.Blocks() {
				if b.Type != llm.BlockToolCall {
					partial = append(partial, b)
				}
			}
			if len(partial) > 0 {
				t.assistant(step, partial, usage, true)
			}
			return true, t.aborted(ctx)
		}
		content = asm.Blocks()
		t.assistant(step, content, usage, false)
		if finish.Kind != llm.FinishPause {
			break
		}
		if ctx.Err() != nil {
			return true, t.aborted(ctx)
		}
		// Every pause costs a step: a model that pauses forever ends the
		// turn at MaxSteps like one that calls tools forever.
		t.pauses++
		if step+t.pauses >= t.maxSteps() {
			return true, t.maxStepsResult()
		}
	}
	var calls []llm.Block
	for _, b := range content {
		if b.Type == llm.BlockToolCall {
			calls = append(calls, b)
		}
	}
	switch finish.Kind {
	case llm.FinishMaxTokens:
		return true, t.result(session.ReasonMaxTokens, nil)
	case llm.FinishRefusal:
		return true, t.result(session.ReasonRefusal, nil)
	}
	// stop or tool-calls: tool calls are executed whatever the finish
	// said (some OpenAI-compatible servers send tool calls under "stop").
	if len(calls) == 0 {
		return true, t.result(session.ReasonCompleted, nil)
	}
	if !t.runTools(ctx, step, calls) {
		return true, t.logWriteResult()
	}
	if ctx.Err() != nil {
		return true, t.aborted(ctx)
	}
	return false, TurnResult{}
}

func (t *turn) assistant(step int, content []llm.Block, usage llm.Usage, interrupted bool) {
	m := llm.Message{Role: llm.RoleAssistant, Content: content}
	if m.Content == nil {
		m.Content = []llm.Block{}
	}
	d := session.AssistantMessage{Turn: t.n, Step: step, Message: m, Interrupted: interrupted}
	if !usage.IsZero() {
		d.Usage = &usage
	}
	seq := t.append(session.TypeAssistantMessage, d)
	if len(content) > 0 {
		t.addHistory(seq, m)
	}
}

// runTools logs every call, runs them — consecutive calls to tools that may
// run concurrently together, the others alone — and commits the results in
// the model's order. It runs nothing, and reports false, when the calls
// cannot be put on disk first.
func (t *turn) runTools(ctx context.Context, step int, calls []llm.Block) bool {
	for _, c := range calls {
		t.append(session.TypeToolCall, session.ToolCall{Turn: t.n, Step: step, CallID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	// A tool's effect can outlive a crash, or a power loss; its call must
	// be on disk first, synced, so a resumed session knows to answer it.
	// Calls that leave no trace (reading files) are only written: a power
	// loss that took them would take nothing they did.
	durable := t.flush
	if !t.a.Tools.Traceless(calls) {
		durable = t.sync
	}
	if !durable() {
		return false
	}
	results := make([]tool.Result, len(calls))
	for i := 0; i < len(calls); {
		j := i + 1
		if t.a.Tools.Concurrent(calls[i].Name) {
			for j < len(calls) && t.a.Tools.Concurrent(calls[j].Name) {
				j++
			}
		}
		// Admission (tool.Admitter) happens in the model's order, before
		// the batch runs concurrently: the first background calls are the
		// ones admitted under the job limit, and job ids follow the calls.
		admitted := make([]context.Context, j-i)
		releases := make([]func(), j-i)
		for k := i; k < j; k++ {
			admitted[k-i], releases[k-i] = t.a.Tools.Admit(ctx, t.a.Env, calls[k].Name, callArgs(calls[k]))
		}
		if j == i+1 {
			// One call runs on the turn's goroutine: a goroutine of its
			// own would start with a small stack and grow it, walking
			// the frames on it each time (cli.Presize says what that costs).
			results[i] = t.runTool(admitted[0], calls[i])
			releases[0]()
			i = j
			continue
		}
		var wg sync.WaitGroup
		for k := i; k < j; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer releases[k-i]()
				results[k] = t.runTool(admitted[k-i], calls[k])
			}()
		}
		wg.Wait()
		i = j
	}
	for i, c := range calls {
		t.toolResult(step, c.ID, results[i])
	}
	return true
}

func (t *turn) runTool(ctx context.Context, c llm.Block) tool.Result {
	if ctx.Err() != nil {
		return tool.Result{Content: "tool call was cancelled before it ran", IsError: true}
	}
	ctx, end := t.trace().Tool(ctx, c)
	r := t.a.Tools.Run(tool.WithCallID(ctx, c.ID), t.a.Env, c.Name, callArgs(c))
	end(r)
	return r
}

// callArgs is a tool call's arguments, {} when the model sent none.
func callArgs(c llm.Block) json.RawMessage {
	args := json.RawMessage(c.Arguments)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return args
}

func (t *turn) toolResult(step int, callID string, r tool.Result) {
	if t.a.Redact != nil {
		r.Content = t.a.Redact(r.Content)
	}
	seq := t.append(session.TypeToolResult, session.ToolResult{Turn: t.n, Step: step, CallID: callID, Content: r.Content, IsError: r.IsError, Image: r.Image})
	t.addHistory(seq, llm.Message{Role: llm.RoleTool, Content: []llm.Block{{
		Type: llm.BlockToolResult, CallID: callID, Content: r.Content, IsError: r.IsError, Image: r.Image,
	}}})
}
