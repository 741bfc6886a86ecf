// Package wrap runs one `pi --mode json` child and turns its event stream
// into reins's artifacts (docs/wrap.md): normalized events, the raw streams, a
// transcript and result.json. `reins wrap META.json` and the pi subagent
// provider both run children through here, so the rules that decide when a
// child is done — and when it may be torn down — exist once.
//
// The central rule: only a terminal canonical stop reason (stop, length,
// aborted, error) on an assistant message, with no automatic retry pending,
// starts semantic cleanup. A toolUse message means the child's loop goes
// on, and an error followed by pi's auto_retry_start means a new attempt is
// coming; tearing the child down on either would cut a working run short.
// After a terminal answer the child gets a grace period to exit by itself,
// then the one teardown ladder of proc.
package wrap

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/reinsdev/reins/internal/childproc"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/proc"
)

// DefaultGrace is how long a child that gave its terminal answer may take
// to exit by itself before the teardown ladder starts.
const DefaultGrace = 2 * time.Second

// MaxLine bounds the part of one stdout line kept for parsing. pi's
// agent_end repeats the whole conversation on one line, so lines are read
// without a fixed buffer (bufio.Reader.ReadSlice, not a Scanner's 64 KiB);
// a line longer than this is still copied to stdout.log in full, but not
// interpreted.
const MaxLine = 64 << 20

// drainWait bounds the wait for stdout and stderr to reach EOF after the
// process group is gone. A process that left the group (setsid) may still
// hold the pipes; the wrapper must not hang on it.
const drainWait = 2 * time.Second

// stderrTailBytes is how much of the child's stderr end result.json keeps.
const stderrTailBytes = 4 << 10

// Options tune a run. The zero value is the behaviour docs/wrap.md describes.
type Options struct {
	// Env is the child's environment; nil means this process's. The child
	// executable is looked up on its PATH.
	Env []string
	// Grace is the semantic-cleanup grace; 0 means DefaultGrace.
	Grace time.Duration
	// Ladder is the teardown timing; zero means proc.DefaultLadder.
	Ladder proc.Ladder
	// OnEvent, when set, receives every normalized event as it is read,
	// from the stdout reader goroutine; it must not block for long.
	OnEvent func(Event)
	// OnLine, when set, is told of every non-empty stdout line, normalized
	// or not (a streamed delta too): the child is alive.
	OnLine func()
	// Unresponsive, when set and true at a cancellation, says the child
	// stopped talking (it stalled): the teardown skips the stdin grace.
	Unresponsive func() bool
	// Now stamps startedAt and endedAt; time.Now when nil.
	Now func() time.Time
	// Confine builds the command that runs the child at path under its
	// supervisor and confinement; termGrace is how long the supervisor's
	// sweep may wait after SIGTERM (it ends before the ladder's SIGKILL).
	// The caller decides the confinement (the pi provider its policy,
	// `reins wrap` full access) so this package links no sandbox; nil runs
	// the child unsupervised, which only tests should want.
	Confine func(termGrace time.Duration, path string, args ...string) (*exec.Cmd, error)
}

// Usage is the run's token usage: the sum over its assistant messages, in
// pi's own field names.
type Usage struct {
	Input       int64      `json:"input"`
	Output      int64      `json:"output"`
	CacheRead   int64      `json:"cacheRead"`
	CacheWrite  int64      `json:"cacheWrite"`
	TotalTokens int64      `json:"totalTokens"`
	Cost        *UsageCost `json:"cost,omitempty"`
}

// UsageCost is pi's reported cost.
type UsageCost struct {
	Total float64 `json:"total"`
}

func (u *Usage) add(raw json.RawMessage) {
	var v Usage
	if json.Unmarshal(raw, &v) != nil {
		return
	}
	u.Input += v.Input
	u.Output += v.Output
	u.CacheRead += v.CacheRead
	u.CacheWrite += v.CacheWrite
	u.TotalTokens += v.TotalTokens
	if v.Cost != nil {
		if u.Cost == nil {
			u.Cost = &UsageCost{}
		}
		u.Cost.Total += v.Cost.Total
	}
}

