// Package sdkserver is the reins SDK runtime behind `reins sdk` (docs/sdk-protocol.md):
// NDJSON JSON-RPC 2.0 on stdio. It initializes a harness, runs prompts in
// sessions — one FIFO queue per session — and streams every event of every
// session (children included) as session/event notifications, with
// session/status transitions and subagent/started|finished derived from the
// parents' logs.
//
// Stdout carries frames only; logs go to stderr. A malformed line is
// answered with a JSON-RPC parse error, never a crash.
package sdkserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/telemetry"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/sdk"
)

// Config holds the runtime's defaults (the `reins sdk` flags); initialize
// parameters override them.
type Config struct {
	Home       string // empty: $REINS_HOME, else ~/.reins
	Cwd        string // empty: the process's working directory
	ConfigFile string // an extra config layer (--config)
	Model      string // PROVIDER/MODEL; empty: the configured default
	BaseURL    string
	MaxTokens  int
	MaxSteps   int
	Permission string // empty: workspace-write
	Sandbox    string // --sandbox: on, off, or empty for the config's choice
	Version    string
	Getenv     func(string) string
	// Stderr receives the runtime's log lines; nil discards them.
	Stderr io.Writer
	// OutboxBytes bounds the frames queued for stdout (0:
	// DefaultOutboxBytes); a producer waits while the queue is full.
	OutboxBytes int
	// ShutdownTimeout is how long a shutting-down runtime waits for a
	// stdout that accepts nothing before it drops what is queued (0:
	// DefaultShutdownTimeout).
	ShutdownTimeout time.Duration
	// OpenEngine opens the engine the runtime's config names
	// (subagents.engine) for its model, as `reins run` does, so that a
	// reins child's own children run where its configuration says (the
	// temporal engine: on a worker). nil: every child runs locally.
	OpenEngine func(h *harness.Harness, m *harness.Model) (subagent.Engine, func(), error)
}

// Defaults of Config.
const (
	DefaultOutboxBytes     = 8 << 20
	DefaultShutdownTimeout = 5 * time.Second
)

// Server is one runtime: one client on one pair of streams.
type Server struct {
	cfg Config
	out *outbox

	// Set by initialize, before any session exists.
	h         *harness.Harness
	model     *harness.Model
	init      sdk.InitializeParams
	perm      tool.Permission
	maxTokens int
	maxSteps  int
	budget    *budget.Budget // initialize's budget over every session, or the config's
	// closeEngine releases the engine Config.OpenEngine opened (nil: none).
	closeEngine func()

	base       context.Context
	cancelBase context.CancelCauseFunc

	mu       sync.Mutex
	sessions map[string]*sess
	runs     map[runKey]string // a parent's subagent run -> child session
	nextMsg  int
	closing  bool
	workers  sync.WaitGroup
}

type runKey struct{ parent, run string }

type sess struct {
	s       *harness.Session
	queue   []item
	running bool
	cancel  context.CancelCauseFunc
	fold    *outcome.Fold // the output of the prompt being run
}

type item struct {
	messageID, text string
	// trace is the W3C trace context the prompt's _meta named: the turn
	// continues that trace (docs/telemetry.md).
	trace subagent.TraceContext
}

// New returns a server with the given defaults.
func New(cfg Config) *Server {
	return &Server{cfg: cfg, sessions: map[string]*sess{}, runs: map[runKey]string{}}
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.Stderr != nil {
		fmt.Fprintf(s.cfg.Stderr, "reins sdk: "+format+"\n", args...)
	}
	if s.h != nil {
		s.h.Logf("sdk: "+format, args...)
	}
}

type line struct {
	b   []byte
	err error
}

// Serve speaks the protocol on in and out until shutdown, the end of in, or
// ctx is done; then it cancels every running turn, closes every session and
// returns. It does not wait for a read of in that is still blocked: the
// caller owns in.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s.base, s.cancelBase = context.WithCancelCause(context.Background())
	s.out = newOutbox(out, s.logf, s.cfg.OutboxBytes, s.cfg.ShutdownTimeout)
	lines := make(chan line)
	quit := make(chan struct{})
	go func() {
		fr := sdk.NewFrameReader(in)
		for {
			b, err := fr.Next()
			l := line{b: bytes.Clone(b), err: err}
			select {
			case lines <- l:
			case <-quit:
				return
			}
			if err != nil && !errors.Is(err, sdk.ErrFrameTooLong) {
				return
			}
		}
	}()
	// Once the runtime is told to stop (ctx, here; shutdown and the end of
	// stdin below), a blocked stdout may hold it up only until the
	// shutdown deadline: the outbox then gives up, and a producer (this
	// loop included) waiting for room in it returns.
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	go func() {
		select {
		case <-ctx.Done():
			s.out.beginShutdown()
		case <-stopWatch:
		}
	}()
