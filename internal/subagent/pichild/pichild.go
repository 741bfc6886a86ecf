// Package pichild is the `pi` subagent provider: an agent definition with
// `provider: pi` runs as `pi --mode json -p --no-session` through the
// wrapper of internal/wrap, in this process — the same code `reins wrap`
// runs, so the rules for when a pi child is done and when it may be torn
// down exist once. Its artifacts (events.jsonl, the raw streams, a
// transcript, result.json) go to <sessions>/<parent>/children/<run>/.
//
// What reaches the parent is chosen by reins, never by the child: the
// selected output of the one fold, a stop reason from a closed set, and a
// fixed diagnostic line. The child's stderr and error texts stay in its
// artifacts.
package pichild

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/childproc"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/private"
	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/internal/wrap"
	"github.com/reinsdev/reins/proc"
)

// Options configure the provider.
type Options struct {
	// SessionsDir is the sessions root; a run's artifacts go to
	// <SessionsDir>/<parent session>/children/<run id>/.
	SessionsDir string
	// Environ is the parent environment the child inherits (the agent's
	// env is added on top); nil means os.Environ.
	Environ func() []string
	// Grace and Ladder tune the wrapper's cleanup; zero means its defaults.
	Grace  time.Duration
	Ladder proc.Ladder
	// Logf is the host log, for raw causes that must not reach the model.
	Logf func(format string, args ...any)
}

// New returns the pi provider.
func New(o Options) subagent.Provider { return &provider{o: o} }

type provider struct{ o Options }

func (p *provider) logf(format string, args ...any) {
	if p.o.Logf != nil {
		p.o.Logf(format, args...)
	}
}

// Cancellation causes, told apart when the run settles.
var (
	errLocal   = errors.New("pi child cancelled locally")
	errParent  = errors.New("pi child cancelled by its parent")
	errTimeout = errors.New("pi child timed out")
)

func diag(stage outcome.Stage, category outcome.Category, stop outcome.StopReason, code *int, signal string) string {
	return outcome.Diagnostic{
		Provider: config.ProviderPi, Stage: stage, Category: category, StopReason: stop, ExitCode: code, Signal: signal,
	}.String()
}

func startFailure(err error) error {
	return &subagent.StartError{
		Diagnostic: diag(outcome.StageProcess, outcome.CategoryProcessStart, outcome.StopError, nil, ""),
		Err:        err,
	}
}

