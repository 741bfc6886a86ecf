// Package harness is reins's composition root: it turns configuration, a
// model spec and a working directory into a runnable session — an agent
// loop with its model adapter, retry policy, tools and session log. The CLI
// commands, the SDK runtime, the ACP agent and in-process subagents all
// start sessions through it, so they cannot drift apart.
package harness

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/catalog"
	"github.com/reinsdev/reins/internal/commands"
	"github.com/reinsdev/reins/internal/compact"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/hooks"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/llm/retry"
	"github.com/reinsdev/reins/internal/mcp"
	"github.com/reinsdev/reins/internal/modelres"
	"github.com/reinsdev/reins/internal/models"
	"github.com/reinsdev/reins/internal/private"
	"github.com/reinsdev/reins/internal/rules"
	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/skills"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/telemetry"
	"github.com/reinsdev/reins/internal/todo"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/internal/trust"
	"github.com/reinsdev/reins/internal/webfetch"
)

// Harness holds what every session of one reins process shares.
type Harness struct {
	Home   string // REINS_HOME
	Cwd    string // absolute workspace
	Config *config.Config
	Agents *config.Agents
	// Warnings are agent-definition problems that did not stop loading.
	Warnings []config.Warning
	// Trusted says the user trusts Cwd (internal/trust): only then do the
	// project's files (.reins/config.yaml, .reins/agents, .claude/agents)
	// take effect. A feature that reads another project file (an MCP
	// server list, instructions, hooks) must read it only when Trusted,
	// honour it only when the gate does (trust.Gate.Honour, with the
	// bytes it read; its kind listed in internal/trust's pin.go), and add
	// it to config.ProjectFiles so that Ignored names it.
	Trusted bool
	// Hooks are the user's hooks (internal/hooks, docs/hooks.md), read
	// once at the start: every session of this harness runs them.
	Hooks *hooks.Set
	// Instructions is the marked project-instructions section (AGENTS.md,
	// else CLAUDE.md, from the workspace up to the repository root, only
	// in trusted folders) appended to every in-process session's system
	// prompt unless its agent opts out; "" when there are none.
	Instructions string
	// Skills are the Agent Skills of Cwd (internal/skills): the user's and,
	// when trusted and pinned, the project's; SkillWarnings the skills
	// skipped, one line each.
	Skills        *skills.Set
	SkillWarnings []skills.Warning
	// Commands are the custom slash commands of Cwd (internal/commands),
	// the user's and a trusted project's as pinned; CommandWarnings the
	// files skipped.
	Commands        *commands.Set
	CommandWarnings []commands.Warning
	// gate is the start's trust gate: a child's own workspace (a worktree)
	// reads its skills through it.
	gate *trust.Gate
	// Version is the reins version the session headers record.
	Version string
	// Ignored are the project files of an untrusted Cwd that were not read,
	// relative to Cwd; empty when Trusted.
	Ignored []string
	Getenv  func(string) string
	// HTTP is the client adapters use; nil means a default one.
	HTTP *http.Client
	// Now stamps session events; time.Now when nil.
	Now func() time.Time
	// Observe, when set, receives every event of every session this
	// harness creates, children included (the SDK runtime streams them).
	Observe func(session.Header, session.Event)
	// ObserveRemote, when set, receives the events of every out-of-process
	// child (acp, pi, reins) of every session, mapped to the same
	// vocabulary (subagent.Tap): with Observe, a live view of the whole
	// tree (`reins run --stream-json`). It must not block.
	ObserveRemote func(session.Header, session.Event)
	// ChildNotice, when set, shows the user one line about a child (why
	// it died while it started: subagent.Manager.Notify); never the
	// model's. `reins run` writes it on stderr.
	ChildNotice func(line string)
	// Sandbox is the base policy of every process a session starts: the
	// config's `sandbox` and the --sandbox flag. Sessions add their mode.
	Sandbox sandbox.Policy

	redactOnce sync.Once
	redact     sandbox.Redactor
	// noticeTo receives SandboxNotice's line; doctor probes the machine
	// (sandbox.Doctor; tests replace it).
	noticeMu   sync.Mutex
	noticeTo   io.Writer
	noticeOnce sync.Once
	doctor     func() sandbox.Report
	// WriteThrough makes every session of this harness write each event
	// before observers see it (session.Options.WriteThrough): set when the
	// observers report to another process, which must never be told more
	// than the logs hold.
	WriteThrough bool
	// MCP holds the configured MCP servers (docs/mcp.md); each starts
	// when the first session that may use it is made, and Close tears
	// them all down.
	MCP *mcp.Manager
	// Engine, when set, runs the children of this harness's sessions
	// (subagents.engine other than local, docs/engine.md).
	Engine subagent.Engine
	// Effort is --effort (or the --agent's `effort`), the reasoning effort
	// of the models this harness resolves; "" takes config `effort`.
	Effort llm.Effort
	// Wire is --wire: the wire of every HTTP model this harness resolves,
	// over the config's and the provider's (config.WireFor); "" for those.
	Wire string
	// Telemetry exports the traces of every session (telemetry.go); nil
	// when no endpoint is configured.
	Telemetry *telemetry.Telemetry

	logOnce sync.Once
	logMu   sync.Mutex
	hostLog *hostLog
	// logClosed: Close ran; Logf writes nothing from then on.
	logClosed bool
}

