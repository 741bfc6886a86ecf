// Package mcp is reins's Model Context Protocol client (docs/mcp.md): it
// starts the configured MCP servers lazily, confined and supervised like
// every child process (internal/sandbox, proc), or reaches them
// over streamable HTTP, and offers each server tool to the model as a
// tool.Tool named mcp__<server>__<tool>.
//
// A server is a stranger: its stderr and its error messages go to the host
// log only. What the model sees of a failure is one of the fixed texts of
// Failure; what it sees of a success is the tool's result content, which
// is what it asked for.
package mcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/reinsdev/reins/internal/childproc"
	"github.com/reinsdev/reins/internal/mcpspec"
	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/proc"
)

// State is where a server is in its life.
type State string

const (
	// StateIdle: not started yet (servers start on first use).
	StateIdle State = "not started"
	// StateStarting: spawned or connecting, initialize under way.
	StateStarting State = "starting"
	// StateRunning: initialized, tools listed.
	StateRunning State = "running"
	// StateFailed: the start failed; the server is not tried again in
	// this reins process.
	StateFailed State = "failed"
	// StateStopped: it was running and is gone (exited, connection lost,
	// or torn down).
	StateStopped State = "stopped"
)

// Failure is why a server or a call failed, as the model and the user are
// told: a closed set, each with a fixed text (Error) that holds no
// server-written byte.
type Failure string

const (
	// FailStart: the process could not be spawned, or the connection or
	// initialize failed.
	FailStart Failure = "start"
	// FailStartTimeout: initialize (or the tool list) did not complete
	// within the start timeout.
	FailStartTimeout Failure = "start-timeout"
	// FailStopped: the server exited or its connection broke.
	FailStopped Failure = "stopped"
	// FailProtocol: the server answered the call with a JSON-RPC error.
	FailProtocol Failure = "protocol"
	// FailCancelled: the call was cancelled (the turn ended).
	FailCancelled Failure = "cancelled"
	// FailCallTimeout: the call took longer than the call timeout.
	FailCallTimeout Failure = "call-timeout"
	// FailUnknown: no such server is configured for this session.
	FailUnknown Failure = "unknown"
	// FailSecretVar: a server a repository declared names a secret
	// variable in ${VAR} (mcpspec.ExpandServerFor); it is never started.
	FailSecretVar Failure = "secret-variable"
)

// Error is a server or call failure with its fixed text.
type Error struct {
	Server  string
	Failure Failure
	// Code is the JSON-RPC error code of a FailProtocol answer.
	Code int64
	// Timeout is the start or call timeout that passed.
	Timeout time.Duration
	// Var is the secret variable of a FailSecretVar: its name, never its
	// value.
	Var string
}

func (e *Error) Error() string {
	s := "MCP server " + e.Server
	switch e.Failure {
	case FailStart:
		return s + " could not be started; its tools are unavailable (details in the reins host log)"
	case FailStartTimeout:
		return fmt.Sprintf("%s did not finish starting within %s; its tools are unavailable (details in the reins host log)", s, e.Timeout)
	case FailStopped:
		return s + " has stopped (it exited or its connection broke); its tools are unavailable for the rest of this run"
	case FailProtocol:
		return fmt.Sprintf("%s answered the call with JSON-RPC error %d (%s)", s, e.Code, codeName(e.Code))
	case FailCancelled:
		return "the call to MCP server " + e.Server + " was cancelled"
	case FailCallTimeout:
		return fmt.Sprintf("the call to MCP server %s did not finish within %s and was cancelled", e.Server, e.Timeout)
	case FailUnknown:
		return s + " is not configured for this session"
	case FailSecretVar:
		// The name comes from a repository's file: escaped.
		return s + " was not started: a repository's file declares it and names the secret variable ${" + termsafe.EscapeLine(e.Var) +
			"}; only servers of your own config ($REINS_HOME/config.yaml or --config) may, or sandbox.env.pass lets the variable through (docs/mcp.md)"
	}
	return s + " failed"
}

// codeName names the JSON-RPC error codes: a fixed word, never the
// server's message.
func codeName(code int64) string {
	switch code {
	case -32700:
		return "parse error"
	case -32600:
		return "invalid request"
	case -32601:
		return "method not found"
	case -32602:
		return "invalid params"
	case -32603:
		return "internal error"
	case -32002:
		return "resource not found"
	}
	return "server error"
}