// Start makes the run directory and spawns the child.
func (p *provider) Start(_ context.Context, req subagent.Request) (subagent.Run, error) {
	dir, err := p.runDir(req)
	if err != nil {
		return nil, startFailure(err)
	}
	ag := req.Agent
	meta := wrap.Meta{
		RunID: filepath.Base(dir), Mode: "single", Agent: ag.Name, AgentSource: ag.Source, Task: req.Prompt,
		Cwd: req.Cwd, RequestedModel: ag.Model, ResolvedModel: ag.Model,
		SessionPath:    filepath.Join(dir, "child-session.jsonl"),
		EventsPath:     filepath.Join(dir, "events.jsonl"),
		ResultPath:     filepath.Join(dir, "result.json"),
		StdoutPath:     filepath.Join(dir, "stdout.log"),
		StderrPath:     filepath.Join(dir, "stderr.log"),
		TranscriptPath: filepath.Join(dir, "transcript.log"),
		Command:        ag.Command,
		Tools:          piTools(req.Tools, req.Permission),
		Args:           ag.Args,
		PiSession:      p.piSession(req),
	}
	if strings.TrimSpace(ag.SystemPrompt) != "" {
		meta.SystemPromptPath = filepath.Join(dir, "system-prompt.md")
		if err := os.WriteFile(meta.SystemPromptPath, []byte(ag.SystemPrompt), 0o600); err != nil {
			return nil, startFailure(err)
		}
	}

	pol := req.ChildPolicy(subagent.KeyEnv(ag.Model))
	environ := os.Environ
	if p.o.Environ != nil {
		environ = p.o.Environ
	}
	extra, herr := req.AgentHome(environ(), &pol, ag.Env)
	if herr != nil {
		p.logf("pi child %s (%s): %v", req.RunID, ag.Name, herr)
	}
	if meta.SystemPromptPath != "" {
		// The prompt file is in reins's sessions folder, which the
		// container hides: pi reads it through Readable.
		pol.Readable = append(slices.Clip(pol.Readable), meta.SystemPromptPath)
	}
	if meta.PiSession != "" {
		d := filepath.Dir(meta.PiSession)
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, startFailure(err)
		}
		// pi's session lives in reins's sessions folder: state, the one
		// part of $REINS_HOME a confined process may write.
		pol.State = append(slices.Clip(pol.State), d)
	}
	// The run's lifetime: the agent's timeout counts from the spawn.
	r := &run{life: childproc.Start(ag.Timeout, errTimeout), charges: req.Budget != nil}
	tap := subagent.NewTap(req)
	child, err := wrap.Start(r.life.Context(), meta, wrap.Options{
		Env: p.env(req.TraceEnv(extra)), Grace: p.o.Grace, Ladder: p.o.Ladder, Confine: Confine(pol),
		OnLine: r.life.Progress, Unresponsive: r.life.Hurried, OnEvent: onEvent(tap, req.Budget),
	})
	if err != nil {
		r.life.Abandon()
		p.logf("pi child %s (%s) failed to start: %v", req.RunID, ag.Name, err)
		return nil, startFailure(err)
	}
	r.child = child
	r.life.WatchStall(req.StallTimeout, req.OnStall)
	tap.Emit(session.TypeTurnStart, session.TurnStart{Turn: 1})
	r.life.Go(func() {
		defer func() {
			s := settle(r.res, r.life.Cause())
			end := session.TurnEnd{Turn: 1, Reason: s.StopReason.TurnEnd()}
			if !s.Usage.IsZero() {
				end.Usage = &s.Usage
			}
			tap.Emit(session.TypeTurnEnd, end)
		}()
		res, err := child.Wait()
		if err != nil {
			p.logf("pi child %s: %v", req.RunID, err)
		}
		if res.ArtifactErr != nil {
			p.logf("pi child %s: %v", req.RunID, res.ArtifactErr)
		}
		if res.TeardownErr != nil {
			p.logf("pi child %s teardown: %v", req.RunID, res.TeardownErr)
		}
		r.res = res
	})
	return r, nil
}

// onEvent handles the wrapper's normalized events as they arrive: each
// assistant message's usage is charged to the run's budget (pi reports it
// per message), and every event is mapped to reins's vocabulary for the
// live stream (subagent.Tap). nil when there is neither.
func onEvent(tap *subagent.Tap, b *budget.Budget) func(wrap.Event) {
	if tap == nil && b == nil {
		return nil
	}
	calls := 0
	return func(ev wrap.Event) {
		if ev.Type == wrap.EventAssistantText && b != nil && len(ev.Usage) > 0 {
			var u wrap.Usage
			if json.Unmarshal(ev.Usage, &u) == nil {
				b.Charge(usage(&u))
			}
		}
		if tap == nil {
			return
		}
		switch ev.Type {
		case wrap.EventToolCall:
			calls++
			tap.Emit(session.TypeToolCall, session.ToolCall{Turn: 1, CallID: "pi-" + strconv.Itoa(calls), Name: ev.ToolName, Arguments: string(ev.Args)})
		case wrap.EventToolResult:
			tap.Emit(session.TypeToolResult, session.ToolResult{Turn: 1, CallID: "pi-" + strconv.Itoa(calls), IsError: ev.IsError})
		case wrap.EventAssistantText:
			content := ev.Content
			if content == nil {
				content = []llm.Block{}
			}
			tap.Emit(session.TypeAssistantMessage, session.AssistantMessage{Turn: 1, Message: llm.Message{Role: llm.RoleAssistant, Content: content}})
		}
	}
}