// ReinsVersion is the version of the running reins (set by the reins
// binary at start); every Harness records it in the session headers.
var ReinsVersion = ""

// Options are the inputs of New.
type Options struct {
	Home       string // empty: $REINS_HOME, else ~/.reins
	Cwd        string // empty: the process's working directory
	ConfigFile string // --config
	Getenv     func(string) string
	// Sandbox is --sandbox: "on", "off", or empty for the config's choice.
	Sandbox string
	// Effort is --effort (Harness.Effort).
	Effort llm.Effort
	// Wire is --wire (Harness.Wire).
	Wire string
	// Network is --network: "on", "off", or empty for the config's
	// sandbox.network.
	Network string
}

// ConfigError marks an error in the user's configuration or flags: the CLI
// exits 2 on it without running anything.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// New loads configuration and agent definitions.
func New(opts Options) (*Harness, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	home := opts.Home
	if home == "" {
		home = DefaultHome(getenv)
	}
	// Before the config: its model may be a short name the catalogue resolves.
	catalog.UseCacheFile(CatalogFile(home))
	cwd := opts.Cwd
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return nil, &ConfigError{fmt.Errorf("--cwd %s: not a directory", cwd)}
	}
	// The one place that decides whether the workspace's own files count:
	// every loader takes the answer, and a damaged trust list stops reins
	// rather than trusting or distrusting silently. The gate holds the
	// list as it is now and checks every project file read against the
	// user's pins (trust.Gate): a file added or changed since the user
	// approved the folder stops reins (below), whichever loader read it.
	gate, err := trust.New(home).Gate(cwd)
	if err != nil {
		return nil, &ConfigError{fmt.Errorf("checking folder trust: %w", err)}
	}
	trusted := gate.Trusted(cwd)
	lo := config.LoadOptions{Home: home, Cwd: cwd, Trusted: trusted, Extra: opts.ConfigFile, Honour: gate.Honour}
	cfg, err := config.Load(lo)
	if err != nil {
		return nil, &ConfigError{err}
	}
	agents, warnings, err := config.LoadAgents(lo, cfg)
	if err != nil {
		return nil, &ConfigError{err}
	}
	if err := gate.Err(); err != nil {
		return nil, &ConfigError{err} // before any check of what was loaded without it
	}
	if err := checkWritable(agents, cfg.Sandbox.Writable, home); err != nil {
		return nil, &ConfigError{err}
	}
	pol, err := sandboxPolicy(cfg, home, opts.Network)
	if err != nil {
		return nil, &ConfigError{err}
	}
	switch opts.Sandbox {
	case "":
	case "on":
		pol.Off = false
	case "off":
		pol.Off = true
	default:
		return nil, &ConfigError{fmt.Errorf("--sandbox: want on or off, got %q", opts.Sandbox)}
	}
	h := &Harness{Home: home, Cwd: cwd, Config: cfg, Agents: agents, Warnings: warnings, Getenv: getenv, Trusted: trusted, Sandbox: pol, Effort: opts.Effort, Wire: opts.Wire}
	h.Sandbox.Starting = h.sandboxStarting
	if !trusted {
		lo.InstructionFiles = &cfg.InstructionFiles
		h.Ignored = config.ProjectFiles(lo)
	}
	h.Instructions = loadInstructions(gate, cwd, cfg.InstructionFiles)
	h.gate = gate
	h.Skills, h.SkillWarnings = skills.Discover(h.skillOptions(cwd))
	h.Commands, h.CommandWarnings = commands.Discover(commands.Options(h.skillOptions(cwd)))
	if h.Hooks, err = loadHooks(cfg, cwd, trusted, gate, getenv); err != nil {
		return nil, &ConfigError{err}
	}
	if err := gate.Err(); err != nil {
		return nil, &ConfigError{err}
	}
	h.Version = ReinsVersion
	h.MCP = h.newMCP(cfg.MCPServers)
	if err := h.startTelemetry(); err != nil {
		return nil, err
	}
	return h, nil
}

// maxNamed is how many ignored files the untrusted notice names; a
// repository with hundreds of agent files still gets one short line.
const maxNamed = 5

// UntrustedNotice is the one line that tells the user which project files
// of an untrusted workspace were ignored and how to trust it, or "" when
// nothing was ignored. Paths are quoted (trust.Quote) because file names
// are the repository author's; the suggested command is safe to paste.
func (h *Harness) UntrustedNotice() string {
	if len(h.Ignored) == 0 {
		return ""
	}
	names := make([]string, 0, maxNamed+1)
	for i, f := range h.Ignored {
		if i == maxNamed {
			names = append(names, fmt.Sprintf("and %d more", len(h.Ignored)-maxNamed))
			break
		}
		names = append(names, trust.Quote(f))
	}
	return fmt.Sprintf("untrusted folder %s: ignoring %s; to use them run: reins trust %s",
		trust.Quote(h.Cwd), strings.Join(names, ", "), trust.ShellArg(h.Cwd))
}

