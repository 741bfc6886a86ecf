// Package sdk is the public Go client of the reins SDK runtime (`reins
// sdk`, docs/sdk-protocol.md): NDJSON JSON-RPC 2.0 over a child process's stdio. Start
// launches and initializes a runtime, Run sends a prompt and waits for the
// end of its run, Close tears the runtime down.
//
// Failures are typed so callers can branch without reading text:
// *ProtocolError (the runtime broke the protocol), *TransportClosedError
// (its stdout closed or it exited; exit code and signal when observed),
// *RequestTimeoutError, *SpawnError. None of their Error() strings contain
// text the runtime produced; that text sits in fields (Message, Stderr) for
// a host log.
package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/reinsdev/reins/proc"
)

// Defaults of Options.
const (
	DefaultShutdownTimeout = 2 * time.Second
	DefaultCancelGrace     = 2 * time.Second
	DefaultTeardownGrace   = 2 * time.Second
	DefaultTeardownTerm    = 2 * time.Second
)

// exitWait bounds the wait for the runtime's exit once its stdout closed,
// so the exit status can be reported; drainWait bounds the wait for stdout
// to close once the runtime exited (a grandchild may hold it open).
const (
	exitWait  = 2 * time.Second
	drainWait = 500 * time.Millisecond
	tailBytes = 8 << 10
)

