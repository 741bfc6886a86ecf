package acp

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tool"
)

// acpSession is one ACP session: a reins session whose events are streamed
// to the editor as session/update notifications.
type acpSession struct {
	srv *server
	id  string
	h   *harness.Harness
	s   *harness.Session
	// missingKey is set when the model's provider has no API key: every
	// prompt is answered with an error naming the variable.
	missingKey *config.MissingKeyError
	// model is the session's model: its last failed request's provider
	// message goes to the editor with a failed turn (response).
	model *harness.Model
	// limits are each prompt's budget (session/new _meta.reins.budget over
	// config `budget:`): every prompt's tree gets a fresh one.
	limits budget.Limits

	turnMu sync.Mutex // one prompt turn at a time

	// The observer runs under the session log's lock and must not block:
	// it only queues. flush translates and sends, in order, under sendMu.
	qmu     sync.Mutex
	queue   []session.Event
	pending []*pendingCall // tool calls without a result, in the model's order
	wake    chan struct{}
	// always holds the tools the editor allowed for the whole session.
	always map[string]bool
	// cancel ends the running turn (shutdown and session/close).
	cancel context.CancelCauseFunc

	sendMu sync.Mutex
	tr     *translator
	closed bool
}

type pendingCall struct {
	id, name, args string
	asked, started bool
}

func newACPSession(srv *server, h *harness.Harness) *acpSession {
	return &acpSession{srv: srv, h: h, wake: make(chan struct{}, 1), always: map[string]bool{}, tr: newTranslator(h.Cwd, true)}
}

// observe is the session's harness.SessionOptions.Observe.
func (a *acpSession) observe(_ session.Header, e session.Event) {
	a.qmu.Lock()
	a.queue = append(a.queue, e)
	switch d := e.Payload.(type) {
	case session.ToolCall:
		a.pending = append(a.pending, &pendingCall{id: d.CallID, name: d.Name, args: normArgs(d.Arguments)})
	case session.ToolResult:
		a.pending = slices.DeleteFunc(a.pending, func(c *pendingCall) bool { return c.id == d.CallID })
	}
	a.qmu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// normArgs is the argument text as the loop hands it to a tool: empty
// arguments run as {}.
func normArgs(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}

// claim finds the first pending call of name with args that mark has not
// seen yet, and marks it. Calls carry no id into a tool, but tools needing
// approval run one at a time in the model's order, so the first unclaimed
// call with the same name and arguments is the one running.
func (a *acpSession) claim(name string, args json.RawMessage, mark func(*pendingCall) *bool) *pendingCall {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	for _, c := range a.pending {
		if f := mark(c); c.name == name && c.args == string(args) && !*f {
			*f = true
			return c
		}
	}
	return nil
}

// flush sends every queued event's updates, in order.
func (a *acpSession) flush() { a.send() }

// send flushes what is queued, then sends us, with nothing in between.
func (a *acpSession) send(us ...sdk.SessionUpdate) {
	a.sendMu.Lock()
	defer a.sendMu.Unlock()
	a.qmu.Lock()
	events := a.queue
	a.queue = nil
	a.qmu.Unlock()
	var queued []sdk.SessionUpdate
	a.tr.parent = a.id
	for _, e := range events {
		queued = append(queued, a.tr.updates(e)...)
	}
	a.sendLocked(append(coalesce(queued), us...))
}

func (a *acpSession) sendLocked(us []sdk.SessionUpdate) {
	for _, u := range us {
		if err := a.srv.conn.SessionUpdate(context.Background(), sdk.SessionNotification{SessionId: sdk.SessionId(a.id), Update: u}); err != nil {
			a.h.Logf("acp: session/update to the editor: %v", err)
		}
	}
}

// Permission options offered to the editor.
const (
	optAllow       = "allow"
	optAllowAlways = "allow-always"
	optReject      = "reject"
)

// approve is the session's tool.Env.Approve: it asks the editor with
// session/request_permission. Anything but an allow — a reject, a
// cancelled outcome, a cancelled turn, a lost connection — refuses.
func (a *acpSession) approve(ctx context.Context, name string, args json.RawMessage) bool {
	c := a.claim(name, args, func(c *pendingCall) *bool { return &c.asked })
	a.qmu.Lock()
	always := a.always[name]
	a.qmu.Unlock()
	if always {
		return true
	}
	view := describe(a.h.Cwd, "", name, string(args), true)
	if c != nil {
		view.id = c.id
	} else {
		view.id = "permission-" + strconv.FormatUint(a.srv.seq.Add(1), 10)
	}
	a.flush() // the editor knows the tool call before it is asked about it
	resp, err := a.srv.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(a.id),
		ToolCall:  view.permissionView(),
		Options: []sdk.PermissionOption{
			{OptionId: optAllow, Name: "Allow", Kind: sdk.PermissionOptionKindAllowOnce},
			{OptionId: optAllowAlways, Name: "Always allow " + name + " in this session", Kind: sdk.PermissionOptionKindAllowAlways},
			{OptionId: optReject, Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
		},
	})
	if err != nil {
		a.h.Logf("acp: session/request_permission: %v", err)
		return false
	}
	sel := resp.Outcome.Selected
	if sel == nil || ctx.Err() != nil {
		return false
	}
	switch string(sel.OptionId) {
	case optAllow:
		return true
	case optAllowAlways:
		a.qmu.Lock()
		a.always[name] = true
		a.qmu.Unlock()
		return true
	}
	return false
}