// Options configure a Manager.
type Options struct {
	// Logf is the host log: the one place a server's stderr and raw
	// errors go. Nil discards them.
	Logf func(format string, args ...any)
	// StartTimeout bounds a server's start: spawn, initialize and the
	// tool list (config subagents.startTimeout). Zero means 60 s.
	StartTimeout time.Duration
	// CallTimeout bounds one tool call. Zero means 10 minutes.
	CallTimeout time.Duration
	// Ladder is the teardown of a stdio server; zero means proc.DefaultLadder.
	Ladder proc.Ladder
	// Environ is the environment a stdio server inherits before its own
	// env; nil means os.Environ.
	Environ func() []string
	// Dir is a stdio server's working directory (the workspace).
	Dir string
	// Policy is the sandbox policy every stdio server of the manager runs
	// under, asked when a server starts (ServerPolicy builds it from the
	// configuration). Nil: workspace-write in Dir with no other setting.
	Policy func() sandbox.Policy
	// Version is reported to servers as clientInfo.version.
	Version string
	// HTTP is the client of http servers; nil means a default one.
	HTTP *http.Client
	// MaxStderrLog bounds how much of a server's stderr reaches the host
	// log; the rest is counted and dropped. Zero means 64 KiB.
	MaxStderrLog int
}

// Limits on what a server may hand reins.
const (
	// maxFrame bounds one JSON-RPC message from a server.
	maxFrame = 8 << 20
	// maxTools bounds the tools taken from one server.
	maxTools = 256
	// maxDescription bounds a tool description shown to the model.
	maxDescription = 4 << 10
	// maxSchema bounds a tool's input schema, in bytes of JSON.
	maxSchema = 64 << 10
	// exitWait bounds the wait for a server's exit status once its
	// connection closed.
	exitWait = 2 * time.Second
	// maxStderrLine bounds one logged stderr line.
	maxStderrLine = 1 << 10
)

// Manager owns the MCP servers of one reins process (or of one ACP
// session's editor servers): each starts on first use, once, and all are
// torn down by Close.
type Manager struct {
	opts  Options
	mu    sync.Mutex
	conns map[string]*conn
	order []string
	// closed: Close ran; nothing starts any more.
	closed bool
	// ctx ends when Close begins: a start under way stops at once.
	ctx    context.Context
	cancel context.CancelFunc
	// dial, when set (tests), replaces the stdio and http transports: the
	// server's output and input, spoken to as a stdio server's pipes.
	dial func(mcpspec.Server) (io.ReadCloser, io.WriteCloser)
}

// NewManager returns a manager of servers; none is started.
func NewManager(servers []mcpspec.Server, opts Options) *Manager {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 60 * time.Second
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 10 * time.Minute
	}
	if opts.Ladder == (proc.Ladder{}) {
		opts.Ladder = proc.DefaultLadder
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.MaxStderrLog <= 0 {
		opts.MaxStderrLog = 64 << 10
	}
	if opts.Policy == nil {
		dir := opts.Dir
		opts.Policy = func() sandbox.Policy { return ServerPolicy(sandbox.Policy{}, dir) }
	}
	m := &Manager{opts: opts, conns: map[string]*conn{}}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	for _, s := range servers {
		if _, dup := m.conns[s.Name]; dup {
			continue
		}
		m.conns[s.Name] = &conn{m: m, srv: s, state: StateIdle}
		m.order = append(m.order, s.Name)
	}
	return m
}

func (m *Manager) logf(format string, args ...any) {
	if m.opts.Logf != nil {
		m.opts.Logf(format, args...)
	}
}

// Servers returns the configured servers in configuration order.
func (m *Manager) Servers() []mcpspec.Server {
	if m == nil {
		return nil
	}
	out := make([]mcpspec.Server, 0, len(m.order))
	for _, n := range m.order {
		out = append(out, m.conns[n].srv)
	}
	return out
}

// Has reports whether a server is configured under name.
func (m *Manager) Has(name string) bool {
	if m == nil {
		return false
	}
	_, ok := m.conns[name]
	return ok
}

// Status is a server's state and, when it failed, why.
func (m *Manager) Status(name string) (State, *Error) {
	c, ok := m.conns[name]
	if !ok {
		return "", &Error{Server: name, Failure: FailUnknown}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state, c.fail
}

// Tools starts the server named name if it is not started yet (under
// Options.Policy, whoever asks), waits at most the start timeout for it (or
// until Close), and returns its tools sorted by name. A failed or stopped
// server is an *Error whose text is fixed; it is not retried. The start is
// shared by every caller, so no caller's context can end it.
func (m *Manager) Tools(name string) ([]*Tool, error) {
	c, ok := m.conns[name]
	if !ok {
		return nil, &Error{Server: name, Failure: FailUnknown}
	}
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return nil, &Error{Server: name, Failure: FailStopped}
	}
	c.once.Do(func() { c.start(m.opts.Policy()) })
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != nil { // failed to start, or stopped since
		return nil, c.fail
	}
	return slices.Clone(c.tools), nil
}