// Options configure Start.
type Options struct {
	// Command is the runtime executable; Args its arguments (nil:
	// ["sdk"]).
	Command string
	Args    []string
	// Env is the runtime's whole environment; nil means this process's.
	Env []string
	// Dir is the runtime's working directory; empty means this process's.
	Dir string
	// Initialize are the initialize parameters; ProtocolVersion is set by
	// Start.
	Initialize InitializeParams

	// RequestTimeout bounds the wait for each response (initialize, the
	// session/prompt receipt, session/cancel); zero means no bound. A run
	// itself is bounded only by the context given to Wait.
	RequestTimeout time.Duration
	// ShutdownTimeout bounds Close's shutdown request and the wait for the
	// runtime's exit after it.
	ShutdownTimeout time.Duration
	// CancelGrace is how long a cancelled Wait waits for the runtime to
	// end the turn after session/cancel.
	CancelGrace time.Duration
	// TeardownGrace and TeardownTerm are Close's waits after closing stdin
	// and after SIGTERM, before SIGKILL (docs/subagents.md).
	TeardownGrace, TeardownTerm time.Duration

	// OnNotification, when set, receives every notification in order,
	// from the client's reader goroutine, a run's idle status before its
	// Run or Wait returns. It must not block.
	OnNotification func(method string, params json.RawMessage)
	// Logf, when set, receives facts that are not returned as errors (a
	// failed shutdown request, a response to no request). Its arguments
	// may hold runtime text: it is a host log.
	Logf func(format string, args ...any)
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Client is a connection to one runtime process. Its methods are safe for
// concurrent use.
type Client struct {
	opts   Options
	p      *proc.Process
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr io.ReadCloser
	info   InitializeResult

	wmu    sync.Mutex
	wq     [][]byte
	wwake  chan struct{}
	stop   chan struct{} // closed by Close: goroutines end
	failed chan struct{} // closed when failure is set

	mu          sync.Mutex
	nextID      int64
	pending     map[int64]*call
	sessions    map[string][]*Pending // unfinished prompts, FIFO per session
	failure     error
	closing     bool // Close has begun: new requests get ErrClosed
	initialized bool
	tail        proc.Tail // Max: tailBytes

	readerDone, stderrDone chan struct{}
	wg                     sync.WaitGroup
	closeOnce              sync.Once
	closeErr               error
}

type call struct {
	method   string
	onResult func(json.RawMessage) error
	done     chan struct{}
	result   json.RawMessage
	err      error
}

// Start launches the runtime and performs the initialize handshake. When it
// fails, the process it started has been torn down; the error is typed
// (joined with ErrNotQuiescent if even that teardown failed).
func Start(ctx context.Context, opts Options) (*Client, error) {
	args := opts.Args
	if args == nil {
		args = []string{"sdk"}
	}
	cmd := exec.Command(opts.Command, args...)
	cmd.Env = opts.Env
	cmd.Dir = opts.Dir
	p, pipes, err := proc.StartPiped(cmd)
	if err != nil {
		return nil, &SpawnError{Err: err}
	}
	c := &Client{
		opts: opts, p: p, stdin: pipes.Stdin, stdout: pipes.Stdout, stderr: pipes.Stderr,
		wwake: make(chan struct{}, 1), stop: make(chan struct{}), failed: make(chan struct{}),
		pending: map[int64]*call{}, sessions: map[string][]*Pending{},
		readerDone: make(chan struct{}), stderrDone: make(chan struct{}),
		tail: proc.Tail{Max: tailBytes},
	}
	c.wg.Add(4)
	go c.writeLoop()
	go c.readLoop()
	go c.stderrLoop()
	go c.exitWatch()

	params := opts.Initialize
	params.ProtocolVersion = ProtocolVersion
	raw, err := c.request(ctx, MethodInitialize, params, nil)
	if err == nil {
		if jerr := json.Unmarshal(raw, &c.info); jerr != nil {
			err = &ProtocolError{Method: MethodInitialize, Reason: ReasonUnexpectedReply}
		} else if c.info.ProtocolVersion != ProtocolVersion {
			err = &ProtocolError{Method: MethodInitialize, Reason: ReasonVersion}
		}
	}
	if err != nil {
		if cerr := c.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, err
	}
	c.mu.Lock()
	c.initialized = true
	c.mu.Unlock()
	return c, nil
}

// ServerInfo is what the runtime said about itself in initialize.
func (c *Client) ServerInfo() ServerInfo { return c.info.ServerInfo }

// Pid is the runtime's process id, which leads its process group (a
// sandboxed runtime's supervisor, with the runtime and its tools below):
// what a caller measures to show the runtime's memory.
func (c *Client) Pid() int { return c.p.Pgid }

func (c *Client) logf(format string, args ...any) {
	if c.opts.Logf != nil {
		c.opts.Logf(format, args...)
	}
}

// Result is how a prompt's run ended.
type Result struct {
	SessionID string
	// StopReason is the reason of the run's last turn/end event
	// (completed, aborted, max-tokens, refusal, error, interrupted), empty
	// when no turn ended.
	StopReason string
	// Output is the run's selected output as the runtime reported it
	// (docs/subagents.md), nil when it produced nothing or did not say.
	Output []Block
	// Events are the run's session events in order.
	Events []Event
}

// Pending is a prompt the runtime accepted.
type Pending struct {
	c         *Client
	SessionID string
	MessageID string

	done   chan struct{}
	events []Event // guarded by c.mu
	status *SessionStatusParams
}

// Run prompts a new session and waits for the end of its run.
func (c *Client) Run(ctx context.Context, prompt string) (*Result, error) {
	p, err := c.Prompt(ctx, "", []Block{{Type: "text", Text: prompt}})
	if err != nil {
		return nil, err
	}
	return p.Wait(ctx)
}

// Prompt sends session/prompt and returns once the runtime has accepted it
// (its enqueue receipt). An empty sessionID starts a new session; prompts
// to a busy session run in order.
func (c *Client) Prompt(ctx context.Context, sessionID string, content []Block) (*Pending, error) {
	var pend *Pending
	_, err := c.request(ctx, MethodSessionPrompt, PromptParams{SessionID: sessionID, Content: content}, func(raw json.RawMessage) error {
		// Runs on the reader goroutine, before any later frame is read, so
		// no event of the new run can arrive unclaimed.
		var r PromptResult
		if json.Unmarshal(raw, &r) != nil || r.SessionID == "" || r.MessageID == "" {
			return &ProtocolError{Method: MethodSessionPrompt, Reason: ReasonUnexpectedReply}
		}
		pend = &Pending{c: c, SessionID: r.SessionID, MessageID: r.MessageID, done: make(chan struct{})}
		c.mu.Lock()
		c.sessions[r.SessionID] = append(c.sessions[r.SessionID], pend)
		c.mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return pend, nil
}

// Cancel asks the runtime to cancel the session's running turn.
func (c *Client) Cancel(ctx context.Context, sessionID string) error {
	_, err := c.request(ctx, MethodSessionCancel, CancelParams{SessionID: sessionID}, nil)
	return err
}

// Wait waits for the end of the prompt's run. When ctx is done first, it
// asks the runtime to cancel the turn, waits up to Options.CancelGrace for
// the turn to end, and returns what it has with ctx's cause. On a
// transport or protocol failure it returns the partial result with the
// failure. The result is never nil.
func (p *Pending) Wait(ctx context.Context) (*Result, error) {
	c := p.c
	select {
	case <-p.done:
		return p.result(), nil
	default:
	}
	select {
	case <-p.done:
		return p.result(), nil
	case <-c.failed:
		select {
		case <-p.done:
			return p.result(), nil
		default:
		}
		return p.result(), c.failureErr()
	case <-ctx.Done():
		c.requestNoWait(MethodSessionCancel, CancelParams{SessionID: p.SessionID})
		t := time.NewTimer(orDefault(c.opts.CancelGrace, DefaultCancelGrace))
		defer t.Stop()
		select {
		case <-p.done:
		case <-c.failed:
		case <-t.C:
		}
		return p.result(), context.Cause(ctx)
	}
}

func (p *Pending) result() *Result {
	c := p.c
	c.mu.Lock()
	defer c.mu.Unlock()
	r := &Result{SessionID: p.SessionID, Events: append([]Event(nil), p.events...)}
	for i := len(p.events) - 1; i >= 0; i-- {
		if p.events[i].Type == "turn/end" {
			var d struct {
				Reason string `json:"reason"`
			}
			if json.Unmarshal(p.events[i].Data, &d) == nil {
				r.StopReason = d.Reason
			}
			break
		}
	}
	if p.status != nil && len(p.status.Output) > 0 {
		r.Output = append([]Block(nil), p.status.Output...)
	}
	return r
}

// Close ends the runtime: a shutdown request (bounded by ShutdownTimeout)
// and a wait for its exit, then the teardown ladder of docs/subagents.md — stdin
// EOF, SIGTERM to the group, SIGKILL — which returns only when the group is
// gone. A failed shutdown request is only logged (Options.Logf); the error
// is ErrNotQuiescent when the group survived SIGKILL. Close is idempotent.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closing = true
		alive := c.failure == nil && c.initialized
		c.mu.Unlock()
		wait := orDefault(c.opts.ShutdownTimeout, DefaultShutdownTimeout)
		if alive {
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			_, err := c.request(ctx, MethodShutdown, struct{}{}, nil)
			cancel()
			if err != nil {
				c.logf("sdk: shutdown request: %v", err)
			} else {
				t := time.NewTimer(wait)
				select {
				case <-c.p.Done():
				case <-t.C:
				}
				t.Stop()
			}
		}
		c.setFailure(ErrClosed)
		err := c.p.Dispose(proc.Ladder{
			Grace: orDefault(c.opts.TeardownGrace, DefaultTeardownGrace),
			Term:  orDefault(c.opts.TeardownTerm, DefaultTeardownTerm),
			Reap:  proc.DefaultLadder.Reap,
		})
		close(c.stop)
		c.stdin.Close()
		c.stdout.Close()
		c.stderr.Close()
		c.wg.Wait()
		if err != nil {
			c.closeErr = fmt.Errorf("%w (%v)", ErrNotQuiescent, err)
		}
	})
	return c.closeErr
}

