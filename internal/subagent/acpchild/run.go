package acpchild

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/reinsdev/reins/internal/childproc"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/proc"
)

// run is one published ACP child run.
type run struct {
	p      *provider
	req    subagent.Request
	policy string
	proc   *proc.Process
	pipes  *proc.Pipes
	stdin  *watchedWriter
	conn   *sdk.ClientSideConnection
	filter *updateFilter // handles session/update ahead of the SDK
	sdkLog *logWriter
	tap    *subagent.Tap // the live stream of the child's activity, if observed

	// life is the run's lifetime (childproc.Lifetime), and ctx its
	// context: ended with errLocalCancel, errParentCancel, errTimeout or
	// errDisposed.
	life *childproc.Lifetime
	ctx  context.Context

	stderrDone chan struct{}
	stderrTail *proc.Tail
	// route is the run the connection's updates and requests go to: a
	// kept child's next run takes them over (Again).
	route *router

	res outcome.Result // set when the prompt settled (life.Done)

	// loaded is a run that continues a session it loaded (session/load).
	loaded bool

	mu        sync.Mutex
	sessionID sdk.SessionId
	fold      outcome.Fold
	kinds     map[sdk.ToolCallId]string // closed tool kinds seen in updates
	tapCalls  map[sdk.ToolCallId]string // the live stream's call ids (tapCallID)
	kindSeen  chan struct{}             // closed and replaced when kinds grows
	denial    *outcome.PermissionLine   // the last rejected or cancelled request
	allowance *outcome.PermissionLine   // the last allowed request
	// lateReplay is a loaded session's replay that went on after reins
	// counted updates as this run's (awaitReplay): its text cannot be
	// told from the new answer's, so the run fails.
	lateReplay bool
}

// Session is empty: the child's ACP session id is child-chosen text, not a
// reins session, so it never reaches the parent's log.
func (r *run) Session() string { return "" }

// Pid leads the child's process tree (the sandbox supervisor and the agent
// below it): /jobs shows a kept child's memory (subagent.Pider).
func (r *run) Pid() int { return r.proc.Pgid }

func (r *run) Wait(ctx context.Context) outcome.Result {
	r.life.Wait(ctx, errParentCancel)
	return r.res
}

func (r *run) Cancel() { r.life.End(errLocalCancel) }

// Stalled reports that the child was stopped for sending nothing for
// subagents.stallTimeout (subagent.Staller).
func (r *run) Stalled() bool { return r.life.Stalled() }

// Dispose cancels a prompt still running, then tears the process group
// down with the ladder. Its error is for the host log; its text is the
// fixed teardown diagnostic.
func (r *run) Dispose() error {
	return r.life.Dispose(errDisposed, func() error {
		if err := r.teardown(); err != nil {
			r.p.logf("acp child %s (%s): teardown: %v", r.req.RunID, r.req.Agent.Name, err)
			return &TeardownError{Err: err}
		}
		return nil
	})
}

// TeardownError is a teardown whose quiescence could not be confirmed.
// Error() is the fixed teardown diagnostic; Err, the raw cause, is for the
// host log only.
type TeardownError struct{ Err error }

func (e *TeardownError) Error() string { return teardownDiagnostic() }
func (e *TeardownError) Unwrap() error { return e.Err }

// teardown runs the ladder, then closes the parent's pipe ends so the SDK's
// reader and the stderr drain end even if an escaped process still holds
// the child's ends, and waits for both.
func (r *run) teardown() error {
	r.life.StopTimer()
	ladder := r.p.opts.Ladder
	if r.life.Hurried() {
		ladder = ladder.Unresponsive()
	}
	err := r.proc.Dispose(ladder)
	r.pipes.Stdout.Close()
	<-r.filter.done
	<-r.conn.Done()
	r.sdkLog.stop()
	r.pipes.Stderr.Close()
	<-r.stderrDone
	if t := r.stderrTail.String(); t != "" {
		r.p.logf("acp child %s (%s) stderr tail: %q", r.req.RunID, r.req.Agent.Name, t)
	}
	r.life.End(errDisposed)
	return err
}