// piSession is the pi session file of the child req.ChildID: one per
// child, in a directory of its own under its parent's session directory
// (the one place besides the workspace the sandboxed pi may write), so every continuation of
// the child runs pi on the same conversation. Empty (--no-session) for a
// request that names no child.
func (p *provider) piSession(req subagent.Request) string {
	if req.ChildID == "" || p.o.SessionsDir == "" || !filepath.IsLocal(req.ParentSession) || !filepath.IsLocal(req.ChildID) {
		return ""
	}
	return filepath.Join(p.o.SessionsDir, req.ParentSession, "children", "pi-"+req.ChildID, "session.jsonl")
}

// Continue runs pi again on the child's session file (--session FILE):
// pi loads its earlier conversation and answers the follow-up.
func (p *provider) Continue(ctx context.Context, req subagent.Request) (subagent.Run, error) {
	f := p.piSession(req)
	if f == "" {
		return nil, &subagent.StartError{Err: subagent.ErrNotContinuable}
	}
	if _, err := os.Stat(f); err != nil {
		return nil, &subagent.StartError{
			Diagnostic: diag(outcome.StageProcess, outcome.CategoryConfiguration, outcome.StopError, nil, ""),
			Err:        fmt.Errorf("pi session of child %s: %w", req.ChildID, err),
		}
	}
	return p.Start(ctx, req)
}

// runDir makes a fresh directory for the run. Run ids restart in a resumed
// session, so an existing directory gets a numbered sibling rather than
// being overwritten.
func (p *provider) runDir(req subagent.Request) (string, error) {
	if p.o.SessionsDir == "" {
		return "", errors.New("pi provider: no sessions directory")
	}
	parent := filepath.Join(p.o.SessionsDir, req.ParentSession, "children")
	if err := private.MkdirAll(parent); err != nil {
		return "", err
	}
	id := req.RunID
	if id == "" {
		id = "run"
	}
	for n := 1; n < 1000; n++ {
		name := id
		if n > 1 {
			name = id + "." + strconv.Itoa(n)
		}
		dir := filepath.Join(parent, name)
		err := os.Mkdir(dir, private.DirMode)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("pi provider: no free run directory under %s", parent)
}

// env is the parent's environment with the agent's env on top.
func (p *provider) env(extra map[string]string) []string {
	environ := os.Environ
	if p.o.Environ != nil {
		environ = p.o.Environ
	}
	return childproc.Environ(environ(), extra)
}

// piNames maps reins's model-facing tool names to pi's. Delegation and
// job tools have no pi counterpart.
var piNames = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		"read": "read", "write": "write", "edit": "edit", "bash": "bash",
		"grep": "grep", "glob": "find", "ls": "ls",
	}
}}

// readOnly are the pi tools a read-only child may have.
var readOnly = []string{"read", "grep", "find", "ls"}

// piTools is pi's --tools allowlist for an agent's tools under the
// parent's permission mode: nil keeps pi's defaults, empty means none. pi
// has no permission modes of its own, so a read-only parent's child gets
// only pi's read-only tools.
func piTools(tools []string, perm tool.Permission) []string {
	var out []string
	if tools == nil {
		if perm != tool.ReadOnly {
			return nil
		}
		return slices.Clone(readOnly)
	}
	out = []string{}
	for _, t := range tools {
		n, ok := piNames.Get()[t]
		if !ok || slices.Contains(out, n) {
			continue
		}
		if perm == tool.ReadOnly && !slices.Contains(readOnly, n) {
			continue
		}
		out = append(out, n)
	}
	return out
}

type run struct {
	charges bool // the budget was charged as usage arrived (onEvent)
	life    *childproc.Lifetime
	child   *wrap.Child
	res     wrap.Result // set when the run settled
}

// Session is empty: a pi child keeps no reins session (it runs with
// --no-session); its artifacts are in the run directory.
func (r *run) Session() string { return "" }

func (r *run) Wait(ctx context.Context) outcome.Result {
	r.life.Wait(ctx, errParent)
	return settle(r.res, r.life.Cause())
}

func (r *run) Cancel() { r.life.End(errLocal) }