loop:
	for {
		select {
		case l := <-lines:
			if errors.Is(l.err, sdk.ErrFrameTooLong) {
				s.replyErr(nil, sdk.CodeParseError, "parse error: line too long")
				continue
			}
			if l.err != nil {
				if !errors.Is(l.err, io.EOF) {
					s.logf("reading stdin: %v", l.err)
				}
				break loop
			}
			if len(bytes.TrimSpace(l.b)) == 0 {
				continue
			}
			if s.handle(l.b) {
				break loop
			}
		case <-ctx.Done():
			break loop
		}
	}
	close(quit)
	s.out.beginShutdown()
	s.shutdown()
	s.out.close()
	return nil
}

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

func hasID(id json.RawMessage) bool { return len(id) > 0 && string(id) != "null" }

// handle answers one frame; it reports whether the runtime should stop.
func (s *Server) handle(b []byte) (stop bool) {
	if !json.Valid(b) {
		s.replyErr(nil, sdk.CodeParseError, "parse error")
		return false
	}
	var r request
	if err := json.Unmarshal(b, &r); err != nil || r.JSONRPC != "2.0" || r.Method == "" {
		if err == nil && r.Method == "" && (r.Result != nil || r.Error != nil) {
			return false // a response: this runtime sends no requests
		}
		var id json.RawMessage
		if err == nil && hasID(r.ID) {
			id = r.ID
		}
		s.replyErr(id, sdk.CodeInvalidRequest, "invalid request")
		return false
	}
	id := r.ID
	if !hasID(id) {
		id = nil // a notification: no reply
	}
	switch r.Method {
	case sdk.MethodInitialize:
		res, code, msg := s.initialize(r.Params)
		s.answer(id, res, code, msg)
	case sdk.MethodSessionPrompt:
		s.prompt(id, r.Params)
	case sdk.MethodSessionCancel:
		res, code, msg := s.cancel(r.Params)
		s.answer(id, res, code, msg)
	case sdk.MethodShutdown:
		s.out.beginShutdown() // the answer itself may wait for stdout
		s.answer(id, struct{}{}, 0, "")
		return true
	default:
		if id != nil {
			s.replyErr(id, sdk.CodeMethodNotFound, "method not found: "+r.Method)
		}
	}
	return false
}

func (s *Server) answer(id json.RawMessage, result any, code int, msg string) {
	if id == nil {
		return
	}
	if code != 0 {
		s.replyErr(id, code, msg)
		return
	}
	raw, err := json.Marshal(result)
	if err != nil {
		s.replyErr(id, sdk.CodeInternalError, "internal error")
		return
	}
	s.out.push(sdk.Response{JSONRPC: "2.0", ID: id, Result: raw})
}

func (s *Server) replyErr(id json.RawMessage, code int, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	s.out.push(sdk.Response{JSONRPC: "2.0", ID: id, Error: &sdk.RPCError{Code: code, Message: msg}})
}

func (s *Server) notify(method string, params any) {
	raw, err := json.Marshal(params)
	if err != nil {
		s.logf("marshal %s: %v", method, err)
		return
	}
	s.out.push(sdk.Request{JSONRPC: "2.0", Method: method, Params: raw})
}