// prompt sends session/prompt and settles the run (it is the run's body,
// childproc.Lifetime.Go). When the run is cancelled it sends session/cancel
// and gives the child CancelGrace to answer before it stops waiting.
func (r *run) prompt() {
	pctx, pcancel := context.WithCancel(context.Background())
	defer pcancel()
	var (
		graceMu    sync.Mutex
		graceTimer *time.Timer
	)
	stop := context.AfterFunc(r.ctx, func() {
		// After the grace, stop waiting; closing stdin (the ladder's
		// first rung) also frees a write the child never reads.
		// A stalled child, or one whose time is up, gets no grace; one
		// that lets the grace pass unanswered gets none at teardown.
		grace := r.p.opts.CancelGrace
		if r.life.Hurried() {
			grace = 0
		}
		graceMu.Lock()
		graceTimer = time.AfterFunc(grace, func() {
			r.life.Hurry()
			pcancel()
			r.pipes.Stdin.Close()
		})
		graceMu.Unlock()
		_ = r.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: r.sessionID})
	})
	unwatch := r.watchExit(pcancel)
	r.tap.Emit(session.TypeTurnStart, session.TurnStart{Turn: 1})
	resp, err := r.conn.Prompt(pctx, sdk.PromptRequest{
		SessionId: r.sessionID,
		Prompt:    []sdk.ContentBlock{sdk.TextBlock(promptText(r.req))},
		Meta:      traceMeta(r.req.Trace),
	})
	unwatch()
	stop()
	graceMu.Lock()
	if graceTimer != nil {
		graceTimer.Stop()
	}
	graceMu.Unlock()
	if err != nil {
		r.p.logf("acp child %s (%s): prompt: %v", r.req.RunID, r.req.Agent.Name, err)
	}
	r.drain()
	r.res = r.settle(resp, err)
	end := session.TurnEnd{Turn: 1, Reason: r.res.StopReason.TurnEnd()}
	if !r.res.Usage.IsZero() {
		end.Usage = &r.res.Usage
	}
	r.tap.Emit(session.TypeTurnEnd, end)
}