// checkWritable refuses an agent file whose sandbox.writable would open
// the whole disk or reins's own home (its config and trusted-folder list)
// to the child: writable paths are for a CLI's own state directories.
func checkWritable(agents *config.Agents, fromConfig []string, home string) error {
	absHome, err := filepath.Abs(home)
	if err != nil {
		return err
	}
	lexical := func(w, home string) bool {
		rel, err := filepath.Rel(w, home)
		return w == "/" || (err == nil && rel != ".." && !strings.HasPrefix(rel, "../"))
	}
	// A writable path is judged after its symlinks are resolved too: a
	// link to $HOME names a harmless path and opens reins's home.
	realHome, herr := filepath.EvalSymlinks(absHome)
	opens := func(w string) bool {
		if lexical(w, absHome) {
			return true
		}
		rw, err := filepath.EvalSymlinks(w)
		return err == nil && herr == nil && lexical(rw, realHome)
	}
	for _, w := range fromConfig {
		if opens(w) {
			return fmt.Errorf("config sandbox.writable %s would make reins's home %s writable; name the directories commands need instead",
				trust.Quote(w), trust.Quote(absHome))
		}
	}
	for _, ag := range agents.List() {
		for _, w := range ag.Writable {
			if opens(w) {
				return fmt.Errorf("agent %s (%s): sandbox.writable %s would make reins's home %s writable; name the agent's own state directories instead",
					ag.Name, trust.Quote(ag.Source), trust.Quote(w), trust.Quote(absHome))
			}
		}
	}
	return nil
}

// DefaultHome is $REINS_HOME, else ~/.reins.
func DefaultHome(getenv func(string) string) string { return config.Home(getenv) }

// SessionsDir is where session directories live.
func (h *Harness) SessionsDir() string { return filepath.Join(h.Home, "sessions") }

// Logf writes to the host log ($REINS_HOME/logs/reins.log): the one place
// raw provider and child error text may go. It never fails the caller.
// The log is bounded (hostlog.go): each line is cut at MaxHostLogLine, the
// file rotates at MaxHostLogBytes keeping one reins.log.1, and what is
// cut or dropped is counted in the log itself.
func (h *Harness) Logf(format string, args ...any) {
	h.logOnce.Do(func() {
		h.logMu.Lock()
		defer h.logMu.Unlock()
		if !h.logClosed {
			h.hostLog = &hostLog{path: filepath.Join(h.Home, "logs", "reins.log")}
		}
	})
	msg := fmt.Sprintf(format, args...)
	h.logMu.Lock()
	defer h.logMu.Unlock()
	if h.logClosed || h.hostLog == nil {
		return
	}
	h.hostLog.write(time.Now().UTC().Format(time.RFC3339Nano), msg)
}

// Close tears down the MCP servers (their last stderr still reaches the
// host log), then releases the host log.
func (h *Harness) Close() error {
	h.shutdownTelemetry()
	mcpErr := h.MCP.Close()
	if mcpErr != nil {
		h.Logf("mcp: teardown: %v", mcpErr)
	}
	h.logMu.Lock()
	defer h.logMu.Unlock()
	h.logClosed = true
	if h.hostLog != nil {
		err := h.hostLog.close()
		h.hostLog = nil
		return err
	}
	return nil
}

// Model is a resolved model: its adapter and what the loop records
// (internal/modelres).
type Model = modelres.Model

// ProviderDetail is what a human is told, after the fixed failure code,
// about a turn that ended with failure on model m: "; the provider said
// (MESSAGE); details in HOSTLOG", or "" when the failure is not a
// provider's error answer or m has no message. The text is for the human
// only (reins run's stderr, the editor's error message in reins acp, the
// error data of reins sdk): it never enters the model's context, a
// diagnostic, the session log or an event.
func (h *Harness) ProviderDetail(failure *session.Failure, m *Model) string {
	if failure == nil || m == nil || !modelres.ProviderAnswered(failure.Code) {
		return ""
	}
	pm := m.ProviderMessage()
	if pm == "" {
		return ""
	}
	return fmt.Sprintf("; the provider said (%s); details in %s", pm, h.HostLogPath())
}

// HostLogPath is the host log's file (Logf).
func (h *Harness) HostLogPath() string { return filepath.Join(h.Home, "logs", "reins.log") }

// ResolveModel builds the adapter for spec (PROVIDER/MODEL or an alias;
// empty means the configured default). baseURL is the --base-url flag.
func (h *Harness) ResolveModel(spec, baseURL string) (*Model, error) {
	return h.resolveModel(spec, baseURL, cmp.Or(h.Effort, h.Config.Effort))
}