func (s *Server) initialize(params json.RawMessage) (any, int, string) {
	if s.h != nil {
		return nil, sdk.CodeInvalidRequest, "already initialized"
	}
	var p sdk.InitializeParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, sdk.CodeInvalidParams, "initialize: invalid params"
	}
	if p.ProtocolVersion != sdk.ProtocolVersion {
		return nil, sdk.CodeInvalidParams, fmt.Sprintf("initialize: unsupported protocolVersion %d (want %d)", p.ProtocolVersion, sdk.ProtocolVersion)
	}
	cwd := p.Cwd
	if cwd == "" {
		cwd = s.cfg.Cwd
	}
	h, err := harness.New(harness.Options{Home: s.cfg.Home, Cwd: cwd, ConfigFile: s.cfg.ConfigFile, Getenv: s.cfg.Getenv, Sandbox: s.cfg.Sandbox})
	if err != nil {
		return nil, sdk.CodeInvalidParams, "initialize: " + err.Error()
	}
	model, base := p.Model, p.BaseURL
	if model == "" {
		model = s.cfg.Model
	}
	if base == "" {
		base = s.cfg.BaseURL
	}
	m, err := h.ResolveModel(model, base)
	if err != nil {
		h.Close()
		return nil, sdk.CodeInvalidParams, "initialize: " + err.Error()
	}
	permName := p.Permission
	if permName == "" {
		permName = s.cfg.Permission
	}
	perm := tool.WorkspaceWrite
	if permName != "" {
		if perm, err = tool.ParsePermission(permName); err != nil {
			h.Close()
			return nil, sdk.CodeInvalidParams, "initialize: permission: " + err.Error()
		}
	}
	if p.MaxTokens < 0 || p.MaxSteps < 0 {
		h.Close()
		return nil, sdk.CodeInvalidParams, "initialize: maxTokens and maxSteps must not be negative"
	}
	s.maxTokens = p.MaxTokens
	if s.maxTokens == 0 {
		s.maxTokens = s.cfg.MaxTokens
	}
	s.maxSteps = p.MaxSteps
	if s.maxSteps == 0 {
		s.maxSteps = s.cfg.MaxSteps
	}
	limits, err := budgetLimits(p.Budget, h.Config.Budget)
	if err != nil {
		h.Close()
		return nil, sdk.CodeInvalidParams, "initialize: " + err.Error()
	}
	if s.cfg.OpenEngine != nil {
		eng, closeEng, err := s.cfg.OpenEngine(h, m)
		if err != nil {
			h.Close()
			return nil, sdk.CodeInvalidParams, "initialize: " + err.Error()
		}
		h.Engine, s.closeEngine = eng, closeEng
	}
	// The budget covers everything this runtime runs, from here on.
	s.budget = budget.New(limits)
	h.Observe = s.observe
	// A parent reads this runtime's session/events as what its child did:
	// each event is in the child's log before it is streamed.
	h.WriteThrough = true
	s.h, s.model, s.init, s.perm = h, m, p, perm
	if n := h.UntrustedNotice(); n != "" {
		s.logf("%s", n) // stderr and the host log; the files are not used
	}
	version := s.cfg.Version
	if version == "" {
		version = "dev"
	}
	return sdk.InitializeResult{ProtocolVersion: sdk.ProtocolVersion, ServerInfo: sdk.ServerInfo{Name: "reins", Version: version}}, 0, ""
}

func (s *Server) prompt(id json.RawMessage, params json.RawMessage) {
	if s.h == nil {
		s.answer(id, nil, sdk.CodeNotInitialized, "not initialized")
		return
	}
	var p sdk.PromptParams
	if err := json.Unmarshal(params, &p); err != nil {
		s.answer(id, nil, sdk.CodeInvalidParams, "session/prompt: invalid params")
		return
	}
	var texts []string
	for _, b := range p.Content {
		if b.Type == "text" && b.Text != "" {
			texts = append(texts, b.Text)
		}
	}
	text := strings.Join(texts, "\n")
	if strings.TrimSpace(text) == "" {
		s.answer(id, nil, sdk.CodeInvalidParams, "session/prompt: no text content")
		return
	}
	var ss *sess
	sid := p.SessionID
	if sid != "" {
		s.mu.Lock()
		ss = s.sessions[sid]
		s.mu.Unlock()
		if ss == nil {
			// A session this runtime does not hold is loaded from its
			// log: a parent continues its child after an idle teardown.
			var inUse bool
			if ss, inUse = s.load(sid); ss == nil {
				msg := "session/prompt: unknown session"
				if inUse {
					msg = "session/prompt: session in use by another reins"
				}
				s.answer(id, nil, sdk.CodeInvalidParams, msg)
				return
			}
		}
	} else {
		hs, err := s.h.NewSession(harness.SessionOptions{
			Model: s.model, MaxSteps: s.maxSteps, MaxTokens: s.maxTokens, Permission: s.perm,
			System: s.init.SystemPrompt, Tools: s.init.Tools,
			Parent: s.init.ParentSession, Depth: s.init.DelegationDepth, Budget: s.budget,
		})
		if err != nil {
			s.logf("new session: %v", err)
			s.answer(id, nil, sdk.CodeInternalError, "session/prompt: the session could not be created")
			return
		}
		ss = &sess{s: hs}
		sid = hs.Log.Header().ID
		s.mu.Lock()
		s.sessions[sid] = ss
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.nextMsg++
	msgID := fmt.Sprintf("msg-%d", s.nextMsg)
	s.mu.Unlock()
	// The receipt goes out before the run can produce its first event.
	s.answer(id, sdk.PromptResult{SessionID: sid, MessageID: msgID}, 0, "")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return
	}
	ss.queue = append(ss.queue, item{messageID: msgID, text: text, trace: metaTrace(params)})
	if !ss.running {
		ss.running = true
		s.workers.Add(1)
		go s.work(sid, ss)
	}
}