// drain waits until everything a child whose leader exited wrote before
// it died has been handled: its stdout ended, or (a grandchild may hold it
// open) the pipe is empty and the filter waits on it. ExitWait bounds the
// wait. A live child needs no drain: its prompt response, or the parent's
// cancellation, came after the updates that matter.
func (r *run) drain() {
	if !r.proc.Exited() {
		return
	}
	deadline := time.Now().Add(r.p.opts.ExitWait)
	for !r.filter.finished() && !r.filter.idle() {
		if time.Now().After(deadline) {
			r.p.logf("acp child %s (%s): output not drained within %s", r.req.RunID, r.req.Agent.Name, r.p.opts.ExitWait)
			return
		}
		select {
		case <-r.filter.done:
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// promptText is the task, after the agent file's body when it has one:
// ACP has no system prompt, so the body's instructions lead the prompt.
func promptText(req subagent.Request) string {
	if req.Continues != "" {
		return req.Prompt // the body led the child's first prompt already
	}
	if body := strings.TrimSpace(req.Agent.SystemPrompt); body != "" {
		return body + "\n\n" + req.Prompt
	}
	return req.Prompt
}

// stopReasons maps the child's closed ACP stop reasons (docs/subagents.md).
var stopReasons = lazy.Value[map[sdk.StopReason]outcome.StopReason]{New: func() map[sdk.StopReason]outcome.StopReason {
	return map[sdk.StopReason]outcome.StopReason{
		sdk.StopReasonEndTurn:         outcome.StopCompleted,
		sdk.StopReasonMaxTokens:       outcome.StopMaxTokens,
		sdk.StopReasonRefusal:         outcome.StopRefusal,
		sdk.StopReasonCancelled:       outcome.StopAborted,
		sdk.StopReasonMaxTurnRequests: outcome.StopError,
	}
}}

// settle turns the prompt's outcome into the run's result.
func (r *run) settle(resp sdk.PromptResponse, err error) outcome.Result {
	r.mu.Lock()
	res := outcome.Result{Output: r.fold.Collect()}
	perm := r.denial
	if perm == nil {
		perm = r.allowance
	}
	late := r.lateReplay
	r.mu.Unlock()
	if late {
		return r.settleLateReplay()
	}
	if err == nil && resp.Usage != nil {
		res.Usage = usage(resp.Usage)
	}
	cause := context.Cause(r.ctx)
	local := cause != nil && !errors.Is(cause, errTimeout)

	var failure *outcome.Diagnostic
	switch {
	case err == nil:
		stop, known := stopReasons.Get()[resp.StopReason]
		if !known {
			stop = outcome.StopError
		}
		res.StopReason = stop
		switch {
		case local && stop == outcome.StopAborted:
			return res // a local cancellation carries no diagnostic
		case errors.Is(cause, errTimeout) && stop == outcome.StopAborted:
			d := diag(outcome.StagePrompt, outcome.CategoryTimeout, outcome.StopAborted)
			failure = &d
		case stop == outcome.StopCompleted && len(res.Output) == 0:
			// An empty completion is not an answer (docs/subagents.md,
			// "Empty answers").
			res.StopReason = outcome.StopError
			d := diag(outcome.StagePrompt, outcome.CategoryEmptyOutput, outcome.StopError)
			failure = &d
		case resp.StopReason == sdk.StopReasonMaxTurnRequests:
			d := diag(outcome.StagePrompt, outcome.CategoryRemoteLimit, outcome.StopError)
			failure = &d
		case !known:
			d := diag(outcome.StagePrompt, outcome.CategoryUnknown, outcome.StopError)
			failure = &d
		}
	case local:
		res.StopReason = outcome.StopAborted
		return res
	case errors.Is(cause, errTimeout):
		res.StopReason = outcome.StopAborted
		d := diag(outcome.StagePrompt, outcome.CategoryTimeout, outcome.StopAborted)
		failure = &d
	default:
		res.StopReason = outcome.StopError
		category, code, sig := r.classify(outcome.StagePrompt, err)
		d := diag(outcome.StagePrompt, category, outcome.StopError)
		if category == outcome.CategoryProcessExit {
			// The child exited before a terminal prompt response.
			d.Stage = outcome.StageProcess
		}
		d.ExitCode, d.Signal = code, sig
		failure = &d
	}
	if res.StopReason == outcome.StopCompleted {
		return res
	}
	switch {
	case failure != nil:
		res.Diagnostic = failure.String()
		if perm != nil {
			res.Diagnostic += "\n" + perm.String()
		}
	case perm != nil:
		// max-tokens, refusal, remote cancel: the stop reason says what
		// happened; the permission line alone explains it.
		res.Diagnostic = perm.String()
	}
	return res
}

// settleLateReplay is the result of a loaded run whose replay went on
// into the new turn: the text it folded mixes the earlier conversation
// with the new answer, so none of it is returned. A local cancellation
// is still only aborted; anything else fails at load-session (protocol:
// the agent replayed after answering session/load, docs/subagents.md).
func (r *run) settleLateReplay() outcome.Result {
	if cause := context.Cause(r.ctx); cause != nil && !errors.Is(cause, errTimeout) {
		return outcome.Result{StopReason: outcome.StopAborted}
	}
	return outcome.Result{
		StopReason: outcome.StopError,
		Diagnostic: diag(outcome.StageLoadSession, outcome.CategoryProtocol, outcome.StopError).String(),
	}
}

func usage(u *sdk.Usage) llm.Usage {
	out := llm.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
	if u.CachedReadTokens != nil {
		out.CacheReadTokens = *u.CachedReadTokens
	}
	if u.ThoughtTokens != nil {
		out.ReasoningTokens = *u.ThoughtTokens
	}
	return out
}

// drainStderr keeps the child's stderr flowing (a full pipe would stall
// it) and its tail for the host log.
func (r *run) drainStderr() {
	defer close(r.stderrDone)
	buf := make([]byte, 4096)
	for {
		n, err := r.pipes.Stderr.Read(buf)
		r.stderrTail.Write(buf[:n])
		if err != nil { // EOF, or the parent's end closed at teardown
			return
		}
	}
}

// client is reins's side of the connection: it folds the child's text,
// notes tool kinds, and answers permission requests by policy. It offers no
// file system or terminal (the capabilities say so).
type client struct{ route *router }

// router hands the connection's callbacks to the current run of the child.
type router struct {
	mu  sync.Mutex
	cur *run
}

func (rt *router) get() *run {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.cur
}

func (rt *router) set(r *run) {
	rt.mu.Lock()
	rt.cur = r
	rt.mu.Unlock()
}

func (rt *router) update(n sdk.SessionNotification) { rt.get().update(n) }

// SessionUpdate is the SDK's path for updates; the update filter handles
// every well-formed one before the SDK sees it (updates.go), so this only
// runs if that ever changes.
func (c *client) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.route.update(n)
	return nil
}

// update folds one session/update: it never blocks on anything but r.mu,
// which no one holds while waiting.
func (r *run) update(n sdk.SessionNotification) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sessionID == "" || n.SessionId != r.sessionID {
		return
	}
	u := n.Update
	switch {
	case u.UserMessageChunk != nil:
		if r.loaded && !r.lateReplay && r.replayed(u.UserMessageChunk.Content) {
			r.lateReplay = true
			r.p.logf("acp child %s (%s): the loaded session's replay went on after the follow-up was sent", r.req.RunID, r.req.Agent.Name)
		}
	case u.AgentMessageChunk != nil:
		if t := u.AgentMessageChunk.Content.Text; t != nil {
			r.fold.PushText(t.Text)
			r.tap.Emit(session.TypeAssistantChunk, session.AssistantChunk{Turn: 1, Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Delta: t.Text}})
		}
	case u.AgentThoughtChunk != nil:
		if t := u.AgentThoughtChunk.Content.Text; t != nil {
			r.tap.Emit(session.TypeAssistantChunk, session.AssistantChunk{Turn: 1, Chunk: llm.Chunk{Type: llm.ChunkReasoningDelta, Delta: t.Text}})
		}
	case u.ToolCall != nil:
		r.noteKind(u.ToolCall.ToolCallId, closedKind(u.ToolCall.Kind))
		// The tool's name is its closed kind: the title is the child's text.
		r.tap.Emit(session.TypeToolCall, session.ToolCall{Turn: 1, CallID: r.tapCallID(u.ToolCall.ToolCallId), Name: closedKind(u.ToolCall.Kind)})
	case u.ToolCallUpdate != nil:
		if u.ToolCallUpdate.Kind != nil {
			r.noteKind(u.ToolCallUpdate.ToolCallId, closedKind(*u.ToolCallUpdate.Kind))
		}
		if st := u.ToolCallUpdate.Status; st != nil && (*st == sdk.ToolCallStatusCompleted || *st == sdk.ToolCallStatusFailed) {
			r.tap.Emit(session.TypeToolResult, session.ToolResult{Turn: 1, CallID: r.tapCallID(u.ToolCallUpdate.ToolCallId), IsError: *st == sdk.ToolCallStatusFailed})
		}
	}
}