func (h *Harness) resolveModel(spec, baseURL string, effort llm.Effort) (*Model, error) {
	if spec == "" {
		spec, _ = h.DefaultModel()
	}
	m, err := modelres.Resolve(h.Config, spec, modelres.Options{
		BaseURL: baseURL, Effort: effort, Wire: h.Wire, Getenv: h.Getenv, HTTP: h.HTTP, Logf: h.Logf, MockScript: h.mockScript,
	})
	if err != nil {
		return nil, &ConfigError{err}
	}
	return m, nil
}

// PlaceholderModel is spec's model (resolved as far as the config allows)
// with an adapter that fails every request: for a session that must exist
// before its model can work, such as an ACP session whose provider has no
// key yet. Callers answer prompts themselves and never run a turn on it.
func (h *Harness) PlaceholderModel(spec string) *Model {
	if spec == "" {
		spec, _ = h.DefaultModel()
	}
	return modelres.Placeholder(h.Config, spec)
}

// mockScript picks the script of the mock provider: $REINS_MOCK_SCRIPT when
// set, the demo script for mock/demo, else the echo script.
func (h *Harness) mockScript(name string) (*mock.Script, error) {
	if p := h.Getenv("REINS_MOCK_SCRIPT"); p != "" {
		return mock.Load(p)
	}
	if name == "demo" {
		return DemoScript(), nil
	}
	return mock.DefaultScript(), nil
}

// SessionOptions configure one session.
type SessionOptions struct {
	// Trace is the trace context the session continues (a child's run
	// span in its parent); empty for a root session.
	Trace      subagent.TraceContext
	Model      *Model
	System     string // empty: the default system prompt
	MaxSteps   int
	MaxTokens  int
	Permission tool.Permission
	// Tools is an allowlist of tool names; nil means all built-ins.
	Tools []string
	// ToolProfile is the agent file's `tools: profile NAME`; empty picks
	// the profile from the model (tool.ProfileFor).
	ToolProfile tool.Profile
	// Parent and Depth describe a child session.
	Parent string
	Depth  int
	// Resume names an existing session to continue.
	Resume  string
	Observe func(session.Header, session.Event)
	// Approve is the session's approval hook (tool.Env.Approve); children
	// of a session that asks get tool.RejectAll, unless AskChild is set.
	Approve func(ctx context.Context, name string, args json.RawMessage) bool
	// AskChild, when set, is how an in-process child of this session (and
	// its children, at any depth) asks: the interactive terminal asks its
	// user, naming the child (child is "AGENT: LABEL"), under the
	// parent's mode. Nil: a child of a session that asks is refused what
	// would need asking (tool.RejectAll) — headless runs, reins acp,
	// batch and Temporal children never ask a human.
	AskChild func(ctx context.Context, child, name string, args json.RawMessage) tool.Answer
	// Ask is the approval hook whose refusal may carry an instruction
	// for the model (tool.Env.Ask, the interactive terminal's); it is
	// asked instead of Approve.
	Ask func(ctx context.Context, name string, args json.RawMessage) tool.Answer
	// AskDomain, when set, asks the user whether a process of this session
	// may reach host, outside sandbox.allowDomains, for the rest of the
	// session (the interactive terminal's "allow HOST for this session?";
	// sandbox.go). A child gets it only through ChildQuestions.
	AskDomain func(ctx context.Context, host string) bool
	// AskGitWritable is the session's tool.Env.AskGitWritable (its own
	// bash calls only; a child gets it only through ChildQuestions): the
	// interactive terminal asks whether a command that failed on the
	// read-only .git may run once more with .git writable.
	AskGitWritable func(ctx context.Context, command string) bool
	// ChildQuestions, when set, is where the in-process children of this
	// session (at any depth) put the questions a user at the terminal
	// would get and a headless child is refused: a network domain outside
	// sandbox.allowDomains and a run again with .git writable. Each names
	// the label of this session's direct child the question came
	// through, so that the one serving the session knows which of its
	// calls asks (reins mcp serve: its MCP client, by elicitation). Nil:
	// children are refused those questions, as ever.
	ChildQuestions ChildQuestions
	// via is the ChildQuestions of the session's nearest ancestor that
	// has them, with the label of that ancestor's child this session
	// descends from (newChild).
	via *askVia
	// BeforeRun is the session's tool.Env.BeforeRun (its own calls only,
	// not its children's): the terminal and reins run's progress compute
	// there the diff a file tool's call makes.
	BeforeRun func(ctx context.Context, name string, args json.RawMessage)
	// ruleParent is the parent session's permission rules (rules.go).
	ruleParent *rules.Set
	// Agent names the agent definition the session runs as (empty: the
	// built-in agent); the log's header records it.
	Agent string
	// NoInstructions leaves the project instructions out of the system
	// prompt (an agent file's `instructions: false`).
	NoInstructions bool
	// Budget is the delegation tree's budget the session and its children
	// count against (nil: none).
	Budget *budget.Budget
	// MCPServers name MCP servers whose every tool the session gets (an
	// agent file's `mcpServers`); see mcpRule for the whole rule.
	MCPServers []string
	// mcpWithin is the parent's MCP rule: a child never has an MCP tool
	// its parent may not have.
	mcpWithin func(string) bool
	// Origin is the header's origin of a session without a parent (a
	// child's is always subagent): session.OriginBatch for `reins batch`.
	Origin string
	// Workspace is the session's workspace when it is not the harness's
	// Cwd: an in-process child with `isolation: worktree` works in its
	// own worktree (subagent.Request.Cwd). Empty: Cwd.
	Workspace string
	// ForkOf names the session a new one forks (Harness.Fork).
	ForkOf string
	// Skills are the only skills the session sees (an agent file's
	// `skills:`); nil: every skill of its workspace.
	Skills []string
}

