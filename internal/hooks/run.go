package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/textcut"
	"github.com/reinsdev/reins/proc"
)

// Output bounds: what a hook prints beyond MaxOutputBytes per stream is
// dropped; what reaches the model or the user of it is cut at MaxText.
const (
	MaxOutputBytes = 64 << 10
	MaxText        = 10_000
)

// hookLadder stops a hook that timed out or whose turn was cancelled:
// its whole process group, at once.
var hookLadder = proc.Ladder{Grace: 0, Term: proc.DefaultTerm, Reap: proc.DefaultReap}

// Runner runs the hooks of one session.
type Runner struct {
	Set *Set
	// SessionID and Transcript are the session's id and log file.
	SessionID, Transcript string
	// Cwd is the session's workspace; ProjectDir the project's root
	// (CLAUDE_PROJECT_DIR, REINS_PROJECT_DIR): the harness's workspace.
	Cwd, ProjectDir string
	// PermissionMode is Claude Code's name of the session's mode.
	PermissionMode string
	// Policy is the session's tool sandbox policy (mode, network,
	// environment): confined hooks run under it.
	Policy func() sandbox.Policy
	// Append records a hook/run event in the session log.
	Append func(typ string, data any)
	// Subagent says the session is a child: its Stop hooks are
	// SubagentStop's, and as in Claude Code its hooks' session_id and
	// transcript_path are its parent's, with Agent naming the child.
	Subagent bool
	// Agent is the child a Subagent session is (Claude Code's agent_id,
	// agent_type, agent_transcript_path).
	Agent Agent

	mu     sync.Mutex
	halted string // continue: false's stopReason; set once
	isHalt bool
}

// Agent names a child session in its hooks' input.
type Agent struct {
	// ID is the child's session id (agent_id).
	ID string
	// Type is its agent definition's name, "general" for the built-in
	// agent (agent_type; the SubagentStop matcher matches it).
	Type string
	// Transcript is the child's own log (agent_transcript_path).
	Transcript string
}

// Outcome is one hook's run.
type Outcome struct {
	Hook     Hook
	Exit     int // -1: did not exit by itself
	Stdout   string
	Stderr   string
	Problem  string // timed out, could not start, invalid JSON
	Output   *Output
	Duration time.Duration
}

