// Package tool holds the tool registry, the permission modes and the
// workspace bound, and the built-in tools (read, write, edit, bash, grep,
// glob, ls). A tool never crashes a run: every failure, refusal included, is
// an error result for the model. The file tools reach the workspace through
// internal/wsfs (beneath an os.Root, race-free); grep and glob match with
// internal/search.
package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/sandbox"
)

// Permission is a permission mode (docs/sandbox.md).
type Permission string

const (
	ReadOnly       Permission = "read-only"
	WorkspaceWrite Permission = "workspace-write"
	FullAccess     Permission = "full-access"
)

// rank is the one ordering of the modes, sandbox.Mode's.
func (p Permission) rank() int { return sandbox.Mode(p).Rank() }

// ParsePermission validates a permission mode name.
func ParsePermission(s string) (Permission, error) {
	p := Permission(s)
	if p.rank() < 0 {
		return "", fmt.Errorf("unknown permission mode %q (want read-only, workspace-write or full-access)", s)
	}
	return p, nil
}

// Allows reports whether mode p permits a tool that needs mode need.
func (p Permission) Allows(need Permission) bool { return p.rank() >= need.rank() }

// Min is the narrower of p and q: what a child gets when its parent runs
// under p and it asks for q. A mode that is not one of the three (the
// empty string included) counts as read-only, so Min never returns
// something a caller could read as a default wider than both.
func (p Permission) Min(q Permission) Permission {
	if p.rank() < 0 || q.rank() < 0 {
		return ReadOnly
	}
	if q.rank() < p.rank() {
		return q
	}
	return p
}

// DefaultOutputCap is the default cap on a tool result's size.
const DefaultOutputCap = 50 << 10

// Env is what a tool call runs against.
type Env struct {
	// Workspace is the absolute, cleaned workspace root (the run's cwd).
	Workspace string
	// Permission is the run's permission mode.
	Permission Permission
	// OutputCap caps a result's content in bytes; DefaultOutputCap when 0.
	OutputCap int
	// Approve, when set, is asked before every call to a tool that needs
	// more than read-only access (an ACP editor asks its user). A false
	// answer is an error result. Nil approves whatever the mode permits.
	Approve func(ctx context.Context, name string, args json.RawMessage) bool
	// Ask, when set, is asked instead of Approve: its refusal may carry
	// the user's instruction for the model (the interactive terminal).
	Ask func(ctx context.Context, name string, args json.RawMessage) Answer
	// Rules are the session's permission rules (config and agent-file
	// `permissions:`), decided before Approve or Ask (gate.go); nil: none.
	Rules Rules
	// Sandbox is the confinement every process a tool starts runs under:
	// its Off and DenyNetwork come from the configuration; the mode and
	// workspace are this Env's (see Policy).
	Sandbox sandbox.Policy
	// Shells are the session's background bash commands (bash with
	// background: true, bash_output, bash_kill); nil refuses them. The
	// session closes it at its end.
	Shells *Shells
	// BeforeRun, when set, is called after the gate let a call of a tool
	// that needs more than read-only access through, just before it runs:
	// where the screens compute what a file tool will change against the
	// file as it still is (the diff a settled write shows, in every mode).
	// It must not keep args.
	BeforeRun func(ctx context.Context, name string, args json.RawMessage)
	// AskGitWritable, when set, is asked after a bash call failed because
	// .git is read-only to sandboxed commands (the condition of the bash
	// result's .git hint): true runs the same command once more with .git
	// writable (Policy.GitWritable), for that call only, and the model gets
	// that run's result. The interactive terminal's question; nil (headless
	// runs, children): the result keeps the hint (docs/sandbox.md).
	AskGitWritable func(ctx context.Context, command string) bool
	// Protect are the extra protected paths (config sandbox.protect,
	// relative to the workspace) that write and edit refuse, on top of
	// protect.Builtin.
	Protect []string
	// Narrow, when set, is asked about every call before the rules and
	// the approval: a non-empty answer refuses the call with that text (a
	// skill's allowed-tools for the rest of its turn, internal/skills). It
	// can only refuse, never approve.
	Narrow func(name string) string
	// ReadRoots are folders outside the workspace that read may read (and
	// only read): the folders of the session's skills.
	ReadRoots []string
	// Hooks, when set, are the user's PreToolUse and PostToolUse hooks
	// (internal/hooks), run around every call Registry.Run makes.
	Hooks ToolHooks
}

