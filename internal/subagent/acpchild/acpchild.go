// Package acpchild is the `acp` subagent provider: it runs any Agent Client
// Protocol agent (Claude Code, Codex, Gemini CLI through their ACP adapters)
// as a child process and settles its prompt turn into the one result
// contract of docs/subagents.md, with the fixed diagnostics of docs/subagents.md.
//
// The child runs in its own process group (proc) and is torn down
// with the one ladder. Its permission requests are answered by the agent
// definition's policy without a human. Everything the child says outside its
// agent_message_chunk text — stderr, error messages, tool titles, raw input,
// option names, session ids, unknown enum values — is child-controlled and
// goes to the host log only: diagnostics are built from closed facts (stop
// reasons, the current operation, the ACP tool kind, the policy, the
// decision, the observed exit status).
package acpchild

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/reinsdev/reins/internal/mcpspec"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/sandbox"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/reinsdev/reins/internal/childproc"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/proc"
)

// Options configure the provider.
type Options struct {
	// Logf is the host log, the one place raw causes (SDK errors, the
	// child's stderr) may go. Nil discards them.
	Logf func(format string, args ...any)
	// Ladder is the teardown timing; the zero value means proc.DefaultLadder.
	Ladder proc.Ladder
	// Environ is the environment the child inherits before the agent's
	// env is added; nil means os.Environ.
	Environ func() []string
	// CancelGrace bounds how long a cancelled prompt waits for the child's
	// own `cancelled` answer before the run settles anyway; zero means 2 s.
	CancelGrace time.Duration
	// ExitWait bounds how long a closed transport waits for the child's
	// exit status, so a crash is reported with its exit code; zero means 2 s.
	ExitWait time.Duration
	// LogPath is the host log's file, named in the notice the user gets
	// when a child dies while it starts (subagent.StartError.Notice).
	LogPath string
	// Version is reported to the child as clientInfo.version.
	Version string
	// StartTimeout bounds the start (spawn, initialize, session/new);
	// zero means config.DefaultStartTimeout (subagents.startTimeout).
	StartTimeout time.Duration
	// SessionsDir is the sessions root: a child's ACP session id is kept
	// in <SessionsDir>/<parent>/children/acp-<child id>/ so a continuation
	// after its idle teardown can session/load it. Empty: children cannot
	// be resumed cold.
	SessionsDir string
	// MCPServers are the MCP servers a child's agent file may name
	// (`mcpServers`): the named ones are passed in session/new.
	MCPServers []mcpspec.Server
	// ReplayQuiet is how long a loaded session's child must stay silent
	// after answering session/load before reins sends the follow-up; zero
	// means DefaultReplayQuiet. See awaitReplay.
	ReplayQuiet time.Duration
}

// DefaultReplayQuiet is Options.ReplayQuiet's default: Gemini CLI 0.61
// went on replaying 35 ms after its session/load answer on a machine at
// load 28; a second of silence is far beyond that and small beside an
// agent's start (Gemini CLI: 30 s there).
const DefaultReplayQuiet = time.Second