// ChildQuestions are the questions a session's children put to whoever
// serves the session (SessionOptions.ChildQuestions). A false answer, or
// none before ctx ends, refuses.
type ChildQuestions interface {
	// Domain asks whether the processes of the child may reach host for
	// the rest of its session.
	Domain(ctx context.Context, label, host string) bool
	// GitWritable asks whether command, which failed on the read-only
	// .git, may run once more with .git writable.
	GitWritable(ctx context.Context, label, command string) bool
}

// askVia is a descendant's route to its ancestor's ChildQuestions.
type askVia struct {
	q     ChildQuestions
	label string
}

// Session is a runnable session.
type Session struct {
	*agent.Agent
	Log *session.Log
	// Subagents runs this session's children and background jobs.
	Subagents *subagent.Manager
	Resumed   *session.Loaded
	// questions serves AskDomain to the session's proxies (sandbox.go).
	questions *sandbox.Questions
	// Skills serves the session's skills (the skill tool, /NAME); nil
	// when it has none.
	Skills *skills.Loader
	// Narrowing is the allowed-tools of a skill or command in force for
	// one turn (tool.Narrowing).
	Narrowing *tool.Narrowing
	// Commands are the custom commands of the session's workspace.
	Commands *commands.Set
	// Hooks runs the user's hooks for this session (hooks.go); nil when
	// none is configured.
	Hooks  *hooks.Runner
	hookWG sync.WaitGroup
	endMu  sync.Once
}

// Close cancels and waits for the session's children, then closes its
// log. It is idempotent.
func (s *Session) Close() error {
	s.endMu.Do(s.endHooks)
	s.Subagents.Close()
	if s.Agent != nil && s.Agent.Env != nil && s.Agent.Env.Shells != nil {
		s.Agent.Env.Shells.Close() // background bash commands end with the session
	}
	if s.questions != nil {
		s.questions.Close()
	}
	return s.Log.Close()
}

// SetBudget makes b the budget of the session's next turns and of the
// children they start (nil: none); it is called between runs, never while
// one runs (reins acp gives each prompt a budget of its own).
func (s *Session) SetBudget(b *budget.Budget) {
	s.Agent.Budget, s.Subagents.Budget = b, b
}

// Run runs a turn for prompt and keeps the session alive until it is idle
// and no background job runs (subagent.RunUntilIdle). The result's usage
// includes every child's.
func (s *Session) Run(ctx context.Context, prompt string) agent.TurnResult {
	res := subagent.RunUntilIdle(ctx, s.Agent, s.Subagents, prompt)
	res.Usage = res.Usage.Add(s.Subagents.ChildUsage())
	return res
}

// ErrNoSession is returned when --resume names no session.
var ErrNoSession = errors.New("no such session")

// NewSession creates (or reopens) a session log and the agent that runs it.
func (h *Harness) NewSession(o SessionOptions) (*Session, error) {
	ws := cmp.Or(o.Workspace, h.Cwd) // an isolated child's worktree, else the harness's
	perm := o.Permission
	if perm == "" {
		perm = tool.WorkspaceWrite
	}
	ruleSet, err := h.sessionRules(o, ws)
	if err != nil {
		return nil, &ConfigError{err}
	}
	s := &Session{}
	if err := h.openLog(s, o, ws); err != nil {
		return nil, err
	}
	s.Narrowing = &tool.Narrowing{Turn: s.Log.NextTurn}
	s.Commands = h.commandsFor(ws)
	mgr := h.manager(s, o, ws, perm, ruleSet)
	reg := h.tools(s, o, ws, mgr)
	system, pol, readRoots := h.withSkills(s, h.systemPrompt(o, ws), h.sessionSandbox(s, o))
	s.Agent = &agent.Agent{
		System: system,
		Tools:  reg, Env: &tool.Env{Workspace: ws, Permission: perm, Approve: o.Approve, Ask: o.Ask, Rules: ruleSet, Sandbox: pol, Shells: tool.NewShells(), Protect: h.Config.Sandbox.Protect, BeforeRun: o.BeforeRun, AskGitWritable: o.AskGitWritable, ReadRoots: readRoots}, Log: s.Log,
		MaxSteps: o.MaxSteps, MaxTokens: o.MaxTokens,
		Inbox: mgr, Budget: o.Budget, Redact: h.redactor().Redact,
	}
	s.Agent.Env.Narrow = s.Narrowing.Check
	h.attachHooks(s, o, ws, perm)
	h.UseModel(s.Agent, o.Model)
	h.traceSession(s, o.Agent, o.Trace)
	if err := s.loadHistory(); err != nil {
		return nil, err
	}
	return s, nil
}