// tracked wraps a tool so the editor sees its call go in_progress when it
// really starts: after any approval, right before it runs.
type tracked struct {
	tool.Tool
	a *acpSession
}

func (t tracked) Run(ctx context.Context, env *tool.Env, args json.RawMessage) tool.Result {
	if c := t.a.claim(t.Spec().Name, args, func(c *pendingCall) *bool { return &c.started }); c != nil {
		t.a.send(inProgress(c.id))
	}
	return t.Tool.Run(ctx, env, args)
}

// track wraps every tool of the session's registry.
func (a *acpSession) track() {
	reg := a.s.Agent.Tools
	for _, n := range reg.Names() {
		t, _ := reg.Get(n)
		reg.Add(tracked{Tool: t, a: a})
	}
}

// prompt runs one turn and streams its events until it ends; the
// response follows the last update.
func (a *acpSession) prompt(ctx context.Context, text string) (sdk.PromptResponse, error) {
	a.turnMu.Lock()
	defer a.turnMu.Unlock()
	a.qmu.Lock()
	if a.closed {
		a.qmu.Unlock()
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"error": "the session is closed"})
	}
	ctx, cancel := context.WithCancelCause(ctx)
	a.cancel = cancel
	a.qmu.Unlock()
	defer func() {
		a.qmu.Lock()
		a.cancel = nil
		a.qmu.Unlock()
		cancel(nil)
	}()

	a.model.ResetProviderMessage()
	if !a.limits.IsZero() {
		b := budget.New(a.limits)
		defer b.Stop()
		a.s.SetBudget(b)
	}
	done := make(chan agent.TurnResult, 1)
	model := a.model // the turn's: a custom command may name its own
	go func() {
		restore := func() {}
		if exp, ok := a.s.Slash(ctx, text); ok {
			// A custom command or a skill (available_commands_update):
			// its prompt, on the command's model for this turn when it
			// names one, then the session's again.
			// A model reins cannot use leaves the session's (as reins
			// run, which says so on stderr; an editor has no such place).
			text = exp.Prompt
			if exp.Model != "" {
				if cm, back, err := a.h.CommandModel(a.s.Agent, a.model, exp.Model); err == nil {
					model, restore = cm, back
				}
			}
		}
		res := a.s.Run(ctx, text)
		restore()
		done <- res
	}()
	var res agent.TurnResult
	for running := true; running; {
		select {
		case <-a.wake:
			a.flush()
		case res = <-done:
			running = false
		}
	}
	a.flush()
	return response(res, a.h.ProviderDetail(res.Failure, model))
}