// New returns the acp provider.
func New(opts Options) subagent.Provider {
	if opts.Ladder == (proc.Ladder{}) {
		opts.Ladder = proc.DefaultLadder
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ
	}
	if opts.CancelGrace <= 0 {
		opts.CancelGrace = 2 * time.Second
	}
	if opts.ExitWait <= 0 {
		opts.ExitWait = 2 * time.Second
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = config.DefaultStartTimeout
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.ReplayQuiet <= 0 {
		opts.ReplayQuiet = DefaultReplayQuiet
	}
	return &provider{opts: opts}
}

type provider struct{ opts Options }

func (p *provider) logf(format string, args ...any) {
	if p.opts.Logf != nil {
		p.opts.Logf(format, args...)
	}
}

// Cancellation causes of a run's context: who ended it decides whether the
// result carries a diagnostic (a timeout does, a local cancel does not).
var (
	errLocalCancel  = errors.New("acp child: cancelled locally")
	errParentCancel = errors.New("acp child: cancelled by the parent")
	errTimeout      = errors.New("acp child: timed out")
	errDisposed     = errors.New("acp child: disposed")
	errStartTimeout = errors.New("acp child: start deadline passed")
)

func diag(stage outcome.Stage, category outcome.Category, stop outcome.StopReason) outcome.Diagnostic {
	return outcome.Diagnostic{Provider: config.ProviderACP, Stage: stage, Category: category, StopReason: stop}
}

// Start spawns the child, runs initialize and session/new, publishes the run
// and sends the prompt. A failed start has rolled the child back to
// quiescence before it returns.
func (p *provider) Start(ctx context.Context, req subagent.Request) (subagent.Run, error) {
	return p.start(ctx, req, "")
}

// Continue starts the agent again and loads the child's ACP session
// (session/load) before it sends the follow-up. An agent that does not
// advertise loadSession fails the start with category not-continuable.
func (p *provider) Continue(ctx context.Context, req subagent.Request) (subagent.Run, error) {
	sid, err := p.loadID(req)
	if err != nil {
		p.logf("acp child %s: %v", req.ChildID, err)
		return nil, &subagent.StartError{Diagnostic: diag(outcome.StageLoadSession, outcome.CategoryNotContinuable, outcome.StopError).String(), Err: err}
	}
	return p.start(ctx, req, sid)
}

// maxSessionID bounds the child-chosen session id reins keeps.
const maxSessionID = 1024

// stateFile is where the ACP session id of child req.ChildID is kept.
func (p *provider) stateFile(req subagent.Request) string {
	if p.opts.SessionsDir == "" || req.ChildID == "" || !filepath.IsLocal(req.ParentSession) || !filepath.IsLocal(req.ChildID) {
		return ""
	}
	return filepath.Join(p.opts.SessionsDir, req.ParentSession, "children", "acp-"+req.ChildID, "session-id")
}

// keepID records the child's session id for a later session/load. The id
// is child-chosen text: it is stored hex-encoded, an opaque value no
// reader takes for text, and never shown.
func (p *provider) keepID(req subagent.Request, sid sdk.SessionId) {
	f := p.stateFile(req)
	if f == "" || len(sid) > maxSessionID {
		return
	}
	err := os.MkdirAll(filepath.Dir(f), 0o700)
	if err == nil {
		err = os.WriteFile(f, []byte(hex.EncodeToString([]byte(sid))), 0o600)
	}
	if err != nil {
		p.logf("acp child %s: keeping its session id: %v", req.ChildID, err)
	}
}

func (p *provider) loadID(req subagent.Request) (sdk.SessionId, error) {
	f := p.stateFile(req)
	if f == "" {
		return "", errors.New("no place to keep the child's session id")
	}
	b, err := os.ReadFile(f)
	if err != nil || len(b) == 0 || len(b) > 2*maxSessionID {
		return "", fmt.Errorf("the child's session id: %v", err)
	}
	sid, err := hex.DecodeString(string(b))
	if err != nil || len(sid) == 0 {
		return "", fmt.Errorf("the child's session id: %v", err)
	}
	return sdk.SessionId(sid), nil
}

func (p *provider) start(ctx context.Context, req subagent.Request, load sdk.SessionId) (subagent.Run, error) {
	ag := req.Agent
	if ag == nil {
		return nil, &subagent.StartError{Diagnostic: diag(outcome.StageInitialize, outcome.CategoryConfiguration, outcome.StopError).String(), Err: errors.New("acp child: no agent definition")}
	}
	if err := ctx.Err(); err != nil {
		return nil, &subagent.StartError{Err: err}
	}
	policy, cwd, err := p.check(ag, req.Cwd)
	if err != nil {
		return nil, &subagent.StartError{Diagnostic: diag(outcome.StageInitialize, outcome.CategoryConfiguration, outcome.StopError).String(), Err: err}
	}

	began := time.Now()
	sb := req.ChildPolicy(subagent.KeyEnv(ag.Model))
	sb.TermGrace = p.opts.Ladder.Term / 2 // the sweep ends before the ladder's SIGKILL
	extra, herr := req.AgentHome(p.opts.Environ(), &sb, ag.Env)
	if herr != nil {
		p.logf("acp child %s (%s): %v", req.RunID, ag.Name, herr)
	}
	env := p.environ(req.TraceEnv(extra))
	// The agent's own PATH (env: {PATH}) finds its command, as for pi.
	path, err := childproc.LookPath(ag.Command, env)
	var cmd *exec.Cmd
	if err == nil {
		cmd, err = sandbox.Command(sb, path, ag.Args...)
	}
	if err != nil {
		p.logf("acp child %s (%s): spawn %s: %v", req.RunID, ag.Name, ag.Command, err)
		return nil, &subagent.StartError{Diagnostic: diag(outcome.StageProcess, outcome.CategoryProcessStart, outcome.StopError).String(), Err: err}
	}
	cmd.Dir = cwd
	cmd.Env = env
	pr, pipes, err := proc.StartPiped(cmd)
	if err != nil {
		p.logf("acp child %s (%s): spawn %s: %v", req.RunID, ag.Name, ag.Command, err)
		return nil, &subagent.StartError{Diagnostic: diag(outcome.StageProcess, outcome.CategoryProcessStart, outcome.StopError).String(), Err: err}
	}

	r := &run{
		p: p, req: req, policy: policy, proc: pr, pipes: pipes,
		stdin:      &watchedWriter{w: pipes.Stdin},
		stderrDone: make(chan struct{}),
		stderrTail: &proc.Tail{},
		route:      &router{},
		kinds:      map[sdk.ToolCallId]string{},
		tap:        subagent.NewTap(req),
		loaded:     load != "",
	}
	// The agent's timeout covers the whole run, the start included.
	r.life = childproc.Start(remaining(ag.Timeout, began), errTimeout)
	r.ctx = r.life.Context()
	go r.drainStderr()
	r.sdkLog = &logWriter{p: p, prefix: "acp child " + req.RunID + " sdk: "}
	r.route.set(r)
	filter, sdkIn := newUpdateFilter(pipes.Stdout, r.route.update, func(format string, args ...any) {
		p.logf("acp child %s (%s): "+format, append([]any{req.RunID, ag.Name}, args...)...)
	})
	r.filter = filter
	route := r.route
	filter.progress = func() { route.get().life.Progress() } // the run that owns the connection now (Again)
	go filter.run()
	// The SDK's reader starts with the connection but SetLogger comes
	// after; the gate keeps it from reading (and logging) before that.
	gate := &gatedReader{r: sdkIn, ready: make(chan struct{})}
	r.conn = sdk.NewClientSideConnection(&client{route: r.route}, r.stdin, gate)
	r.conn.SetLogger(slog.New(slog.NewTextHandler(r.sdkLog, nil)))
	close(gate.ready)
	go func() {
		<-r.conn.Done()
		filter.stopForwarding()
	}()

	// The handshake ends when the parent cancels it, the child's leader
	// exits, the start deadline passes or the agent's timeout fires.
	hctx, hcancel := context.WithCancelCause(ctx)
	unwatch := r.watchExit(func() { hcancel(context.Canceled) })
	startTimer := time.AfterFunc(p.opts.StartTimeout-time.Since(began), func() { hcancel(errStartTimeout) })
	stopRun := context.AfterFunc(r.ctx, func() { hcancel(context.Cause(r.ctx)) })
	sid, stage, err := r.handshake(hctx, cwd, load)
	unwatch()
	startTimer.Stop()
	stopRun()
	cause := context.Cause(hctx)
	hcancel(nil)
	if err != nil {
		if ctx.Err() == nil && (errors.Is(cause, errTimeout) || errors.Is(cause, errStartTimeout)) {
			return nil, r.rollbackTimeout(stage, cause)
		}
		return nil, r.rollback(ctx, stage, err)
	}
	r.mu.Lock()
	// Updates count from here: until now r.sessionID was empty, so what
	// session/load replayed — before its answer, or after it until the
	// child fell quiet (awaitReplay) — was dropped, never folded. A
	// replay that still comes makes the run fail (lateReplay).
	r.sessionID = sid
	r.fold = outcome.Fold{}
	r.mu.Unlock()
	// Started: from here a child that sends nothing for stallTimeout is
	// stopped as stalled.
	r.life.WatchStall(req.StallTimeout, req.OnStall)
	if load == "" {
		p.keepID(req, sid)
	}
	r.life.Go(r.prompt)
	return r, nil
}

// remaining is what is left of timeout (none when <= 0) since began, at
// least a nanosecond so that a timeout already spent still fires.
func remaining(timeout time.Duration, began time.Time) time.Duration {
	if timeout <= 0 {
		return 0
	}
	return max(timeout-time.Since(began), time.Nanosecond)
}

// check validates the agent definition and the parent's workspace: the
// facts a configuration diagnostic stands for.
func (p *provider) check(ag *config.Agent, cwd string) (policy, dir string, err error) {
	if ag.Command == "" {
		return "", "", fmt.Errorf("acp agent %s has no command", ag.Name)
	}
	policy = ag.Permission
	if policy == "" {
		policy = config.PermissionReject
	}
	if policy != config.PermissionReject && policy != config.PermissionAllow {
		return "", "", fmt.Errorf("acp agent %s: permission %q is not reject or allow", ag.Name, policy)
	}
	if cwd == "" || !filepath.IsAbs(cwd) {
		return "", "", fmt.Errorf("acp agent %s: the parent's workspace %q is not an absolute path", ag.Name, cwd)
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return "", "", fmt.Errorf("acp agent %s: the parent's workspace %s is not a directory", ag.Name, cwd)
	}
	return policy, cwd, nil
}

// environ is the inherited environment with the agent's env on top, as
// every child's (childproc.Environ).
func (p *provider) environ(extra map[string]string) []string {
	return childproc.Environ(p.opts.Environ(), extra)
}

// handshake runs initialize and session/new and returns the child's
// session id, or the stage that failed.
func (r *run) handshake(ctx context.Context, cwd string, load sdk.SessionId) (sdk.SessionId, outcome.Stage, error) {
	init, err := r.conn.Initialize(ctx, sdk.InitializeRequest{
		ProtocolVersion:    sdk.ProtocolVersionNumber,
		ClientCapabilities: sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: false, WriteTextFile: false}, Terminal: false},
		ClientInfo:         &sdk.Implementation{Name: "reins", Version: r.p.opts.Version},
	})
	if err != nil {
		return "", outcome.StageInitialize, err
	}
	if init.ProtocolVersion != sdk.ProtocolVersionNumber {
		return "", outcome.StageInitialize, &versionError{got: int(init.ProtocolVersion)}
	}
	if load != "" {
		if !init.AgentCapabilities.LoadSession {
			return "", outcome.StageLoadSession, errNoLoad
		}
		if _, err := r.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: load, Cwd: cwd, McpServers: r.mcpServers(init.AgentCapabilities.McpCapabilities.Http)}); err != nil {
			return "", outcome.StageLoadSession, err
		}
		if err := r.awaitReplay(ctx); err != nil {
			return "", outcome.StageLoadSession, err
		}
		return load, "", nil
	}
	ns, err := r.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: r.mcpServers(init.AgentCapabilities.McpCapabilities.Http), Meta: traceMeta(r.req.Trace)})
	if err != nil {
		return "", outcome.StageNewSession, err
	}
	if ns.SessionId == "" {
		return "", outcome.StageNewSession, errEmptySession
	}
	return ns.SessionId, "", nil
}