// openLog creates s's log (or reopens the one o.Resume names) in the
// sessions folder, which it makes the owner's only (internal/private)
// first.
func (h *Harness) openLog(s *Session, o SessionOptions, ws string) error {
	now := h.Now
	if now == nil {
		now = time.Now
	}
	observe := o.Observe
	if h.Observe != nil {
		own := o.Observe
		observe = func(hd session.Header, e session.Event) {
			if own != nil {
				own(hd, e)
			}
			h.Observe(hd, e)
		}
	}
	lopts := session.Options{Now: now, Observe: observe, WriteThrough: h.WriteThrough}
	// $REINS_HOME and its sessions folder are the owner's only
	// (internal/private), made so or tightened here, before a log is
	// created or resumed.
	if err := private.Home(h.Home); err != nil {
		return err
	}
	if err := private.MkdirAll(h.SessionsDir()); err != nil {
		return err
	}
	if o.Resume != "" {
		// Any unique prefix of an id names the session.
		id, err := session.Resolve(h.SessionsDir(), o.Resume)
		if err != nil {
			if errors.Is(err, session.ErrNotFound) {
				err = ErrNoSession
			}
			return &ConfigError{fmt.Errorf("--resume %s: %w", o.Resume, err)}
		}
		path := filepath.Join(h.SessionsDir(), id, session.FileName)
		l, ld, err := session.Reopen(path, lopts)
		if err != nil {
			return err
		}
		s.Log, s.Resumed = l, ld
		return nil
	}
	hd := session.Header{
		ID: session.NewID(now()), CreatedAt: now().UTC(), Cwd: ws,
		ParentSession: o.Parent, DelegationDepth: o.Depth,
		Agent: o.Agent, ReinsVersion: h.Version, ForkOf: o.ForkOf,
	}
	if o.Model != nil {
		hd.Model, hd.Provider = o.Model.Name, o.Model.Provider
	}
	hd.Origin = o.Origin
	if o.Parent != "" {
		hd.Origin = session.OriginSubagent
	}
	l, err := session.Create(h.SessionsDir(), hd, lopts)
	if err != nil {
		return err
	}
	s.Log = l
	return nil
}

// manager is s's delegation runtime: its children's limits, placement and
// providers, within the session's rules.
func (h *Harness) manager(s *Session, o SessionOptions, ws string, perm tool.Permission, ruleSet *rules.Set) *subagent.Manager {
	mgr := &subagent.Manager{
		Agents: h.Agents, Limits: h.Config.Subagents, Log: s.Log, Depth: s.Log.Header().DelegationDepth,
		Cwd: ws, Permission: perm, Logf: h.Logf, Sandbox: h.Sandbox, Budget: o.Budget,
		ObserveRemote: h.ObserveRemote, Engine: h.Engine, Notify: h.ChildNotice,
	}
	po := o
	po.mcpWithin = mcpRule(o) // the rule the children's own rules sit within
	po.ruleParent = ruleSet
	mgr.Providers = h.providers(po)
	mgr.MaxSteps, mgr.MaxTokens = o.MaxSteps, o.MaxTokens
	s.Subagents = mgr
	return mgr
}

// tools is the session's tool registry: the built-ins, delegation's, the
// todo list and webfetch, cut by the profile or the allowlist, then the
// MCP servers' tools the session may use and the skill tool when the
// workspace has skills.
func (h *Harness) tools(s *Session, o SessionOptions, ws string, mgr *subagent.Manager) *tool.Registry {
	reg := tool.NewRegistry(append(tool.Builtins(), mgr.Tools()...)...)
	reg.Add(todo.New()) // one list per session
	reg.Add(webfetch.New())
	if o.Tools == nil || o.ToolProfile != "" {
		// An explicit allowlist names its tools itself; the profile picks
		// the shapes otherwise (or when an agent file asks for one).
		reg = sessionProfile(o).Filter(reg)
	}
	if o.Tools != nil {
		// subagent brings subagent_output and worktree along.
		reg, _ = reg.Subset(subagent.Implied(o.Tools))
	}
	for _, t := range h.mcpTools(o, mcpRule(o)) {
		reg.Add(t)
	}
	skillSet := h.skillsFor(ws).Narrow(o.Skills)
	if skillSet.Len() > 0 && (o.Tools == nil || slices.Contains(o.Tools, "skill")) {
		s.Skills = &skills.Loader{Set: skillSet, Narrowing: s.Narrowing, Record: func(ld skills.Load) {
			_, _ = s.Log.Append(session.TypeSkillLoad, session.SkillLoad{
				Name: ld.Skill.Name, Origin: string(ld.Skill.Origin), Path: ld.Skill.File, By: ld.By, AllowedTools: ld.Skill.AllowedTools,
			})
		}}
		reg.Add(s.Skills.Tool())
	}
	if o.Tools != nil {
		// The children's tools are cut from what this session really
		// has (subagent.ChildTools); nil leaves them every tool.
		mgr.ToolNames = reg.Names()
	}
	return reg
}