// Stalled reports that the child was stopped for sending nothing for
// subagents.stallTimeout (subagent.Staller).
func (r *run) Stalled() bool { return r.life.Stalled() }

// ChargesBudget says the run charged its budget with each message's usage
// as it arrived (subagent.SelfCharging).
func (r *run) ChargesBudget() bool { return r.charges }

// Dispose tears the child down (if it still runs) and returns once its
// process group is gone: the wrapper's Wait returns only then.
func (r *run) Dispose() error {
	return r.life.Dispose(errParent, func() error { return r.res.TeardownErr })
}

// settle maps the wrapper's result to the result contract. Every field of
// a diagnostic comes from a closed set or an observed exit status; the
// child's own words (its error message, its stderr) are never used.
func settle(w wrap.Result, cause error) outcome.Result {
	res := outcome.Result{Output: w.Output, Usage: usage(w.Usage)}
	var code *int
	signal := w.Signal
	if signal == "" {
		c := w.ExitCode
		code = &c
	}
	switch {
	case w.TeardownErr != nil:
		res.StopReason = outcome.StopError
		res.Diagnostic = diag(outcome.StageTeardown, "", outcome.StopError, code, signal)
	case w.Terminal:
		switch w.StopReason {
		case wrap.StopStop:
			if w.TerminalEmpty {
				// An empty completion is not an answer (docs/providers.md's
				// EMPTY_RESPONSE), however the child labelled it.
				res.StopReason = outcome.StopError
				res.Diagnostic = diag(outcome.StageRun, outcome.CategoryChildError, outcome.StopError, code, signal)
			} else {
				res.StopReason = outcome.StopCompleted
			}
		case wrap.StopLength:
			res.StopReason = outcome.StopMaxTokens // the stop reason says it all
		case wrap.StopAborted:
			res.StopReason = outcome.StopAborted // a remote cancel: likewise
		default:
			res.StopReason = outcome.StopError
			res.Diagnostic = diag(outcome.StageRun, outcome.CategoryChildError, outcome.StopError, code, signal)
		}
	case w.Cancelled && errors.Is(cause, errTimeout):
		res.StopReason = outcome.StopAborted
		res.Diagnostic = diag(outcome.StageRun, outcome.CategoryTimeout, outcome.StopAborted, nil, "")
	case w.Cancelled:
		res.StopReason = outcome.StopAborted // local or parent cancel: no diagnostic
	case w.ProtocolErrors > 0:
		res.StopReason = outcome.StopError
		res.Diagnostic = diag(outcome.StageRun, outcome.CategoryProtocol, outcome.StopError, code, signal)
	case signal != "":
		res.StopReason = outcome.StopError
		res.Diagnostic = diag(outcome.StageProcess, outcome.CategoryProcessExit, outcome.StopError, nil, signal)
	default:
		res.StopReason = outcome.StopError
		res.Diagnostic = diag(outcome.StageRun, outcome.CategoryMissingTerminal, outcome.StopError, code, "")
	}
	return res
}

// usage converts pi's counts: its input excludes cache reads and writes,
// reins's InputTokens is the whole prompt.
func usage(u *wrap.Usage) llm.Usage {
	if u == nil {
		return llm.Usage{}
	}
	out := llm.Usage{
		InputTokens:      int(u.Input + u.CacheRead + u.CacheWrite),
		OutputTokens:     int(u.Output),
		CacheReadTokens:  int(u.CacheRead),
		CacheWriteTokens: int(u.CacheWrite),
	}
	// pi prices its own usage (its model is pi's choice, not in reins's
	// table); without that, the cost is unknown.
	if u.Cost != nil {
		out.CostUSD = ptr(u.Cost.Total)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// Confine is the wrap.Options.Confine of a pi child run under pol: the
// sandbox supervisor, its sweep ending within termGrace.
func Confine(pol sandbox.Policy) func(termGrace time.Duration, path string, args ...string) (*exec.Cmd, error) {
	return func(termGrace time.Duration, path string, args ...string) (*exec.Cmd, error) {
		pol.TermGrace = termGrace
		return sandbox.Command(pol, path, args...)
	}
}