// awaitReplay returns once the child that answered session/load has been
// silent for Options.ReplayQuiet with everything it wrote handled, or when
// ctx ends (the start deadline bounds it).
//
// Why: ACP says an agent replays the loaded conversation as session/update
// notifications and answers session/load when all of it is sent. Gemini
// CLI 0.61 does not wait: it starts the replay inside its handler and
// answers at once, so the replay (the user's earlier prompts as
// user_message_chunk, the agent's earlier answers as agent_message_chunk,
// its tool calls) streams on after the answer, tens of milliseconds
// later. Nothing in the stream marks its end, and the earlier answer's
// chunks look exactly like the new turn's. What does separate them is
// the follow-up: the agent cannot answer a prompt it has not been sent.
// So reins sends session/prompt only after the child has fallen quiet
// and counts nothing before it; a replay that outlasts the silence shows
// itself by a user_message_chunk in the new turn (run.update) and fails
// the run rather than return its stale text.
//
// An agent that is never silent for that long (one sending a heartbeat)
// is waited for replayWaits windows at most; then the follow-up goes, and
// the replayed user_message_chunk still guards the answer.
func (r *run) awaitReplay(ctx context.Context) error {
	quiet := r.p.opts.ReplayQuiet
	t := time.NewTimer(quiet)
	defer t.Stop()
	for range replayWaits {
		since := r.filter.handled.Load()
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-t.C:
		}
		if r.filter.quiet(since) {
			return nil
		}
		t.Reset(quiet)
	}
	r.p.logf("acp child %s (%s): no %s of silence after session/load in %d tries; sending the follow-up", r.req.RunID, r.req.Agent.Name, quiet, replayWaits)
	return nil
}