// setFailure records the connection's terminal failure; the first wins.
func (c *Client) setFailure(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failure == nil {
		c.failure = err
		close(c.failed)
	}
}

func (c *Client) failureErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failure
}

// request sends a request and waits for its response. onResult, when set,
// runs on the reader goroutine with the result.
func (c *Client) request(ctx context.Context, method string, params any, onResult func(json.RawMessage) error) (json.RawMessage, error) {
	id, cl, err := c.send(method, params, onResult)
	if err != nil {
		return nil, err
	}
	var timeout <-chan time.Time
	if c.opts.RequestTimeout > 0 {
		t := time.NewTimer(c.opts.RequestTimeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-cl.done:
		return cl.result, cl.err
	case <-c.failed:
		if c.forget(id, cl) {
			return cl.result, cl.err
		}
		return nil, c.failureErr()
	case <-ctx.Done():
		if c.forget(id, cl) {
			return cl.result, cl.err
		}
		return nil, context.Cause(ctx)
	case <-timeout:
		if c.forget(id, cl) {
			return cl.result, cl.err
		}
		return nil, &RequestTimeoutError{Method: method, Timeout: c.opts.RequestTimeout}
	}
}

// requestNoWait sends a request whose response nobody waits for.
func (c *Client) requestNoWait(method string, params any) {
	_, _, _ = c.send(method, params, nil)
}

func (c *Client) send(method string, params any, onResult func(json.RawMessage) error) (int64, *call, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return 0, nil, err
	}
	c.mu.Lock()
	if c.closing && method != MethodShutdown {
		c.mu.Unlock()
		return 0, nil, ErrClosed
	}
	if c.failure != nil {
		err := c.failure
		c.mu.Unlock()
		return 0, nil, err
	}
	c.nextID++
	id := c.nextID
	cl := &call{method: method, onResult: onResult, done: make(chan struct{})}
	c.pending[id] = cl
	c.mu.Unlock()
	idRaw, _ := json.Marshal(id)
	frame, err := json.Marshal(Request{JSONRPC: "2.0", ID: idRaw, Method: method, Params: raw})
	if err != nil {
		c.forget(id, cl)
		return 0, nil, err
	}
	c.enqueue(frame)
	return id, cl, nil
}