// Result is result.json, plus facts the in-process provider reads.
type Result struct {
	RunID string `json:"runId"`
	// ExitCode is the child's own exit status (128+N after signal N),
	// except 0 when the child gave a terminal stop or length answer and
	// then had to be torn down. 127 or 126 when it could not be spawned.
	ExitCode int    `json:"exitCode"`
	Signal   string `json:"signal,omitempty"`
	// StopReason is the canonical reason of the terminal answer; without
	// one it is "aborted" when the run was cancelled and "error" otherwise.
	StopReason    string `json:"stopReason"`
	RawStopReason string `json:"rawStopReason,omitempty"`
	FinalText     string `json:"finalText"`
	Usage         *Usage `json:"usage,omitempty"`
	ResolvedModel string `json:"resolvedModel,omitempty"`
	StartedAt     string `json:"startedAt"`
	EndedAt       string `json:"endedAt"`
	// ErrorMessage is what the child said about a failure — its message's
	// error text and its stderr tail — plus artifact or teardown errors.
	// It is an artifact for humans: never copy it into a diagnostic.
	ErrorMessage string `json:"errorMessage,omitempty"`
	// TornDown says the wrapper ended the child (semantic cleanup or
	// cancellation) rather than the child exiting by itself.
	TornDown bool `json:"tornDown,omitempty"`
	// ProtocolErrors counts stdout lines that were not JSON objects.
	ProtocolErrors int `json:"protocolErrors,omitempty"`

	// Output is the selected output (outcome.Fold over the child's
	// assistant messages and streamed text).
	Output []llm.Block `json:"-"`
	// Terminal says the child gave a terminal answer with no retry
	// pending; TerminalEmpty that this answer had no content at all.
	Terminal      bool `json:"-"`
	TerminalEmpty bool `json:"-"`
	// Spawned is false when the child never started.
	Spawned bool `json:"-"`
	// Cancelled says the run's context ended it.
	Cancelled bool `json:"-"`
	// TeardownErr is the teardown ladder's failure (proc.ErrNotQuiescent).
	TeardownErr error `json:"-"`
	// ArtifactErr is the first failed write of events, stdout, stderr or
	// transcript during the run.
	ArtifactErr error `json:"-"`
}

// ArtifactError is an artifact that could not be written.
type ArtifactError struct {
	Artifact string // result, events, stdout, stderr, transcript
	Path     string
	Err      error
}

func (e *ArtifactError) Error() string {
	return fmt.Sprintf("cannot write %s artifact %s: %v", e.Artifact, e.Path, e.Err)
}

func (e *ArtifactError) Unwrap() error { return e.Err }

// SpawnError is a child that never ran: its executable could not be
// started, or its artifacts could not be opened. result.json has been
// written, failing, with Result's content.
type SpawnError struct {
	Result Result
	Err    error
}

func (e *SpawnError) Error() string { return "child could not be started: " + e.Err.Error() }
func (e *SpawnError) Unwrap() error { return e.Err }

// Run runs the child described by meta to its end and writes result.json.
// A child that cannot be spawned yields its failing result and a nil
// error. The error is non-nil only when result.json could not be written
// (an *ArtifactError), or meta is unusable.
func Run(ctx context.Context, meta Meta, opts Options) (Result, error) {
	c, err := Start(ctx, meta, opts)
	if err != nil {
		var se *SpawnError
		if errors.As(err, &se) {
			return se.Result, nil
		}
		return Result{}, err
	}
	return c.Wait()
}