// replayWaits bounds awaitReplay's windows of Options.ReplayQuiet.
const replayWaits = 10

// versionError is an initialize answer with a protocol version reins does
// not speak: the configured command is not an ACP v1 agent.
type versionError struct{ got int }

func (e *versionError) Error() string {
	return fmt.Sprintf("acp child answered protocol version %d; reins speaks 1", e.got)
}

var errEmptySession = errors.New("acp child: session/new returned an empty session id")

// errNoLoad is a continuation of a child whose agent cannot load sessions.
var errNoLoad = errors.New("acp child: the agent does not offer loadSession")

// rollback tears a failed start down and builds its StartError. A start the
// parent cancelled carries no diagnostic (the manager reports it aborted);
// otherwise the diagnostic names the stage and a category from closed facts,
// plus the teardown line when the rollback itself could not be confirmed.
func (r *run) rollback(parent context.Context, stage outcome.Stage, cause error) error {
	category, code, sig := r.classify(stage, cause)
	derr := r.teardown()
	r.p.logf("acp child %s (%s): start failed at %s: %v", r.req.RunID, r.req.Agent.Name, stage, cause)
	if derr != nil {
		r.p.logf("acp child %s (%s): rollback: %v", r.req.RunID, r.req.Agent.Name, derr)
	}
	var text string
	switch {
	case parent.Err() != nil:
		if derr != nil {
			text = teardownDiagnostic()
		}
	default:
		d := diag(stage, category, outcome.StopError)
		d.ExitCode, d.Signal = code, sig
		text = d.String()
		if derr != nil {
			text += "\n" + teardownDiagnostic()
		}
	}
	se := &subagent.StartError{Diagnostic: text, Err: cause}
	if parent.Err() == nil && category == outcome.CategoryProcessExit {
		se.Notice = startNotice(r.stderrTail.String(), r.p.opts.LogPath)
	}
	return se
}