// systemPrompt is o's system prompt (the default one for the workspace)
// with the project's instructions unless the agent opts out.
func (h *Harness) systemPrompt(o SessionOptions, ws string) string {
	system := o.System
	if system == "" {
		system = DefaultSystemPrompt(ws)
	}
	if !o.NoInstructions {
		system += h.Instructions
	}
	return system
}

// withSkills adds the session's skills to its system prompt (names and
// descriptions only) and makes their folders readable, never writable, by
// the session's processes and its read tool, wherever they lie.
func (h *Harness) withSkills(s *Session, system string, pol sandbox.Policy) (string, sandbox.Policy, []string) {
	if s.Skills == nil {
		return system, pol, nil
	}
	readRoots := s.Skills.Set.Dirs()
	pol.Readable = append(slices.Clip(pol.Readable), readRoots...)
	return system + skills.Catalog(s.Skills.Set), pol, readRoots
}

// loadHistory gives a resumed session's agent its history; on failure the
// session is closed.
func (s *Session) loadHistory() error {
	if s.Resumed == nil {
		return nil
	}
	if err := s.Agent.LoadHistory(s.Resumed.Events); err != nil {
		if s.questions != nil {
			s.questions.Close()
		}
		s.Log.Close()
		return err
	}
	return nil
}

// UseModel points a at model m with everything that depends on the model:
// its retry policy, its price (Cost) and the window it compacts against.
// A session is made with it, and the interactive /model switches with it
// between turns, so no model-dependent field is left behind.
func (h *Harness) UseModel(a *agent.Agent, m *Model) {
	a.Model, a.ModelName, a.Provider = m.Model, m.Name, m.Provider
	a.Retry = &retry.Executor{Policy: m.Retry}
	a.Cost = h.Cost(m)
	a.Window, a.MaxOutput, a.Context = h.contextOf(m)
}

// contextOf is what a session on m compacts against: its own model's
// window and output limit (internal/models, config `models:` over the
// built-in table), so a child never compacts against its parent's, and
// config `context:`.
func (h *Harness) contextOf(m *Model) (window, maxOutput int, c compact.Settings) {
	cfg := h.Config
	if cfg == nil {
		cfg = config.Default()
	}
	info := models.Lookup(cfg.Models, m.Provider+"/"+m.Name)
	return info.ContextWindow, info.MaxOutput, compact.Settings(cfg.Context)
}

// childFactory builds the in-process children of a session made with
// parent: the agent definition's model (a same-provider child inherits the
// parent's base URL) and system prompt; the request's tools (the
// intersection of the parent's and the agent definition's), limits, cwd
// and permission mode, which the parent's manager set (subagent.Request).
func (h *Harness) childFactory(parent SessionOptions) func(subagent.Request, func(session.Header, session.Event)) (*subagent.Child, error) {
	return func(req subagent.Request, observe func(session.Header, session.Event)) (*subagent.Child, error) {
		m := parent.Model
		if spec := req.Agent.Model; spec != "" {
			prov, _, err := h.Config.ResolveModel(spec)
			if err != nil {
				return nil, err
			}
			base := ""
			if prov == parent.Model.Provider {
				base = parent.Model.BaseURL
			}
			if m, err = h.resolveModel(spec, base, cmp.Or(req.Agent.Effort, h.Effort, h.Config.Effort)); err != nil {
				return nil, err
			}
		} else if e := req.Agent.Effort; e != "" && e != m.Effort {
			// The agent file's effort on the parent's model.
			var err error
			if m, err = h.resolveModel(m.Provider+"/"+m.Name, m.BaseURL, e); err != nil {
				return nil, err
			}
		}
		var (
			approve func(context.Context, string, json.RawMessage) bool
			ask     func(context.Context, string, json.RawMessage) tool.Answer
		)
		switch {
		case parent.AskChild != nil:
			// The interactive terminal: the user is asked, naming the child.
			who, askChild := ChildName(req.Agent.Name, req.Label), parent.AskChild
			ask = func(ctx context.Context, name string, args json.RawMessage) tool.Answer {
				return askChild(ctx, who, name, args)
			}
		case parent.Approve != nil || parent.Ask != nil:
			approve = tool.RejectAll // a child never asks a human
		}
		via := parent.via
		if parent.ChildQuestions != nil {
			via = &askVia{q: parent.ChildQuestions, label: req.Label}
		}
		var (
			askDomain func(context.Context, string) bool
			askGit    func(context.Context, string) bool
		)
		if via != nil {
			askDomain = func(ctx context.Context, host string) bool { return via.q.Domain(ctx, via.label, host) }
			askGit = func(ctx context.Context, command string) bool { return via.q.GitWritable(ctx, via.label, command) }
		}
		cs, err := h.NewSession(SessionOptions{
			Ask: ask, AskChild: parent.AskChild, via: via, AskDomain: askDomain, AskGitWritable: askGit,
			Model: m, System: req.Agent.SystemPrompt, MaxSteps: req.MaxSteps, MaxTokens: req.MaxTokens,
			Permission: req.Permission, Tools: childTools(req.Tools, req.Agent), Parent: req.ParentSession, Depth: req.Depth, Observe: observe,
			Approve: approve, NoInstructions: req.Agent.NoInstructions, Agent: req.Agent.Name,
			Budget:     req.Budget,
			Resume:     req.ChildSession, // a continuation after its idle teardown
			Workspace:  isolatedCwd(h.Cwd, req.Cwd),
			MCPServers: req.Agent.MCPServers, mcpWithin: parent.mcpWithin, ruleParent: parent.ruleParent,
			Skills: narrowSkills(parent.Skills, req.Agent.Skills),
			Trace:  req.Trace,
		})
		if err != nil {
			return nil, err
		}
		if len(req.Fork) > 0 {
			if err := startFork(cs, req.Fork); err != nil {
				cs.Close()
				return nil, err
			}
		}
		return &subagent.Child{Agent: cs.Agent, Log: cs.Log, Subagents: cs.Subagents, Close: cs.Close}, nil
	}
}