// replayed reports whether a user_message_chunk of a loaded run is the
// replay of an earlier prompt. A new turn has no user message but reins's
// own prompt, which an agent may echo (qwen-code echoes some): a text that
// is part of this run's prompt, or content that is not text, is not taken
// for a replay. r.mu is held.
func (r *run) replayed(c sdk.ContentBlock) bool {
	if c.Text == nil || strings.TrimSpace(c.Text.Text) == "" {
		return false
	}
	return !strings.Contains(promptText(r.req), c.Text.Text)
}

// maxTapCalls bounds the tool call ids the live stream numbers.
const maxTapCalls = 4096

// tapCallID is the live stream's id of a tool call: acp-N in the order the
// child announced them, never the child's own id text. r.mu is held.
func (r *run) tapCallID(id sdk.ToolCallId) string {
	if r.tap == nil {
		return ""
	}
	if r.tapCalls == nil {
		r.tapCalls = map[sdk.ToolCallId]string{}
	}
	if n, ok := r.tapCalls[id]; ok {
		return n
	}
	if len(r.tapCalls) >= maxTapCalls {
		return "acp-?"
	}
	n := "acp-" + strconv.Itoa(len(r.tapCalls)+1)
	r.tapCalls[id] = n
	return n
}

// noteKind records a tool call's kind and wakes a permission request
// waiting for it. r.mu is held.
func (r *run) noteKind(id sdk.ToolCallId, kind string) {
	r.kinds[id] = kind
	if r.kindSeen != nil {
		close(r.kindSeen)
	}
	r.kindSeen = make(chan struct{})
}

// kindWait bounds how long a permission request that names no kind waits
// for its tool call's update. The SDK handles a request at once but queues
// notifications, so the tool_call the child sent just before may not be
// processed yet; it already is in the queue, so the wait is short unless
// the child never announced the call.
const kindWait = 500 * time.Millisecond

// requestKind is the closed kind of a permission request's tool call: its
// own kind, else the kind of the announced tool call, else other. r.mu is
// held; it is released while waiting.
func (r *run) requestKind(tc sdk.ToolCallUpdate) string {
	if tc.Kind != nil {
		return closedKind(*tc.Kind)
	}
	deadline := time.NewTimer(kindWait)
	defer deadline.Stop()
	for {
		if k, ok := r.kinds[tc.ToolCallId]; ok {
			return k
		}
		if r.kindSeen == nil {
			r.kindSeen = make(chan struct{})
		}
		seen := r.kindSeen
		r.mu.Unlock()
		select {
		case <-seen:
			r.mu.Lock()
		case <-deadline.C:
			r.mu.Lock()
			if k, ok := r.kinds[tc.ToolCallId]; ok {
				return k
			}
			return string(sdk.ToolKindOther)
		}
	}
}