// maxNoticeLine bounds the child's own line in a start notice.
const maxNoticeLine = 200

// startNotice is what the user is told about a child that died while it
// started: the last non-empty line it wrote on stderr (child-written text:
// escaped for the terminal, cut to maxNoticeLine bytes) and the host log,
// where the whole tail is.
func startNotice(stderrTail, logPath string) string {
	var last string
	for l := range strings.Lines(stderrTail) {
		if t := strings.TrimSpace(l); t != "" {
			last = t
		}
	}
	var parts []string
	if last != "" {
		parts = append(parts, "its stderr said: "+termsafe.EscapeLine(termsafe.Clip(last, maxNoticeLine)))
	} else {
		parts = append(parts, "it wrote nothing on stderr")
	}
	if logPath != "" {
		parts = append(parts, "details in "+termsafe.EscapeLine(logPath))
	}
	return strings.Join(parts, "; ")
}

// rollbackTimeout tears down a start that ran out of time: the agent's
// timeout (aborted, as a timed-out run) or the start deadline (error).
func (r *run) rollbackTimeout(stage outcome.Stage, cause error) error {
	derr := r.teardown()
	r.p.logf("acp child %s (%s): start timed out at %s: %v", r.req.RunID, r.req.Agent.Name, stage, cause)
	if derr != nil {
		r.p.logf("acp child %s (%s): rollback: %v", r.req.RunID, r.req.Agent.Name, derr)
	}
	stop := outcome.StopError
	if errors.Is(cause, errTimeout) {
		stop = outcome.StopAborted
	}
	text := diag(stage, outcome.CategoryTimeout, stop).String()
	if derr != nil {
		text += "\n" + teardownDiagnostic()
	}
	return &subagent.StartError{Diagnostic: text, Err: cause, StopReason: stop}
}

func teardownDiagnostic() string {
	return outcome.Diagnostic{Provider: config.ProviderACP, Stage: outcome.StageTeardown}.String()
}