// response maps how the turn ended to session/prompt's answer. A failed
// turn is a JSON-RPC error: its data carries only the failure code (a
// closed set); its message is that code followed by detail, the human
// message of harness.ProviderDetail ("; the provider said (...); details
// in HOSTLOG") when the turn ended with a provider's error answer. The
// editor shows the message to the human: here the editor is the human's
// terminal, as stderr is for reins run, so the provider's own text may go
// there; it still enters no event, session log or model context.
func response(res agent.TurnResult, detail string) (sdk.PromptResponse, error) {
	switch res.Reason {
	case session.ReasonCompleted:
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	case session.ReasonMaxTokens:
		return sdk.PromptResponse{StopReason: sdk.StopReasonMaxTokens}, nil
	case session.ReasonRefusal:
		return sdk.PromptResponse{StopReason: sdk.StopReasonRefusal}, nil
	case session.ReasonAborted:
		if res.By == session.AbortedByBudget {
			// The prompt's budget ran out: a limit the agent hit, not a
			// cancellation the editor asked for.
			return sdk.PromptResponse{StopReason: sdk.StopReasonMaxTurnRequests}, nil
		}
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	code := "ERROR"
	if res.Failure != nil {
		code = failureCode(res.Failure.Code)
	}
	return sdk.PromptResponse{}, &sdk.RequestError{Code: -32603, Message: code + detail, Data: map[string]any{"code": code}}
}

// failureCode is the code an editor may be told: one of the closed set
// (llm.Codes), so no provider-chosen text (an unknown finish reason
// becomes a code) leaves; anything else is ERROR.
func failureCode(c llm.Code) string {
	if c.Known() {
		return string(c)
	}
	return "ERROR"
}

func itoa(n int) string { return strconv.Itoa(n) }

// close cancels a running turn, waits for it, and closes the session.
func (a *acpSession) close() {
	a.qmu.Lock()
	a.closed = true
	cancel := a.cancel
	a.qmu.Unlock()
	if cancel != nil {
		cancel(agent.ErrAbortedByUser)
	}
	a.turnMu.Lock()
	defer a.turnMu.Unlock()
	if err := a.s.Close(); err != nil {
		a.h.Logf("acp: closing session %s: %v", a.id, err)
	}
	a.h.Close()
}

// maxAnnounced bounds the commands available_commands_update offers.
const maxAnnounced = 200

// commandsUpdate is available_commands_update: the session's custom
// commands (docs/commands.md) and skills (docs/skills.md), which a prompt
// "/NAME ARGS" runs; ok is false when there are none.
func (a *acpSession) commandsUpdate() (sdk.SessionUpdate, bool) {
	var cmds []sdk.AvailableCommand
	for _, c := range a.s.Commands.List() {
		ac := sdk.AvailableCommand{Name: c.FullName(), Description: strings.TrimSpace(c.Description + " " + c.Label())}
		if c.ArgumentHint != "" {
			ac.Input = &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: c.ArgumentHint}}
		}
		cmds = append(cmds, ac)
	}
	if a.s.Skills != nil {
		for _, sk := range a.s.Skills.Set.List() {
			if _, clash := a.s.Commands.Get(sk.Name); !clash {
				cmds = append(cmds, sdk.AvailableCommand{Name: sk.Name, Description: "(skill) " + sk.Description})
			}
		}
	}
	if len(cmds) == 0 {
		return sdk.SessionUpdate{}, false
	}
	if len(cmds) > maxAnnounced {
		cmds = cmds[:maxAnnounced]
	}
	return sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{SessionUpdate: "available_commands_update", AvailableCommands: cmds}}, true
}