// Output is a hook's JSON output (Claude Code's fields).
type Output struct {
	Continue       *bool  `json:"continue"`
	StopReason     string `json:"stopReason"`
	SuppressOutput bool   `json:"suppressOutput"`
	SystemMessage  string `json:"systemMessage"`
	Decision       string `json:"decision"`
	Reason         string `json:"reason"`

	HookSpecific struct {
		HookEventName            string          `json:"hookEventName"`
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
		AdditionalContext        string          `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// Halted returns the stopReason of a hook that said continue: false in
// this session, and whether one did; the loop ends the turn on it.
func (r *Runner) Halted() (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.halted, r.isHalt
}

// ClearHalt forgets a continue: false once the turn it ended is over.
func (r *Runner) ClearHalt() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.halted, r.isHalt = "", false
}

func (r *Runner) halt(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.isHalt {
		r.halted, r.isHalt = reason, true
	}
}

// run runs hooks in parallel with input (the event's fields besides the
// common ones) and returns their outcomes in hooks' order.
func (r *Runner) run(ctx context.Context, event Event, hooks []Hook, input map[string]any) []Outcome {
	in := map[string]any{
		"session_id":      r.SessionID,
		"transcript_path": r.Transcript,
		"cwd":             r.Cwd,
		"hook_event_name": string(event),
	}
	if r.PermissionMode != "" {
		in["permission_mode"] = r.PermissionMode
	}
	if r.Subagent {
		in["agent_id"], in["agent_type"] = r.Agent.ID, r.Agent.Type
	}
	for k, v := range input {
		in[k] = v
	}
	stdin, _ := json.Marshal(in)
	out := make([]Outcome, len(hooks))
	var wg sync.WaitGroup
	for i, h := range hooks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = r.runOne(ctx, h, stdin)
		}()
	}
	wg.Wait()
	return out
}

// confined reports whether h runs in the sandbox: always, unless the
// user's own hook and the user's config opted out.
func (r *Runner) confined(h Hook) bool { return !(h.User && r.Set.Unconfined) }

// runOne runs one hook command with bash -c in the project folder, its
// stdin the event's JSON, within its timeout.
func (r *Runner) runOne(ctx context.Context, h Hook, stdin []byte) (o Outcome) {
	start := time.Now()
	o = Outcome{Hook: h, Exit: -1}
	defer func() { o.Duration = time.Since(start) }()
	pol := sandbox.Policy{Off: true, Mode: sandbox.FullAccess}
	if r.confined(h) && r.Policy != nil {
		pol = r.Policy()
	}
	projectDir := r.ProjectDir
	if projectDir == "" {
		projectDir = r.Cwd
	}
	set := map[string]string{"CLAUDE_PROJECT_DIR": projectDir, "REINS_PROJECT_DIR": projectDir}
	pol.Env.Set = mergeEnv(pol.Env.Set, set)
	cmd, err := sandbox.Command(pol, "bash", "-c", h.Command)
	if err != nil {
		o.Problem = "could not start: " + err.Error()
		return o
	}
	cmd.Dir = r.Cwd
	env := os.Environ()
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	cmd.Env = env
	stdout, stderr := &capped{max: MaxOutputBytes}, &capped{max: MaxOutputBytes}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(stdin), stdout, stderr
	// A grandchild that keeps the output pipes open must not hold the
	// turn: Wait gives up on the copies this long after the hook ended.
	cmd.WaitDelay = 2 * time.Second
	p, err := proc.Start(cmd)
	if err != nil {
		o.Problem = "could not start: " + err.Error()
		return o
	}
	timer := time.NewTimer(h.Timeout)
	defer timer.Stop()
	timedOut, cancelled := false, false
	select {
	case <-p.Done():
	case <-timer.C:
		timedOut = true
	case <-ctx.Done():
		cancelled = true
	}
	_ = p.Dispose(hookLadder)
	waitErr := p.Wait()
	o.Stdout, o.Stderr = stdout.String(), stderr.String()
	var exitErr *exec.ExitError
	switch {
	case timedOut:
		o.Problem = fmt.Sprintf("timed out after %s and was killed", h.Timeout)
		return o
	case cancelled:
		o.Problem = "cancelled with its turn"
		return o
	case waitErr != nil && !errors.As(waitErr, &exitErr) && !errors.Is(waitErr, exec.ErrWaitDelay):
		o.Problem = "waiting for it failed"
		return o
	}
	code, sig, _ := p.ExitStatus()
	if sig != "" {
		o.Problem = "killed by " + sig
		return o
	}
	o.Exit = code
	if code == 0 {
		if s := strings.TrimSpace(o.Stdout); strings.HasPrefix(s, "{") {
			var out Output
			if err := json.Unmarshal([]byte(s), &out); err != nil {
				o.Problem = "printed output that is not valid JSON; taken as plain text"
			} else {
				o.Output = &out
			}
		}
	}
	return o
}

func mergeEnv(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// capped keeps the first max bytes written to it.
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	if len(p) > c.max-c.buf.Len() {
		c.cut = true
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.ToValidUTF8(c.buf.String(), "\uFFFD")
}

// text cuts s for the model or the user.
func text(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= MaxText {
		return s
	}
	return textcut.Cut(s, MaxText) + fmt.Sprintf("\n[cut: hook output is capped at %d bytes]", MaxText)
}

// record appends the hook/run event of o.
func (r *Runner) record(event Event, toolName, callID string, o Outcome, decision, toModel, toUser string, input json.RawMessage) {
	if r.Append == nil {
		return
	}
	r.Append(session.TypeHookRun, session.HookRun{
		Event: string(event), Tool: toolName, CallID: callID, Command: o.Hook.Command, Source: o.Hook.Source,
		Confined: r.confined(o.Hook), Exit: o.Exit, DurationMs: o.Duration.Milliseconds(), Problem: o.Problem,
		Decision: decision, ToModel: toModel, ToUser: toUser, Input: input,
	})
}