// work runs a session's queued prompts in order.
func (s *Server) work(sid string, ss *sess) {
	defer s.workers.Done()
	for {
		s.mu.Lock()
		if len(ss.queue) == 0 || s.closing {
			ss.running, ss.queue = false, nil
			s.mu.Unlock()
			return
		}
		it := ss.queue[0]
		ss.queue = ss.queue[1:]
		ctx, cancel := context.WithCancelCause(s.base)
		ss.cancel, ss.fold = cancel, &outcome.Fold{}
		s.mu.Unlock()

		s.notify(sdk.NotifySessionStatus, sdk.SessionStatusParams{SessionID: sid, Status: sdk.StatusRunning, MessageID: it.messageID})
		// The runtime's sessions share one model and so its last provider
		// message: with sessions running at once, a failed turn may be told
		// another session's message (turnError restricts it to provider
		// failures).
		s.model.ResetProviderMessage()
		res := ss.s.Run(telemetry.Continue(ctx, it.trace.Parent, it.trace.State), it.text)
		cancel(nil)

		s.mu.Lock()
		fold := ss.fold
		ss.cancel, ss.fold = nil, nil
		s.mu.Unlock()
		s.notify(sdk.NotifySessionStatus, sdk.SessionStatusParams{
			SessionID: sid, Status: sdk.StatusIdle, MessageID: it.messageID,
			StopReason: string(res.Reason), Output: blocks(fold.Collect()),
			Error: s.turnError(res),
		})
	}
}

// turnError is an idle status's error: the failure code of a run whose
// last turn ended with "error", and in data the human message with the
// provider's own text (harness.ProviderDetail) when there is one. The
// text goes to the client only: the session's events and log never carry
// it.
func (s *Server) turnError(res agent.TurnResult) *sdk.TurnError {
	if res.Reason != session.ReasonError {
		return nil
	}
	code := "ERROR"
	if res.Failure != nil && res.Failure.Code != "" {
		code = string(res.Failure.Code)
	}
	e := &sdk.TurnError{Code: code, Message: "turn ended with " + code}
	if d := s.h.ProviderDetail(res.Failure, s.model); d != "" {
		e.Data = code + d
	}
	return e
}