// Cost prices usage of model m at the price table (internal/models:
// the built-in prices, config `models:` overrides); nil when m is nil.
func (h *Harness) Cost(m *Model) func(llm.Usage) *float64 {
	if m == nil {
		return nil
	}
	price := models.Lookup(h.Config.Models, m.Provider+"/"+m.Name).Price
	return func(u llm.Usage) *float64 { return models.Cost(price, u) }
}

// ChildName is how a question a child asks names it: its agent and the
// description its parent gave the call ("general: review the docs").
func ChildName(agent, label string) string {
	if agent == "" {
		agent = "general"
	}
	if label == "" {
		return agent
	}
	return agent + ": " + label
}

// startFork writes a fork child's copy of its parent's conversation into
// the child's own log, as its turn 0, and loads it as the child's history:
// the fork's first request carries the parent's conversation, and a
// continuation after its idle teardown resumes it from the log alone.
func startFork(cs *Session, events []session.Event) error {
	if _, err := cs.Log.Append(session.TypeTurnStart, session.TurnStart{Turn: 0}); err != nil {
		return err
	}
	written, err := cs.Log.AppendCopy(events)
	if err != nil {
		return err
	}
	if _, err := cs.Log.Append(session.TypeTurnEnd, session.TurnEnd{Turn: 0, Reason: session.ReasonCompleted}); err != nil {
		return err
	}
	return cs.Agent.LoadHistory(written)
}

// DefaultSystemPrompt is the system prompt of a session that names none:
// the built-in agent's. It is kept short (about 330 tokens, docs/agents.md);
// the project's own instructions follow it (Harness.Instructions).
func DefaultSystemPrompt(cwd string) string {
	return "You are reins, a coding agent working in the workspace " + cwd + ".\n\n" +
		"How to work:\n" +
		"- Understand before you change: use ls, glob and grep to find the relevant code, and read to see it. Paths are relative to the workspace.\n" +
		"- Make focused changes with edit (exact old_string, enough context to be unique) or write for new files. Do not rewrite what you were not asked to change.\n" +
		"- Use bash to build, test and inspect; check your work by running it rather than assuming. Prefer short, non-interactive commands.\n" +
		"- A refused tool call (permission mode) is an answer, not a failure to retry: work within it or say what you need.\n\n" +
		"Delegating:\n" +
		"- Use subagent for a self-contained piece of work whose details you do not need in your own context: a broad search, a review, an independent change. Give the child a complete task: it sees none of this conversation.\n" +
		"- Run independent children in the background and collect them with job_output; do not delegate what one or two tool calls would do.\n" +
		"- A child's result says how it ended; check it before you rely on it.\n\n" +
		"Reporting:\n" +
		"- When the task is done, end with a short plain answer: what you found or changed (files, commands run and their results), and anything left undone or uncertain. If you could not finish, say so and why.\n" +
		"- Do not claim a test passed or a change works unless you ran it."
}

// sessionProfile is the tool profile of a session: the agent file's, else
// the one its model's maker trained it on.
func sessionProfile(o SessionOptions) tool.Profile {
	provider, name := "", ""
	if o.Model != nil {
		provider, name = o.Model.Provider, o.Model.Name
	}
	return tool.ProfileFor(o.ToolProfile, provider, name)
}