// enqueue queues frame (and its newline) for writeLoop and wakes it.
func (c *Client) enqueue(frame []byte) {
	c.wmu.Lock()
	c.wq = append(c.wq, append(frame, '\n'))
	c.wmu.Unlock()
	select {
	case c.wwake <- struct{}{}:
	default:
	}
}

// forget drops a pending call; it reports true when the reader had already
// taken it, in which case its result is (or is about to be) in cl.
func (c *Client) forget(id int64, cl *call) bool {
	c.mu.Lock()
	_, ok := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ok {
		return false
	}
	<-cl.done
	return true
}

// writeLoop writes queued frames, so no caller ever blocks on a runtime
// that stopped reading.
func (c *Client) writeLoop() {
	defer c.wg.Done()
	broken := false
	for {
		select {
		case <-c.wwake:
		case <-c.stop:
			return
		}
		c.wmu.Lock()
		q := c.wq
		c.wq = nil
		c.wmu.Unlock()
		for _, f := range q {
			if broken {
				break
			}
			if _, err := c.stdin.Write(f); err != nil {
				broken = true
				c.logf("sdk: writing to the runtime: %v", err)
				c.transportClosed()
			}
		}
	}
}

func (c *Client) readLoop() {
	defer c.wg.Done()
	fr := NewFrameReader(c.stdout)
	for {
		line, err := fr.Next()
		if errors.Is(err, ErrFrameTooLong) {
			c.setFailure(&ProtocolError{Reason: ReasonFrameTooLong})
			continue
		}
		if err != nil {
			close(c.readerDone)
			c.transportClosed()
			return
		}
		if len(line) == 0 {
			continue
		}
		c.dispatch(line)
	}
}