func (s *Server) cancel(params json.RawMessage) (any, int, string) {
	if s.h == nil {
		return nil, sdk.CodeNotInitialized, "not initialized"
	}
	var p sdk.CancelParams
	if err := json.Unmarshal(params, &p); err != nil || p.SessionID == "" {
		return nil, sdk.CodeInvalidParams, "session/cancel: invalid params"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[p.SessionID]
	if ss == nil {
		return nil, sdk.CodeInvalidParams, "session/cancel: unknown session"
	}
	if ss.cancel != nil {
		ss.cancel(agent.ErrAbortedByUser)
	}
	return struct{}{}, 0, ""
}

// sessionEvent is session/event's params with the log's own event type.
type sessionEvent struct {
	SessionID string        `json:"sessionId"`
	Event     session.Event `json:"event"`
}

type subagentFinished struct {
	ParentSessionID      string       `json:"parentSessionId"`
	ChildSessionID       string       `json:"childSessionId"`
	StopReason           string       `json:"stopReason"`
	LastAssistantMessage *llm.Message `json:"lastAssistantMessage,omitempty"`
}

// observe receives every event of every session (under that log's lock:
// it must not block, and it does not — frames are queued).
func (s *Server) observe(hd session.Header, e session.Event) {
	s.notify(sdk.NotifySessionEvent, sessionEvent{SessionID: hd.ID, Event: e})
	var derived func()
	s.mu.Lock()
	if ss := s.sessions[hd.ID]; ss != nil && ss.fold != nil {
		ss.fold.Push(e)
	}
	switch d := e.Payload.(type) {
	case session.SubagentStart:
		s.runs[runKey{hd.ID, d.RunID}] = d.ChildSession
		derived = func() {
			s.notify(sdk.NotifySubagentStarted, sdk.SubagentStartedParams{ParentSessionID: hd.ID, ChildSessionID: d.ChildSession})
		}
	case session.SubagentEnd:
		k := runKey{hd.ID, d.RunID}
		child := s.runs[k]
		delete(s.runs, k)
		derived = func() {
			// lastAssistantMessage is subagent/end's: the one output fold's.
			s.notify(sdk.NotifySubagentFinished, subagentFinished{
				ParentSessionID: hd.ID, ChildSessionID: child, StopReason: d.StopReason,
				LastAssistantMessage: d.LastAssistantMessage,
			})
		}
	}
	s.mu.Unlock()
	if derived != nil {
		derived()
	}
}

// shutdown cancels every running turn (as the runtime's parent), drops the
// queues, waits for the workers and closes every session and the harness.
func (s *Server) shutdown() {
	s.mu.Lock()
	s.closing = true
	var all []*sess
	for _, ss := range s.sessions {
		ss.queue = nil
		all = append(all, ss)
	}
	s.mu.Unlock()
	if s.cancelBase != nil {
		s.cancelBase(agent.ErrAbortedByParent)
	}
	s.workers.Wait()
	s.budget.Stop()
	for _, ss := range all {
		if err := ss.s.Close(); err != nil {
			s.logf("closing session %s: %v", ss.s.Log.Header().ID, err)
		}
	}
	if s.closeEngine != nil {
		s.closeEngine()
	}
	if s.h != nil {
		s.h.Close()
	}
}

func blocks(bs []llm.Block) []sdk.Block {
	if len(bs) == 0 {
		return nil
	}
	out := make([]sdk.Block, len(bs))
	for i, b := range bs {
		out[i] = sdk.Block{
			Type: string(b.Type), Text: b.Text, Signature: b.Signature, ID: b.ID, Name: b.Name,
			Arguments: b.Arguments, CallID: b.CallID, Content: b.Content, IsError: b.IsError,
		}
	}
	return out
}

// QueuedBytes is the size of the frames waiting for stdout.
func (s *Server) QueuedBytes() int {
	if s.out == nil {
		return 0
	}
	return s.out.queued()
}

// outbox serializes frames onto the output: one writer goroutine, and
// frames keep the order they were pushed in. The queue is bounded (max
// bytes; a frame larger than that is queued alone): push waits while it is
// full, so a client that reads slowly slows the runtime down — the model
// streams and the session logs wait — instead of growing its memory.
//
// Shutdown has a deadline even when stdout is blocked: once shutdown has
// begun (beginShutdown), a writer that stays in one Write for the
// deadline — the client stopped reading — makes the outbox give up: the
// queue is dropped, waiting producers return at once, and close returns
// without the writer (which stays blocked until the process exits).
type outbox struct {
	mu      sync.Mutex
	q       [][]byte
	size    int // bytes in q and in the writer's hands
	max     int
	closed  bool          // no more frames; the writer drains q and stops
	space   chan struct{} // closed (and replaced) whenever a frame was written
	gone    chan struct{} // closed when the outbox gave up
	isGone  bool
	writing bool   // the writer is in a Write
	written uint64 // frames written (or dropped after a write error)
	wake    chan struct{}
	done    chan struct{}
	w       io.Writer
	logf    func(string, ...any)

	deadline time.Duration
	shutOnce sync.Once
}

func newOutbox(w io.Writer, logf func(string, ...any), max int, deadline time.Duration) *outbox {
	if max <= 0 {
		max = DefaultOutboxBytes
	}
	if deadline <= 0 {
		deadline = DefaultShutdownTimeout
	}
	o := &outbox{max: max, deadline: deadline, space: make(chan struct{}), gone: make(chan struct{}),
		wake: make(chan struct{}, 1), done: make(chan struct{}), w: w, logf: logf}
	go o.run()
	return o
}

func (o *outbox) queued() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.size
}