// ToolHooks run the user's hooks around a call (internal/hooks,
// docs/hooks.md). PreToolUse runs after the permission mode's ceiling
// and before the gate: it may refuse the call, rewrite its arguments
// (the gate then judges the rewritten call), spare the user the question
// (Allow: as an allow rule, never past a deny rule, the mode, the sandbox
// or a protected path) or ask where nobody would have been asked.
// PostToolUse sees the result and may add to what the model is told.
type ToolHooks interface {
	PreToolUse(ctx context.Context, name string, args json.RawMessage) PreVerdict
	PostToolUse(ctx context.Context, name string, args json.RawMessage, res Result) Result
}

// PreVerdict is what the PreToolUse hooks decided about a call.
type PreVerdict struct {
	// Block refuses the call; Reason is the model's error result.
	Block  bool
	Reason string
	// Args, when set, replace the call's arguments.
	Args json.RawMessage
	// Allow lets the call through unasked (as an allow rule); Ask asks
	// the approval hook even where the gate would not (refused when
	// nobody can be asked).
	Allow, Ask bool
	// Context is added to the call's result for the model.
	Context string
}

// callIDKey carries a call's id to the hooks (tool_use_id).
type callIDKey struct{}

// WithCallID is ctx carrying the id of the call it runs.
func WithCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey{}, id)
}

// CallID is the id of the call ctx runs, or "".
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}

// Policy is the sandbox policy of a process started on behalf of this Env.
func (e *Env) Policy() sandbox.Policy {
	p := e.Sandbox
	p.Mode = sandbox.Mode(e.Permission)
	p.Workspace = e.Workspace
	return p
}

// RejectAll is the approval policy of a child: it never asks a human, so
// anything that would need asking is rejected.
func RejectAll(context.Context, string, json.RawMessage) bool { return false }

// Result is a tool's answer to the model.
type Result struct {
	Content string
	IsError bool
	// Paged says the tool already bounded Content by its own cap and
	// pointed at the rest (a subagent's result, outcome.Page): the
	// registry does not cut it again, so its marker and last line survive.
	Paged bool
	// Image goes to the model with Content on wires that take images
	// (read of an image file), bounded by read's size cap.
	Image *llm.Image
}