func (c *Client) stderrLoop() {
	defer c.wg.Done()
	defer close(c.stderrDone)
	buf := make([]byte, 4096)
	for {
		n, err := c.stderr.Read(buf)
		if n > 0 {
			c.tail.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// exitWatch notices a runtime that exited while something (a grandchild)
// still holds its stdout open.
func (c *Client) exitWatch() {
	defer c.wg.Done()
	select {
	case <-c.p.Done():
	case <-c.stop:
		return
	}
	t := time.NewTimer(drainWait)
	defer t.Stop()
	select {
	case <-c.readerDone:
		return
	case <-c.stop:
		return
	case <-t.C:
	}
	c.transportClosed()
}

// transportClosed records a TransportClosedError with the exit status, once
// the runtime's exit is observed (bounded).
func (c *Client) transportClosed() {
	t := time.NewTimer(exitWait)
	defer t.Stop()
	select {
	case <-c.p.Done():
	case <-c.stop:
	case <-t.C:
	}
	t2 := time.NewTimer(drainWait)
	defer t2.Stop()
	select {
	case <-c.stderrDone:
	case <-c.stop:
	case <-t2.C:
	}
	e := &TransportClosedError{}
	if code, sig, ok := c.p.ExitStatus(); ok {
		e.Exited, e.ExitCode, e.Signal = true, code, sig
	}
	e.Stderr = c.tail.String()
	c.setFailure(e)
}

type frame struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *RPCError       `json:"error"`
}

func hasID(id json.RawMessage) bool { return len(id) > 0 && string(id) != "null" }

func (c *Client) dispatch(line []byte) {
	select {
	case <-c.failed:
		return // nothing after a failure is trusted
	default:
	}
	var f frame
	if json.Unmarshal(line, &f) != nil || f.JSONRPC != "2.0" {
		c.setFailure(&ProtocolError{Reason: ReasonMalformedFrame})
		return
	}
	switch {
	case f.Method != "" && hasID(f.ID):
		// The runtime asks something of us; this client offers nothing.
		resp, _ := json.Marshal(Response{JSONRPC: "2.0", ID: f.ID, Error: &RPCError{Code: CodeMethodNotFound, Message: "method not found"}})
		c.enqueue(resp)
	case f.Method != "":
		c.notification(f.Method, f.Params)
	case hasID(f.ID) && (f.Result != nil || f.Error != nil):
		c.response(f)
	default:
		c.setFailure(&ProtocolError{Reason: ReasonMalformedFrame})
	}
}

func (c *Client) response(f frame) {
	var id int64
	if json.Unmarshal(f.ID, &id) != nil {
		c.setFailure(&ProtocolError{Reason: ReasonMalformedFrame})
		return
	}
	c.mu.Lock()
	cl := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if cl == nil {
		c.logf("sdk: response to no pending request (id %d)", id)
		return
	}
	switch {
	case f.Error != nil:
		cl.err = &ProtocolError{Method: cl.method, Reason: ReasonErrorResponse, Code: f.Error.Code, Message: f.Error.Message}
	case cl.onResult != nil:
		cl.result = f.Result
		cl.err = cl.onResult(f.Result)
	default:
		cl.result = f.Result
	}
	close(cl.done)
}

// notification records a session's events and ends its prompt at the idle
// status. The host's OnNotification sees each notification before the
// prompt it ends is resolved, so when Run or Wait returns the host has had
// every notification of that run.
func (c *Client) notification(method string, params json.RawMessage) {
	switch method {
	case NotifySessionEvent:
		var np SessionEventParams
		if json.Unmarshal(params, &np) != nil || np.SessionID == "" || np.Event.Type == "" {
			c.setFailure(&ProtocolError{Method: method, Reason: ReasonMalformedFrame})
			return
		}
		c.mu.Lock()
		if ps := c.sessions[np.SessionID]; len(ps) > 0 {
			ps[0].events = append(ps[0].events, np.Event)
		}
		c.mu.Unlock()
		c.deliver(method, params)
	case NotifySessionStatus:
		var np SessionStatusParams
		if json.Unmarshal(params, &np) != nil || np.SessionID == "" {
			c.setFailure(&ProtocolError{Method: method, Reason: ReasonMalformedFrame})
			return
		}
		c.deliver(method, params)
		if np.Status == StatusIdle {
			c.idle(&np)
		}
	default:
		c.deliver(method, params)
	}
}

func (c *Client) deliver(method string, params json.RawMessage) {
	if c.opts.OnNotification != nil {
		c.opts.OnNotification(method, params)
	}
}

// idle resolves the prompt an idle status names (its message, or the
// session's oldest when it names none).
func (c *Client) idle(np *SessionStatusParams) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps := c.sessions[np.SessionID]
	for i, p := range ps {
		if np.MessageID == "" || p.MessageID == np.MessageID {
			p.status = np
			c.sessions[np.SessionID] = append(ps[:i:i], ps[i+1:]...)
			if len(c.sessions[np.SessionID]) == 0 {
				delete(c.sessions, np.SessionID)
			}
			close(p.done)
			return
		}
	}
}