func (o *outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

func (o *outbox) push(v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // Encode ends the frame with "\n"
		o.logf("marshal frame: %v", err)
		return
	}
	f := buf.Bytes()
	for {
		o.mu.Lock()
		if o.closed || o.isGone {
			o.mu.Unlock()
			return
		}
		if o.size == 0 || o.size+len(f) <= o.max {
			o.q = append(o.q, f)
			o.size += len(f)
			o.mu.Unlock()
			o.signal()
			return
		}
		space := o.space
		o.mu.Unlock()
		select {
		case <-space:
		case <-o.gone:
		}
	}
}

func (o *outbox) run() {
	defer close(o.done)
	broken := false
	for {
		o.mu.Lock()
		for len(o.q) == 0 && !o.closed && !o.isGone {
			o.mu.Unlock()
			<-o.wake
			o.mu.Lock()
		}
		if o.isGone || len(o.q) == 0 {
			o.mu.Unlock()
			return
		}
		f := o.q[0]
		o.q[0] = nil
		o.q = o.q[1:]
		o.writing = true
		o.mu.Unlock()
		if !broken {
			if _, err := o.w.Write(f); err != nil {
				broken = true
				o.logf("writing stdout: %v", err)
			}
		}
		o.mu.Lock()
		o.writing = false
		o.written++
		if !o.isGone { // giving up emptied the count already
			o.size -= len(f)
		}
		close(o.space)
		o.space = make(chan struct{})
		o.mu.Unlock()
	}
}

// beginShutdown arms the shutdown deadline: from now on, a Write that
// makes no progress for the deadline makes the outbox give up. It is
// idempotent.
func (o *outbox) beginShutdown() {
	o.shutOnce.Do(func() {
		go func() {
			t := time.NewTicker(o.deadline)
			defer t.Stop()
			var last uint64
			stuck := false
			for {
				select {
				case <-o.done:
					return
				case <-t.C:
				}
				o.mu.Lock()
				if o.writing && stuck && o.written == last {
					o.isGone = true
					o.q, o.size = nil, 0
					close(o.gone)
					o.mu.Unlock()
					o.logf("stdout accepted nothing for %v while shutting down; %s", o.deadline, "dropping the frames still queued")
					return
				}
				stuck, last = o.writing, o.written
				o.mu.Unlock()
			}
		}()
	})
}

// close writes what is queued and stops, or gives up at the shutdown
// deadline when stdout is blocked.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.signal()
	o.beginShutdown()
	select {
	case <-o.done:
	case <-o.gone:
	}
}

// load reopens the session sid from its log in this runtime's home, with
// the runtime's options, and registers it. Only an exact id is accepted,
// and a runtime started for a parent (initialize's parentSession) loads
// only that parent's children. nil: no such session, or it is in use —
// then inUse is true, so the client hears "in use", not "unknown".
func (s *Server) load(sid string) (ss *sess, inUse bool) {
	if sid == "." || sid == ".." || strings.ContainsAny(sid, `/\`) {
		return nil, false
	}
	if _, err := os.Stat(filepath.Join(s.h.SessionsDir(), sid, session.FileName)); err != nil {
		return nil, false
	}
	// A child of one of this runtime's sessions may be kept alive for
	// its parent: release it, so its log can be opened here.
	s.mu.Lock()
	var held []*harness.Session
	for _, ss := range s.sessions {
		held = append(held, ss.s)
	}
	s.mu.Unlock()
	for _, hs := range held {
		hs.Subagents.Release(sid)
	}
	hs, err := s.h.NewSession(harness.SessionOptions{
		Model: s.model, MaxSteps: s.maxSteps, MaxTokens: s.maxTokens, Permission: s.perm,
		System: s.init.SystemPrompt, Tools: s.init.Tools, Resume: sid,
	})
	if err != nil {
		s.logf("load session %s: %v", sid, err)
		var iu *session.InUseError
		return nil, errors.As(err, &iu)
	}
	if hd := hs.Log.Header(); hd.ID != sid || (s.init.ParentSession != "" && hd.ParentSession != s.init.ParentSession) {
		s.logf("load session %s: not a child of this runtime's parent", sid)
		hs.Close()
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if other := s.sessions[sid]; other != nil {
		hs.Close()
		return other, false
	}
	ss = &sess{s: hs}
	s.sessions[sid] = ss
	return ss, false
}