// classify derives the category of a failed request from closed facts only:
// whether the process exited (with its status) or the transport broke, or
// else that the child answered with an error. The error's text is never
// read.
func (r *run) classify(stage outcome.Stage, err error) (category outcome.Category, code *int, sig string) {
	if r.proc.Exited() || r.transportBroken() {
		if c, s, ok := r.exitStatus(); ok {
			return outcome.CategoryProcessExit, c, s
		}
		return outcome.CategoryTransport, nil, ""
	}
	var ve *versionError
	switch {
	case errors.Is(err, errNoLoad):
		return outcome.CategoryNotContinuable, nil, ""
	case errors.As(err, &ve):
		return outcome.CategoryConfiguration, nil, ""
	case stage == outcome.StageLoadSession:
		return outcome.CategoryProtocol, nil, ""
	case stage == outcome.StageNewSession:
		return outcome.CategoryProtocol, nil, ""
	case stage == outcome.StagePrompt:
		return outcome.CategoryUnknown, nil, ""
	}
	// An initialize the child refused: the handshake produced no usable
	// connection.
	return outcome.CategoryTransport, nil, ""
}

// transportBroken reports whether the child's stdout has closed or a write
// to its stdin failed.
func (r *run) transportBroken() bool {
	select {
	case <-r.conn.Done():
		return true
	default:
	}
	return r.stdin.failed()
}

// exitSettle is how long a request may still be answered after the
// child's leader exited: an answer already in the pipe is read at once.
const exitSettle = 200 * time.Millisecond

// watchExit calls stop when the leader exits, after exitSettle: a request
// must not wait forever on a dead child whose stdout a surviving grandchild
// still holds open. The returned func ends the watch.
func (r *run) watchExit(stop func()) (unwatch func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-r.proc.Done():
		case <-quit:
			return
		}
		t := time.NewTimer(exitSettle)
		defer t.Stop()
		select {
		case <-t.C:
			stop()
		case <-quit:
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// exitStatus waits (bounded) for the leader's exit and returns its code or
// signal: the independently observed process facts of a diagnostic.
func (r *run) exitStatus() (*int, string, bool) {
	t := time.NewTimer(r.p.opts.ExitWait)
	defer t.Stop()
	select {
	case <-r.proc.Done():
	case <-t.C:
		return nil, "", false
	}
	code, sig, ok := r.proc.ExitStatus()
	if !ok {
		return nil, "", false
	}
	if sig != "" {
		return nil, sig, true
	}
	return &code, "", true
}

// gatedReader blocks reads until ready is closed.
type gatedReader struct {
	r     io.Reader
	ready chan struct{}
}

func (g *gatedReader) Read(b []byte) (int, error) {
	<-g.ready
	return g.r.Read(b)
}

// watchedWriter remembers that a write to the child's stdin failed: a
// broken transport the SDK reports only as an internal error.
type watchedWriter struct {
	w   io.Writer
	mu  sync.Mutex
	bad bool
}

func (w *watchedWriter) Write(b []byte) (int, error) {
	n, err := w.w.Write(b)
	if err != nil {
		w.mu.Lock()
		w.bad = true
		w.mu.Unlock()
	}
	return n, err
}

func (w *watchedWriter) failed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bad
}

// logWriter sends the SDK's own log lines to the host log until the run
// is torn down: the SDK may still log from its reader after that, when the
// host log may be closing.
type logWriter struct {
	p      *provider
	prefix string
	mu     sync.Mutex
	off    bool
}

func (w *logWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.off {
		w.p.logf("%s%s", w.prefix, trimNewline(b))
	}
	return len(b), nil
}

func (w *logWriter) stop() {
	w.mu.Lock()
	w.off = true
	w.mu.Unlock()
}

func trimNewline(b []byte) string {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return string(b)
}

// traceMeta is the _meta of session/new and session/prompt: the run's W3C
// trace context as traceparent (and tracestate), the ACP convention for
// continuing a trace (docs/telemetry.md); nil when nothing is traced.
func traceMeta(t subagent.TraceContext) map[string]any {
	if t.Parent == "" {
		return nil
	}
	m := map[string]any{"traceparent": t.Parent}
	if t.State != "" {
		m["tracestate"] = t.State
	}
	return m
}