// Errorf returns an error result.
func Errorf(format string, args ...any) Result {
	return Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// Tool is one model-callable tool.
type Tool interface {
	// Spec is what the model is shown.
	Spec() llm.ToolSpec
	// Needs is the least permission mode the tool runs under.
	Needs() Permission
	// Run executes one call. args is the model's raw JSON text, which may
	// be invalid: that is an error result, not a Go error.
	Run(ctx context.Context, env *Env, args json.RawMessage) Result
}

// Registry is a set of tools by name.
type Registry struct {
	tools map[string]Tool
}

// NewRegistry returns a registry holding ts.
func NewRegistry(ts ...Tool) *Registry {
	r := &Registry{tools: make(map[string]Tool)}
	for _, t := range ts {
		r.Add(t)
	}
	return r
}

// Add registers t, replacing any tool of the same name.
func (r *Registry) Add(t Tool) { r.tools[t.Spec().Name] = t }

// Get returns the tool named name.
func (r *Registry) Get(name string) (Tool, bool) {
	t, ok := r.tools[name]
	return t, ok
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.tools))
	for n := range r.tools {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Specs returns the specs of all tools, sorted by name, for a model request.
func (r *Registry) Specs() []llm.ToolSpec {
	var out []llm.ToolSpec
	for _, n := range r.Names() {
		out = append(out, r.tools[n].Spec())
	}
	return out
}

// Subset returns a registry with only the named tools that r has; names it
// lacks are returned as missing.
func (r *Registry) Subset(names []string) (sub *Registry, missing []string) {
	sub = NewRegistry()
	for _, n := range names {
		if t, ok := r.tools[n]; ok {
			sub.Add(t)
		} else {
			missing = append(missing, n)
		}
	}
	return sub, missing
}

// Concurrent reports whether a call to name may run alongside other calls
// of the same assistant message: only tools that need no more than
// read-only access do, since they change nothing.
func (r *Registry) Concurrent(name string) bool {
	t, ok := r.tools[name]
	return ok && t.Needs() == ReadOnly
}

// Traceless is a tool whose calls leave nothing behind but their result:
// reading, listing and searching files. The loop writes such a call to
// the session log before running it but does not wait for an fsync, which
// a call whose effect could outlive a power loss needs.
type Traceless interface {
	Traceless()
}

// Traceless reports whether every call in calls is to a Traceless tool.
func (r *Registry) Traceless(calls []llm.Block) bool {
	for _, c := range calls {
		if _, ok := r.tools[c.Name].(Traceless); !ok {
			return false
		}
	}
	return true
}

// Admitter is a tool part of whose work must happen in the model's call
// order although the calls of one assistant message run concurrently:
// background-job admission (which calls become jobs under the limit, and
// their ids). The loop calls Admit for every call of a concurrent batch,
// one after another in the model's order, before any of them runs, and
// runs each call with the context Admit returned. release is called once
// the call has run (or was skipped): it frees what Admit reserved and Run
// did not use.
type Admitter interface {
	Admit(ctx context.Context, args json.RawMessage) (admitted context.Context, release func())
}

// Admit runs the Admitter step of the call name(args), when its tool has
// one and may run under env; otherwise it returns ctx and a no-op.
func (r *Registry) Admit(ctx context.Context, env *Env, name string, args json.RawMessage) (context.Context, func()) {
	t, ok := r.tools[name]
	if ad, isAd := t.(Admitter); ok && isAd && env.Permission.Allows(t.Needs()) {
		return ad.Admit(ctx, args)
	}
	return ctx, func() {}
}

// Run executes a call by name under env: unknown tools and tools the
// permission mode refuses are error results. The content is capped.
func (r *Registry) Run(ctx context.Context, env *Env, name string, args json.RawMessage) Result {
	t, ok := r.tools[name]
	if !ok {
		return Errorf("unknown tool %q", name)
	}
	if !env.Permission.Allows(t.Needs()) {
		// The session's ceiling refused it, not a person: say how to lift it.
		return Errorf("tool %s is not permitted in %s mode (--permission %s), so it was refused without asking anyone; the user can allow it by starting reins with --permission %s", name, env.Permission, env.Permission, t.Needs())
	}
	// A call made after the run was canceled does nothing: the model's
	// next step will not come, and a write now would be a surprise.
	if ctx.Err() != nil {
		return canceled(name)
	}
	if env.Narrow != nil {
		if why := env.Narrow(name); why != "" {
			return Errorf("%s", why)
		}
	}
	var pre PreVerdict
	if env.Hooks != nil {
		pre = env.Hooks.PreToolUse(ctx, name, args)
		if pre.Block {
			return Result{Content: pre.Reason, IsError: true}
		}
		if pre.Args != nil {
			args = pre.Args
		}
		if ctx.Err() != nil {
			return canceled(name)
		}
	}
	if refusal, ok := env.gateHooked(ctx, t, name, args, pre); !ok {
		return refusal
	}
	if env.BeforeRun != nil && t.Needs() != ReadOnly {
		env.BeforeRun(ctx, name, args)
	}
	res := t.Run(ctx, env, args)
	if !res.Paged {
		res.Content = Cap(res.Content, env.OutputCap)
	}
	if pre.Context != "" {
		res.Content = joinOutput(res.Content, pre.Context)
	}
	if env.Hooks != nil {
		res = env.Hooks.PostToolUse(ctx, name, args, res)
	}
	return res
}

// Cap cuts s to at most limit bytes (DefaultOutputCap when limit is 0) on a
// UTF-8 boundary and says so in the text, so the model knows it saw a part.
func Cap(s string, limit int) string {
	if limit <= 0 {
		limit = DefaultOutputCap
	}
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	var b strings.Builder
	b.WriteString(s[:cut])
	fmt.Fprintf(&b, "\n[output truncated: showing %d of %d bytes]", cut, len(s))
	return b.String()
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