// Close tears every started server down (stdio servers through the
// ladder) and returns when all are gone. It is idempotent; a start under
// way is cut short and rolled back.
func (m *Manager) Close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(m.order))
	for i, n := range m.order {
		c := m.conns[n]
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A start under way ends (m.ctx is done); Do waits for it,
			// and afterwards no start can begin.
			c.once.Do(func() {
				c.mu.Lock()
				c.fail = &Error{Server: c.srv.Name, Failure: FailStopped}
				c.state = StateStopped
				c.mu.Unlock()
			})
			errs[i] = c.teardown()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// conn is one server's connection and, for stdio, its process.
type conn struct {
	m   *Manager
	srv mcpspec.Server

	once sync.Once

	mu      sync.Mutex
	state   State
	fail    *Error
	tools   []*Tool
	session *session
	proc    *proc.Process
	// watchDone is closed when the watcher of a running server returned.
	watchDone chan struct{}
	// stderrDone is closed when a stdio server's stderr is drained.
	stderrDone chan struct{}

	downOnce sync.Once
	downErr  error
}

// start connects (spawning a stdio server first), initializes and lists
// the tools, all within the start timeout. It runs once per server.
func (c *conn) start(pol sandbox.Policy) {
	if c.srv.Refused != "" {
		c.m.logf("mcp server %s: not started: its ${VAR} expansion names the secret variable %s", c.srv.Name, termsafe.EscapeLine(c.srv.Refused))
		c.failStart(&Error{Server: c.srv.Name, Failure: FailSecretVar, Var: c.srv.Refused})
		return
	}
	c.mu.Lock()
	c.state = StateStarting
	c.mu.Unlock()
	to := c.m.opts.StartTimeout
	ctx, cancel := context.WithTimeoutCause(c.m.ctx, to, errStartTimeout)
	defer cancel()

	var w wire
	switch {
	case c.m.dial != nil:
		w = newStdioWire(c.m.dial(c.srv))
	case c.srv.Transport() == mcpspec.HTTP:
		w = newHTTPWire(c.srv.URL, headerClient(c.m.opts.HTTP, c.srv.Headers))
	default:
		t, err := c.spawn(pol)
		if err != nil {
			c.m.logf("mcp server %s: spawn %s: %v", c.srv.Name, c.srv.Command, err)
			c.failStart(&Error{Server: c.srv.Name, Failure: FailStart})
			return
		}
		w = t
		// The start also ends when the process does: no wait for a dead
		// server's deadline.
		pr := c.proc
		go func() {
			select {
			case <-pr.Done():
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	cs := newSession(w, func(format string, args ...any) {
		c.m.logf("mcp server "+c.srv.Name+": "+format, args...)
	})
	c.mu.Lock()
	c.session = cs
	c.mu.Unlock()
	err := cs.initialize(ctx, c.m.opts.Version)
	if err == nil {
		var tools []*Tool
		tools, err = c.list(ctx, cs)
		if err == nil {
			c.mu.Lock()
			c.tools, c.state = tools, StateRunning
			c.watchDone = make(chan struct{})
			c.mu.Unlock()
			go c.watch()
			return
		}
	}
	failure := FailStart
	if errors.Is(context.Cause(ctx), errStartTimeout) {
		failure = FailStartTimeout
	}
	c.m.logf("mcp server %s: start failed (%s): %v", c.srv.Name, failure, err)
	c.failStart(&Error{Server: c.srv.Name, Failure: failure, Timeout: to})
}

var errStartTimeout = errors.New("mcp: start timeout")

// failStart records a failed start and rolls it back.
func (c *conn) failStart(e *Error) {
	c.mu.Lock()
	c.state, c.fail = StateFailed, e
	c.mu.Unlock()
	if err := c.teardown(); err != nil {
		c.m.logf("mcp server %s: rollback: %v", c.srv.Name, err)
	}
}

// spawn starts a stdio server under the supervisor with policy pol and
// returns the wire over its pipes.
func (c *conn) spawn(pol sandbox.Policy) (*stdioWire, error) {
	pol.TermGrace = c.m.opts.Ladder.Term / 2 // the sweep ends before the ladder's SIGKILL
	// The server gets the env its own config names, secrets included; the
	// rest of reins's environment is scrubbed by the supervisor.
	pol.Env.Keep = slices.Clip(pol.Env.Keep)
	for k := range c.srv.Env {
		pol.Env.Keep = append(pol.Env.Keep, k)
	}
	cmd, err := sandbox.Command(pol, c.srv.Command, c.srv.Args...)
	if err != nil {
		return nil, err
	}
	cmd.Dir = c.m.opts.Dir
	cmd.Env = childproc.Environ(c.m.opts.Environ(), c.srv.Env)
	pr, pipes, err := proc.StartPiped(cmd)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.proc = pr
	c.stderrDone = make(chan struct{})
	c.mu.Unlock()
	go c.drainStderr(pipes.Stderr)
	return newStdioWire(pipes.Stdout, pipes.Stdin), nil
}

// drainStderr reads a server's stderr to its end, so a flooding server
// never blocks on a full pipe: up to MaxStderrLog bytes go to the host
// log line by line (each cut at maxStderrLine), the rest is counted.
func (c *conn) drainStderr(r io.ReadCloser) {
	defer close(c.stderrDone)
	defer r.Close()
	br := bufio.NewReaderSize(r, maxStderrLine)
	logged, dropped := 0, int64(0)
	for {
		line, isPrefix, err := br.ReadLine()
		if len(line) > 0 || (err == nil && !isPrefix) {
			if logged < c.m.opts.MaxStderrLog {
				logged += len(line)
				c.m.logf("mcp server %s stderr: %q", c.srv.Name, line)
			} else {
				dropped += int64(len(line))
			}
		}
		if err != nil {
			break
		}
	}
	if dropped > 0 {
		c.m.logf("mcp server %s stderr: %d more bytes not logged", c.srv.Name, dropped)
	}
}

// list takes the server's tools, within the bounds.
func (c *conn) list(ctx context.Context, cs *session) ([]*Tool, error) {
	listed, err := cs.tools(ctx, maxTools)
	if err != nil {
		return nil, err
	}
	var out []*Tool
	seen := map[string]bool{}
	for _, t := range listed {
		if len(out) >= maxTools {
			c.m.logf("mcp server %s: more than %d tools; the rest are not offered", c.srv.Name, maxTools)
			break
		}
		tl, err := newTool(c, t)
		if err != nil {
			c.m.logf("mcp server %s: tool %q not offered: %v", c.srv.Name, t.Name, err)
			continue
		}
		if seen[tl.spec.Name] {
			c.m.logf("mcp server %s: tool %q listed twice; the second is not offered", c.srv.Name, t.Name)
			continue
		}
		seen[tl.spec.Name] = true
		out = append(out, tl)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].spec.Name < out[j].spec.Name })
	return out, nil
}

// watch waits until a running server goes away and marks it stopped.
func (c *conn) watch() {
	defer close(c.watchDone)
	c.mu.Lock()
	cs, pr := c.session, c.proc
	c.mu.Unlock()
	var exited <-chan struct{}
	if pr != nil {
		exited = pr.Done()
	}
	select {
	case <-cs.Done():
	case <-exited:
	}
	c.mu.Lock()
	was := c.state
	c.state = StateStopped
	if c.fail == nil {
		c.fail = &Error{Server: c.srv.Name, Failure: FailStopped}
	}
	c.mu.Unlock()
	if was == StateRunning && pr != nil {
		// The connection usually ends a moment before the process: wait
		// a bounded while, so the host log has the exit status.
		t := time.NewTimer(exitWait)
		select {
		case <-pr.Done():
			code, sig, _ := pr.ExitStatus()
			c.m.logf("mcp server %s: exited (code %d%s)", c.srv.Name, code, sigText(sig))
		case <-t.C:
			c.m.logf("mcp server %s: connection closed", c.srv.Name)
		}
		t.Stop()
	}
	// The session is over either way; close our end so the process sees
	// EOF and the session's reader ends.
	cs.Close()
}

func sigText(sig string) string {
	if sig == "" {
		return ""
	}
	return ", signal " + sig
}

// stopped reports whether the server is gone; a call that failed on a gone
// server is reported as FailStopped.
func (c *conn) stopped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == StateStopped {
		return true
	}
	return c.proc != nil && c.proc.Exited()
}

// teardown ends the server once: the process through the ladder, then the
// session; it returns when both are gone.
func (c *conn) teardown() error {
	c.downOnce.Do(func() {
		c.mu.Lock()
		cs, pr, watchDone, stderrDone := c.session, c.proc, c.watchDone, c.stderrDone
		if c.state == StateRunning || c.state == StateStarting {
			c.state = StateStopped
			if c.fail == nil {
				c.fail = &Error{Server: c.srv.Name, Failure: FailStopped}
			}
		}
		c.mu.Unlock()
		var errs []error
		if pr != nil {
			errs = append(errs, pr.Dispose(c.m.opts.Ladder))
		}
		if cs != nil {
			if err := cs.Close(); err != nil && pr == nil {
				c.m.logf("mcp server %s: close: %v", c.srv.Name, err)
			}
		}
		if watchDone != nil {
			<-watchDone
		}
		if stderrDone != nil {
			<-stderrDone
		}
		c.downErr = errors.Join(errs...)
	})
	return c.downErr
}

// headerClient is base (or a default client) sending headers with every
// request.
func headerClient(base *http.Client, headers map[string]string) *http.Client {
	if base == nil {
		base = &http.Client{}
	}
	if len(headers) == 0 {
		return base
	}
	cl := *base
	rt := cl.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	cl.Transport = headerTransport{base: rt, headers: headers}
	return &cl
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}