// Child is a started run.
type Child struct {
	meta      Meta
	opts      Options
	ctx       context.Context
	p         *proc.Process
	pipes     *proc.Pipes
	resultTmp *os.File
	startedAt string

	stdoutLog, stderrLog, events, transcript *artifact

	readers sync.WaitGroup
	notify  chan struct{}

	mu           sync.Mutex
	fold         outcome.Fold
	last         *Event // the last assistant message
	held         *Event // an error message not yet folded: a retry may discard it
	retryPending bool
	usage        *Usage
	model        string
	protocolErrs int
	stderrTail   proc.Tail // Max: stderrTailBytes

	done chan struct{}
	res  Result
	err  error
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// stamp formats a time as JavaScript's toISOString does, which is what
// META.json's startedAt holds.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// Start prepares the artifacts and spawns the child. When it returns nil
// error, the child runs and Wait returns its result; cancelling ctx tears
// it down. Errors: an *ArtifactError when result.json's location is not
// writable (nothing was started), a *SpawnError when the child could not
// be started (result.json says so), or meta's own error.
func Start(ctx context.Context, meta Meta, opts Options) (*Child, error) {
	if err := meta.Validate(); err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.Ladder == (proc.Ladder{}) {
		opts.Ladder = proc.DefaultLadder
	}
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	c := &Child{meta: meta, opts: opts, ctx: ctx, notify: make(chan struct{}, 1), done: make(chan struct{}),
		stderrTail: proc.Tail{Max: stderrTailBytes}}
	c.startedAt = meta.StartedAt
	if c.startedAt == "" {
		c.startedAt = stamp(opts.now())
	}

	// result.json is written last, by renaming a temporary file made now in
	// its directory: a location that cannot take it fails here, before any
	// child runs, instead of after the child's work is done.
	tmp, err := createTemp(meta.ResultPath)
	if err != nil {
		return nil, &ArtifactError{Artifact: "result", Path: meta.ResultPath, Err: err}
	}
	c.resultTmp = tmp

	if err := c.openArtifacts(); err != nil {
		return nil, c.failStart(err, 1)
	}

	command := meta.Command
	if command == "" {
		command = DefaultCommand
	}
	args, stdin := meta.CommandLine()
	path, err := lookPath(command, opts.Env)
	if err != nil {
		return nil, c.failStart(err, 127)
	}
	var cmd *exec.Cmd
	if opts.Confine != nil {
		cmd, err = opts.Confine(opts.Ladder.Term/2, path, args...)
	} else {
		cmd = exec.Command(path, args...)
	}
	if err != nil {
		return nil, c.failStart(err, 126)
	}
	cmd.Env = opts.Env
	cmd.Dir = meta.Cwd
	p, pipes, err := proc.StartPiped(cmd)
	if err != nil {
		code := 126
		if errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		return nil, c.failStart(err, code)
	}
	c.p, c.pipes = p, pipes

	c.readers.Add(3)
	go c.writeStdin(stdin)
	go c.readStdout()
	go c.readStderr()
	go c.supervise()
	return c, nil
}

// Wait blocks until the child has settled and its group is gone, and
// returns the result written to result.json. The error is an
// *ArtifactError when result.json could not be written.
func (c *Child) Wait() (Result, error) {
	<-c.done
	return c.res, c.err
}

// Done is closed when the run has settled.
func (c *Child) Done() <-chan struct{} { return c.done }

func createTemp(path string) (*os.File, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, errors.New("is a directory")
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
}

// artifact is an output file whose first write error sticks: the reader
// keeps draining the child (a child blocked on a full pipe would never
// finish) but stops writing to a broken file.
type artifact struct {
	name, path string
	f          *os.File
	err        error
}

func (a *artifact) write(b []byte) {
	if a == nil || a.err != nil || len(b) == 0 {
		return
	}
	if _, err := a.f.Write(b); err != nil {
		a.err = &ArtifactError{Artifact: a.name, Path: a.path, Err: err}
	}
}

func (a *artifact) close() {
	if a == nil || a.f == nil {
		return
	}
	if err := a.f.Close(); err != nil && a.err == nil {
		a.err = &ArtifactError{Artifact: a.name, Path: a.path, Err: err}
	}
}

func (c *Child) openArtifacts() error {
	open := func(name, path string) (*artifact, error) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, &ArtifactError{Artifact: name, Path: path, Err: err}
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, &ArtifactError{Artifact: name, Path: path, Err: err}
		}
		return &artifact{name: name, path: path, f: f}, nil
	}
	var err error
	if c.events, err = open("events", c.meta.EventsPath); err != nil {
		return err
	}
	if c.stdoutLog, err = open("stdout", c.meta.StdoutPath); err != nil {
		return err
	}
	if c.stderrLog, err = open("stderr", c.meta.StderrPath); err != nil {
		return err
	}
	if c.transcript, err = open("transcript", c.meta.TranscriptPath); err != nil {
		return err
	}
	return nil
}

func (c *Child) closeArtifacts() {
	for _, a := range []*artifact{c.events, c.stdoutLog, c.stderrLog, c.transcript} {
		a.close()
	}
}

// failStart writes the failing result.json of a child that never ran.
func (c *Child) failStart(cause error, code int) error {
	c.closeArtifacts()
	res := Result{
		RunID: c.meta.RunID, ExitCode: code, StopReason: StopError, ResolvedModel: c.meta.ResolvedModel,
		StartedAt: c.startedAt, EndedAt: stamp(c.opts.now()), ErrorMessage: "spawn failed: " + cause.Error(),
	}
	if err := c.commitResult(res); err != nil {
		return err
	}
	return &SpawnError{Result: res, Err: cause}
}