// toolKinds is the closed set of ACP tool kinds: only these may name a
// permission request in a diagnostic.
var toolKinds = lazy.Value[map[sdk.ToolKind]bool]{New: func() map[sdk.ToolKind]bool {
	return map[sdk.ToolKind]bool{
		sdk.ToolKindRead: true, sdk.ToolKindEdit: true, sdk.ToolKindDelete: true, sdk.ToolKindMove: true,
		sdk.ToolKindSearch: true, sdk.ToolKindExecute: true, sdk.ToolKindThink: true, sdk.ToolKindFetch: true,
		sdk.ToolKindSwitchMode: true, sdk.ToolKindOther: true,
	}
}}

func closedKind(k sdk.ToolKind) string {
	if toolKinds.Get()[k] {
		return string(k)
	}
	return string(sdk.ToolKindOther)
}

// readOnlyKinds are the request kinds an allow policy may grant when the
// parent runs read-only: the child inherits the parent's permission mode,
// and an ACP child can only be held to it here.
var readOnlyKinds = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return map[string]bool{
		string(sdk.ToolKindRead): true, string(sdk.ToolKindSearch): true,
		string(sdk.ToolKindThink): true, string(sdk.ToolKindFetch): true,
	}
}}

// Permission decisions (docs/subagents.md).
const (
	decisionAllowed   = "allowed"
	decisionRejected  = "rejected"
	decisionCancelled = "cancelled"
)

func (c *client) RequestPermission(_ context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	r := c.route.get()
	r.mu.Lock()
	defer r.mu.Unlock()
	kind := r.requestKind(p.ToolCall)
	cancelled := r.ctx.Err() != nil || (r.sessionID != "" && p.SessionId != r.sessionID)

	var want []sdk.PermissionOptionKind
	decision := decisionRejected
	switch {
	case cancelled:
	case r.policy == config.PermissionAllow && (r.req.Permission != tool.ReadOnly || readOnlyKinds.Get()[kind]):
		want, decision = []sdk.PermissionOptionKind{sdk.PermissionOptionKindAllowOnce}, decisionAllowed
	default:
		want = []sdk.PermissionOptionKind{sdk.PermissionOptionKindRejectOnce, sdk.PermissionOptionKindRejectAlways}
	}
	var chosen *sdk.PermissionOption
	for _, k := range want {
		for i := range p.Options {
			if p.Options[i].Kind == k {
				chosen = &p.Options[i]
				break
			}
		}
		if chosen != nil {
			break
		}
	}
	if cancelled || chosen == nil {
		decision = decisionCancelled
	}
	r.p.logf("acp child %s (%s): permission request of kind %s answered %s (policy %s)", r.req.RunID, r.req.Agent.Name, kind, decision, r.policy)
	line := &outcome.PermissionLine{Policy: r.policy, Request: kind, Decision: decision}
	if decision == decisionAllowed {
		r.allowance = line
	} else {
		r.denial = line
	}
	if chosen == nil {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(chosen.OptionId)}, nil
}

// errNoCapability is the error of the client methods reins does not
// offer; a function, as a package variable would be built at every start.
func errNoCapability() error {
	return sdk.NewMethodNotFound("reins offers this ACP child no file system or terminal")
}

func (c *client) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, errNoCapability()
}

func (c *client) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, errNoCapability()
}

func (c *client) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errNoCapability()
}

func (c *client) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errNoCapability()
}

func (c *client) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errNoCapability()
}

func (c *client) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errNoCapability()
}

func (c *client) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errNoCapability()
}

// errGone is a kept child that cannot take a follow-up: its process exited
// or its connection broke while it was idle.
var errGone = errors.New("acp child: the kept process is gone")

// Again sends the follow-up to the same ACP session of the kept process;
// the new run owns the process from here (its Dispose tears it down).
func (r *run) Again(_ context.Context, req subagent.Request) (subagent.Run, error) {
	<-r.life.Done()
	if r.proc.Exited() || r.transportBroken() {
		return nil, errGone
	}
	r.mu.Lock()
	sid := r.sessionID
	r.mu.Unlock()
	n := &run{
		p: r.p, req: req, policy: r.policy, proc: r.proc, pipes: r.pipes, stdin: r.stdin, conn: r.conn,
		filter: r.filter, sdkLog: r.sdkLog, stderrDone: r.stderrDone, stderrTail: r.stderrTail, route: r.route,
		sessionID: sid, kinds: map[sdk.ToolCallId]string{}, tap: subagent.NewTap(req),
	}
	n.life = childproc.Start(req.Agent.Timeout, errTimeout)
	n.ctx = n.life.Context()
	r.route.set(n)
	r.life.End(nil)
	n.life.WatchStall(req.StallTimeout, req.OnStall)
	n.life.Go(n.prompt)
	return n, nil
}