func (c *Child) commitResult(res Result) error {
	data, err := json.MarshalIndent(res, "", "  ")
	if err == nil {
		data = append(data, '\n')
		_, err = c.resultTmp.Write(data)
	}
	if cerr := c.resultTmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(c.resultTmp.Name(), c.meta.ResultPath)
	}
	if err != nil {
		os.Remove(c.resultTmp.Name())
		return &ArtifactError{Artifact: "result", Path: c.meta.ResultPath, Err: err}
	}
	return nil
}

// lookPath is childproc.LookPath: the one executable lookup of every child.
func lookPath(file string, env []string) (string, error) { return childproc.LookPath(file, env) }

// writeStdin gives the child its task when it does not travel as an
// argument, then closes stdin: pi's print mode reads stdin to its end
// before it starts. A child that never reads is unblocked by the
// teardown, which closes stdin first.
func (c *Child) writeStdin(text string) {
	defer c.readers.Done()
	if text != "" {
		_, _ = io.WriteString(c.pipes.Stdin, text)
	}
	_ = c.pipes.Stdin.Close()
}

func (c *Child) readStdout() {
	defer c.readers.Done()
	r := bufio.NewReaderSize(c.pipes.Stdout, 64<<10)
	var line []byte
	oversized := false
	for {
		chunk, err := r.ReadSlice('\n')
		c.stdoutLog.write(chunk)
		if !oversized {
			if len(line)+len(chunk) > MaxLine {
				oversized, line = true, line[:0]
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !oversized {
			c.handleLine(line)
		}
		line, oversized = line[:0], false
		if err != nil {
			return
		}
	}
}

func (c *Child) readStderr() {
	defer c.readers.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.pipes.Stderr.Read(buf)
		if n > 0 {
			c.stderrLog.write(buf[:n])
			c.stderrTail.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// handleLine interprets one stdout line.
func (c *Child) handleLine(line []byte) {
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	if c.opts.OnLine != nil {
		c.opts.OnLine()
	}
	p, err := parseLine(line)
	c.mu.Lock()
	if err != nil {
		c.protocolErrs++
		c.mu.Unlock()
		return
	}
	if p.delta != "" {
		c.fold.PushText(p.delta)
	}
	switch p.retry {
	case retryPending:
		c.retryPending = true
		// The failed attempt was never an answer: pi drops it from its
		// history, and so does the fold.
		c.held = nil
		c.fold.Push(session.Event{Type: session.TypeLLMRetry, Payload: session.LLMRetry{}})
	case retryResolved:
		c.retryPending = false
	}
	ev := p.event
	if ev != nil && ev.Type == EventAssistantText {
		c.retryPending = false // a new message supersedes any retry
		c.foldHeld()
		switch ev.StopReason {
		case StopError:
			c.held = ev
		case StopAborted: // cut by a cancel: never beats an earlier message (outcome.Fold)
			c.fold.PushPartial(llm.Message{Role: llm.RoleAssistant, Content: ev.Content})
		default:
			c.fold.PushMessage(llm.Message{Role: llm.RoleAssistant, Content: ev.Content})
		}
		c.last = ev
		if ev.Usage != nil {
			if c.usage == nil {
				c.usage = &Usage{}
			}
			c.usage.add(ev.Usage)
		}
		if ev.Model != "" {
			c.model = ev.Model
		}
	}
	c.mu.Unlock()

	if ev != nil {
		if data, err := json.Marshal(*ev); err == nil {
			c.events.write(append(data, '\n'))
		}
		c.transcript.write([]byte(transcriptLine(ev)))
		if c.opts.OnEvent != nil {
			c.opts.OnEvent(*ev)
		}
	}
	if p.retry != retryUnchanged || ev != nil {
		select {
		case c.notify <- struct{}{}:
		default:
		}
	}
}

// foldHeld folds a held error message: no retry discarded it. c.mu held.
func (c *Child) foldHeld() {
	if c.held != nil {
		c.fold.PushMessage(llm.Message{Role: llm.RoleAssistant, Content: c.held.Content})
		c.held = nil
	}
}

func transcriptLine(ev *Event) string {
	switch ev.Type {
	case EventToolCall:
		return fmt.Sprintf("[tool call] %s %s\n", ev.ToolName, ev.Args)
	case EventToolResult:
		status := "ok"
		if ev.IsError {
			status = "error"
		}
		return fmt.Sprintf("[tool result] %s %s\n", ev.ToolName, status)
	}
	reason := ev.StopReason
	if reason == "" {
		reason = "raw " + ev.RawStopReason
	}
	return fmt.Sprintf("[assistant %s] %s\n", reason, ev.Text)
}

// terminal reports whether the child has given its terminal answer with
// no retry pending. c.mu held.
func (c *Child) terminal() bool {
	return c.last != nil && IsTerminal(c.last.StopReason) && !c.retryPending
}

func (c *Child) armed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.terminal()
}

// supervise waits for the child to exit, for the run to be cancelled, or
// for the grace after a terminal answer to pass; then it tears the group
// down with the one ladder, drains the streams and writes result.json.
func (c *Child) supervise() {
	defer close(c.done)
	var (
		timer     *time.Timer
		timerC    <-chan time.Time
		cancelled bool
	)
	stopTimer := func() {
		if timer != nil {
			timer.Stop()
			timer, timerC = nil, nil
		}
	}
loop:
	for {
		select {
		case <-c.p.Done():
			break loop
		case <-c.ctx.Done():
			cancelled = true
			break loop
		case <-c.notify:
			if c.armed() {
				if timer == nil {
					timer = time.NewTimer(c.opts.Grace)
					timerC = timer.C
				}
			} else {
				stopTimer()
			}
		case <-timerC:
			if c.armed() {
				break loop
			}
			stopTimer()
		}
	}
	stopTimer()
	tornDown := !c.p.Exited()
	ladder := c.opts.Ladder
	if cancelled && c.opts.Unresponsive != nil && c.opts.Unresponsive() {
		ladder = ladder.Unresponsive()
	}
	disposeErr := c.p.Dispose(ladder)
	c.drain()
	c.closeArtifacts()
	c.res = c.result(cancelled, tornDown, disposeErr)
	c.err = c.commitResult(c.res)
}

// drain waits for the readers to reach EOF, boundedly: once the group is
// gone only a process that escaped it can hold the pipes open, and then
// the read ends are closed under it.
func (c *Child) drain() {
	done := make(chan struct{})
	go func() {
		c.readers.Wait()
		close(done)
	}()
	t := time.NewTimer(drainWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		c.pipes.Stdout.Close()
		c.pipes.Stderr.Close()
		<-done
	}
	c.pipes.Stdout.Close()
	c.pipes.Stderr.Close()
}

func (c *Child) result(cancelled, tornDown bool, disposeErr error) Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	terminal := c.terminal()
	c.foldHeld()
	res := Result{
		RunID: c.meta.RunID, StartedAt: c.startedAt, EndedAt: stamp(c.opts.now()),
		Usage: c.usage, ResolvedModel: c.model, ProtocolErrors: c.protocolErrs,
		Spawned: true, Terminal: terminal, Cancelled: cancelled && !terminal, TornDown: tornDown,
		TeardownErr: disposeErr,
	}
	if res.ResolvedModel == "" {
		res.ResolvedModel = c.meta.ResolvedModel
	}
	res.Output = c.fold.Collect()
	res.FinalText = strings.TrimSpace(llm.BlocksText(res.Output))
	if c.last != nil {
		res.RawStopReason = c.last.RawStopReason
	}
	switch {
	case terminal:
		res.StopReason = c.last.StopReason
		res.TerminalEmpty = len(c.last.Content) == 0
	case cancelled:
		res.StopReason = StopAborted
	default:
		res.StopReason = StopError
	}

	if ws, ok := c.p.Cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.ExitCode = 128 + int(ws.Signal())
		res.Signal = proc.SignalName(ws.Signal())
	} else {
		res.ExitCode = c.p.Cmd.ProcessState.ExitCode()
	}
	if tornDown && terminal && (res.StopReason == StopStop || res.StopReason == StopLength) {
		res.ExitCode, res.Signal = 0, ""
	}

	var msgs []string
	if c.last != nil && c.last.ErrorMessage != "" && !(terminal && res.StopReason == StopStop) {
		msgs = append(msgs, c.last.ErrorMessage)
	}
	if tail := strings.TrimSpace(c.stderrTail.String()); tail != "" {
		msgs = append(msgs, "stderr: "+tail)
	}
	for _, a := range []*artifact{c.events, c.stdoutLog, c.stderrLog, c.transcript} {
		if a.err != nil {
			if res.ArtifactErr == nil {
				res.ArtifactErr = a.err
			}
			msgs = append(msgs, a.err.Error())
		}
	}
	if disposeErr != nil {
		msgs = append(msgs, "teardown: "+disposeErr.Error())
	}
	res.ErrorMessage = strings.Join(msgs, "\n")
	return res
}
