package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/reinsdev/reins/internal/frontmatter"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/mcpspec"
	"github.com/reinsdev/reins/internal/rules"
	"github.com/reinsdev/reins/internal/smallfile"
)

// Agent providers (docs/subagents.md).
const (
	ProviderInProcess = "inprocess"
	ProviderACP       = "acp"
	ProviderReins     = "reins"
	ProviderPi        = "pi"
)

// Permission policies for acp agents.
const (
	PermissionReject = "reject"
	PermissionAllow  = "allow"
)

// Tools are the model-facing tool names an agent's allowlist may name.
var Tools = []string{"read", "write", "edit", "multi_edit", "apply_patch", "bash", "bash_output", "bash_kill", "grep", "glob", "ls", "subagent", "subagent_output", "job_output", "job_list", "job_kill", "worktree", "skill"}

// Agent is one agent definition.
type Agent struct {
	Name        string
	Description string
	Provider    string // inprocess | acp | reins | pi
	// Model is a PROVIDER/MODEL (aliases already applied) or, for pi and
	// acp agents, the child's own model name; empty means the parent's.
	Model string
	// Tools is the allowlist; nil means the parent's tools, an empty
	// non-nil slice means none. It may name MCP tools
	// (mcp__<server>__<tool>), which an agent gets only by naming them
	// here or their server in MCPServers.
	Tools []string
	// ToolProfile is `tools: profile codex|claude|minimal`: which shapes of
	// the built-in tools the agent is offered (tool.Profile); empty picks
	// them from the model. Tools stays nil (the parent's tools) then.
	ToolProfile string
	// MCPServers are the MCP servers whose every tool the agent gets
	// (`mcpServers: [NAME, ...]`); an acp child receives them in
	// session/new.
	MCPServers []string
	Command    string
	Args       []string
	Env        map[string]string
	Permission string // reject | allow
	Timeout    time.Duration
	// Budget caps this agent's run and its descendants (`budget:`), inside
	// the tree's budget.
	Budget Budget
	// Writable are the state paths the agent's process may write besides
	// the workspace under workspace-write (`sandbox: {writable: [...]}`),
	// absolute with ~ expanded.
	Writable []string
	// NetworkOff is `sandbox: {network: off}`: the agent's processes have
	// no network whatever the config says (an agent file only narrows).
	NetworkOff bool
	// NoInstructions is front matter `instructions: false`: the agent's
	// sessions do not get the project instructions (AGENTS.md, CLAUDE.md)
	// appended to its system prompt.
	NoInstructions bool
	// Effort is front matter `effort` (low, medium, high): the reasoning
	// effort of the agent's sessions; "" leaves the run's.
	Effort llm.Effort
	// Isolation is front matter `isolation: worktree` (SPEC §12): the
	// agent's children run in a git worktree of their own
	// (internal/worktree, docs/subagents.md); "" shares the workspace.
	Isolation string
	// Permissions are front matter `permissions: {allow, deny}`: rules
	// (internal/rules) for the agent's sessions, on top of the config's.
	Permissions rules.List
	// Skills is front matter `skills: [NAME, ...]`: the only skills the
	// agent's sessions see (internal/skills); nil: all of the workspace's.
	Skills       []string
	SystemPrompt string
	// Source is the definition's file, or "builtin".
	Source string
}

// IsolationWorktree is `isolation: worktree`, the one isolation there is.
const IsolationWorktree = "worktree"

// Warning is a problem that did not stop an agent from loading, such as
// a Claude Code tool reins lacks. `reins agents` prints them.
type Warning struct {
	File    string
	Agent   string
	Message string
}

func (w Warning) String() string {
	if w.File == "" {
		return w.Message
	}
	return w.File + ": " + w.Message
}

// Agents is the set of agent definitions, by name. Callers must not modify
// the returned *Agent values.
type Agents struct {
	byName  map[string]*Agent
	ignored []*Agent
	broken  map[string]*BrokenAgent
}

// BrokenAgent is an agent file that could not be read as an agent: it is
// skipped with a warning, and only naming it (--agent, a subagent call)
// fails, with the same message.
type BrokenAgent struct {
	// Name is the file's `name:` when a lenient reading found one, else
	// the file name without .md.
	Name   string
	Source string
	// Warning is the one line `reins agents` and `reins run` print.
	Warning Warning
}

func (b *BrokenAgent) Error() string { return b.Warning.String() }

// Broken returns the skipped file that would have defined name, or nil.
func (a *Agents) Broken(name string) *BrokenAgent { return a.broken[name] }

// Ignored returns the project agent files of a folder the user has not
// trusted, in directory order: they exist but cannot be used. An entry
// has Source and, when the file could be read as an agent, Name and
// Provider; nothing else of an ignored file is kept.
func (a *Agents) Ignored() []*Agent { return a.ignored }

// Get returns the agent named name.
func (a *Agents) Get(name string) (*Agent, bool) {
	ag, ok := a.byName[name]
	return ag, ok
}

// List returns every agent, sorted by name.
func (a *Agents) List() []*Agent {
	out := make([]*Agent, 0, len(a.byName))
	for _, ag := range a.byName {
		out = append(out, ag)
	}
	slices.SortFunc(out, func(a, b *Agent) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// GeneralAgent is the built-in `general` agent: in-process, the parent's
// model and tools. A file named general overrides it.
func GeneralAgent() *Agent {
	return &Agent{
		Name:        "general",
		Description: "General-purpose agent for multi-step tasks: searching, reading and changing code, running commands.",
		Provider:    ProviderInProcess,
		Permission:  PermissionReject,
		SystemPrompt: "You are a subagent working on one task delegated by another agent. " +
			"Use the tools available to complete it, then reply with a concise final answer " +
			"that states what you found or changed. If you could not finish, say so plainly and say why.",
		Source: "builtin",
	}
}

// LoadAgents discovers agent definitions in, nearest first (the nearer one
// wins on a name clash):
//
//	<cwd>/.reins/agents/*.md   (only when opts.Trusted)
//	<cwd>/.claude/agents/*.md  (only when opts.Trusted)
//	<home>/agents/*.md
//
// plus the built-in general agent. An empty home or cwd skips its
// directories; a missing directory is fine. cfg supplies modelAliases and
// may be nil. opts.Extra is not used.
//
// In a folder that is not trusted, the project's agent files are not
// definitions at all (nothing in them can start a process): they are only
// named in Agents.Ignored, and a problem in one is no error.
//
// Files in .reins and home are reins's own and are read strictly: a file
// with any problem (bad YAML, unknown key, bad value, a second file
// defining one name) is no agent. It is skipped with a warning naming file,
// line and key, and kept as a BrokenAgent so that naming it fails with the
// same message (Agents.Broken): one bad file never blocks the others. Files in .claude are Claude Code's and are read
// best-effort: unknown keys are warnings (Claude Code's cosmetic `color`
// is ignored silently), and a file that cannot be read as an agent is
// skipped with a warning, because another tool's file must not stop reins.
func LoadAgents(opts LoadOptions, cfg *Config) (*Agents, []Warning, error) {
	if cfg == nil {
		cfg = Default()
	}
	type dir struct {
		path    string
		lenient bool
		// honour is asked about each file read (LoadOptions.Honour):
		// set for the project's directories, nil for the user's own.
		honour func(name string, src []byte) bool
	}
	all := &Agents{byName: map[string]*Agent{}}
	var dirs []dir
	if opts.Cwd != "" {
		for _, d := range projectAgentDirs {
			p := filepath.Join(opts.Cwd, d.rel)
			switch {
			case sameFile(p, homeAgents(opts.Home)):
				// <cwd>/.reins is $REINS_HOME: the user's own, read below.
			case opts.Trusted:
				rel := d.rel
				dirs = append(dirs, dir{p, d.lenient, func(name string, src []byte) bool {
					return opts.honour(filepath.Join(rel, name), src)
				}})
			default:
				all.ignored = append(all.ignored, ignoredAgents(p, cfg)...)
			}
		}
	}
	if opts.Home != "" {
		dirs = append(dirs, dir{homeAgents(opts.Home), false, nil})
	}
	var warnings []Warning
	for _, dr := range dirs { // nearest first
		found, ws, broken, err := loadAgentDir(dr.path, dr.lenient, dr.honour, cfg)
		if err != nil {
			return nil, nil, err
		}
		for _, b := range broken {
			warnings = append(warnings, b.Warning)
			if _, ok := all.byName[b.Name]; ok {
				continue // a nearer file defines the name
			}
			if all.broken == nil {
				all.broken = map[string]*BrokenAgent{}
			}
			if _, ok := all.broken[b.Name]; !ok {
				all.broken[b.Name] = b
			}
		}
		shadowed := map[string]bool{} // files whose agent a nearer file overrides
		for name, ag := range found {
			if _, ok := all.byName[name]; ok {
				shadowed[ag.Source] = true
				continue
			}
			all.byName[name] = ag
		}
		for _, w := range ws {
			if !shadowed[w.File] {
				warnings = append(warnings, w)
			}
		}
	}
	if _, ok := all.byName["general"]; !ok {
		all.byName["general"] = GeneralAgent()
	}
	return all, warnings, nil
}

// ignoredAgents names the agent files of an untrusted project directory,
// read leniently and only for their name and provider.
func ignoredAgents(dir string, cfg *Config) []*Agent {
	entries, _ := os.ReadDir(dir)
	var out []*Agent
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		ig := &Agent{Source: path}
		if src, err := smallfile.Read(path, smallfile.Limit); err == nil {
			if ag, _, err := parseAgent(path, src, true, cfg); err == nil {
				ig.Name, ig.Provider = ag.Name, ag.Provider
			}
		}
		out = append(out, ig)
	}
	return out
}

// loadAgentDir reads one directory's agent files. A file that cannot be
// read as an agent is skipped: in a lenient (Claude Code) directory with a
// warning, in a strict one as a BrokenAgent, whose warning names the file,
// line and key.
//
// honour, when set, is asked about each file's bytes; a file it refuses
// is left out without a word (the caller stops on the refusal).
func loadAgentDir(dir string, lenient bool, honour func(name string, src []byte) bool, cfg *Config) (map[string]*Agent, []Warning, []*BrokenAgent, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil, nil
		}
		if lenient {
			return nil, []Warning{{File: dir, Message: "agent directory skipped: cannot be read"}}, nil, nil
		}
		return nil, nil, nil, fmt.Errorf("reading agents: %w", err)
	}
	found := map[string]*Agent{}
	var warnings []Warning
	var broken []*BrokenAgent
	for _, e := range entries { // ReadDir sorts by file name
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		src, err := smallfile.Read(path, smallfile.Limit)
		if err == nil && honour != nil && !honour(e.Name(), src) {
			continue
		}
		if err == nil {
			var ag *Agent
			var ws []Warning
			ag, ws, err = parseAgent(path, src, lenient, cfg)
			if err == nil {
				if prev, dup := found[ag.Name]; dup {
					err = &Error{Kind: KindValue, File: path, Key: "name", Want: "a name no other file in this directory uses", Got: fmt.Sprintf("%q, also defined by %s", ag.Name, prev.Source)}
				} else {
					found[ag.Name] = ag
					warnings = append(warnings, ws...)
				}
			}
		}
		if err != nil {
			msg := "skipped: " + err.Error()
			var ce *Error
			if errors.As(err, &ce) {
				msg = "skipped: " + ce.Detail()
				if ce.Line > 0 {
					msg = fmt.Sprintf("skipped: line %d: %s", ce.Line, ce.Detail())
				}
			}
			w := Warning{File: path, Message: msg}
			if lenient {
				warnings = append(warnings, w)
				continue
			}
			b := &BrokenAgent{Name: strings.TrimSuffix(e.Name(), ".md"), Source: path, Warning: w}
			if src != nil {
				if ag, _, lerr := parseAgent(path, src, true, cfg); lerr == nil {
					b.Name = ag.Name
				}
			}
			broken = append(broken, b)
		}
	}
	return found, warnings, broken, nil
}

// claudeModels are Claude Code's model shorthands: they mean the parent's
// model unless modelAliases maps them.
var claudeModels = []string{"sonnet", "opus", "haiku", "inherit"}

// splitFrontMatter separates the YAML between the leading "---" lines from
// the body (internal/frontmatter).
func splitFrontMatter(src []byte) (front []byte, body string, ok bool) {
	return frontmatter.Split(src)
}

// parseAgent reads one agent file. lenient is for Claude Code files.
func parseAgent(path string, src []byte, lenient bool, cfg *Config) (*Agent, []Warning, error) {
	front, body, ok := splitFrontMatter(src)
	if !ok {
		return nil, nil, &Error{Kind: KindFrontMatter, File: path, Line: 1}
	}
	d := &decoder{file: path, lineOff: 1, lenient: lenient}
	root, err := d.parse(front)
	if err != nil {
		return nil, nil, err
	}
	base := strings.TrimSuffix(filepath.Base(path), ".md")
	ag := &Agent{Name: base, Provider: ProviderInProcess, Permission: PermissionReject, SystemPrompt: body, Source: path}
	var (
		toolsNode ast.Node
		modelNode ast.Node
		modelSpec *string
		cmdSet    bool
	)
	known := []string{"name", "description", "provider", "model", "tools", "command", "args", "env", "permission", "timeout", "sandbox", "instructions", "budget", "mcpServers", "effort", "isolation", "permissions", "skills"}
	if lenient {
		known = append(known, "color")
	}
	err = d.fields(root, "", known, func(k string, v ast.Node, kp string) error {
		var err error
		var s *string
		switch k {
		case "name":
			if s, err = d.str(v, kp); err == nil && s != nil {
				if !frontmatter.ValidName(*s) {
					return d.valueErr(d.resolve(v), kp, "a name of letters, digits, '.', '_' and '-'")
				}
				ag.Name = *s
			}
		case "description":
			if s, err = d.str(v, kp); err == nil && s != nil {
				ag.Description = strings.TrimSpace(*s)
			}
		case "provider":
			if s, err = d.str(v, kp); err == nil && s != nil {
				if !slices.Contains([]string{ProviderInProcess, ProviderACP, ProviderReins, ProviderPi}, *s) {
					return d.valueErr(d.resolve(v), kp, "one of inprocess, acp, reins, pi")
				}
				ag.Provider = *s
			}
		case "effort":
			if s, err = d.str(v, kp); err == nil && s != nil {
				e, perr := llm.ParseEffort(*s)
				if perr != nil {
					return d.valueErr(d.resolve(v), kp, "low, medium or high")
				}
				ag.Effort = e
			}
		case "isolation":
			if s, err = d.str(v, kp); err == nil && s != nil {
				if *s != IsolationWorktree {
					return d.valueErr(d.resolve(v), kp, "worktree")
				}
				ag.Isolation = *s
			}
		case "model":
			modelNode = v
			modelSpec, err = d.str(v, kp)
		case "tools":
			toolsNode = v
		case "mcpServers":
			var l *[]string
			if l, err = d.strList(v, kp); err == nil && l != nil {
				for _, n := range *l {
					if !mcpspec.ValidName(n) {
						return d.valueErr(d.resolve(v), kp, "a list of MCP server names (letters, digits, '_' and '-')")
					}
					if !slices.Contains(ag.MCPServers, n) {
						ag.MCPServers = append(ag.MCPServers, n)
					}
				}
			}
		case "skills":
			var l *[]string
			if l, err = d.strList(v, kp); err == nil && l != nil {
				ag.Skills = []string{}
				for _, n := range *l {
					if !slices.Contains(ag.Skills, n) {
						ag.Skills = append(ag.Skills, n)
					}
				}
			}
		case "command":
			if s, err = d.str(v, kp); err == nil && s != nil {
				ag.Command, cmdSet = *s, *s != ""
			}
		case "args":
			var l *[]string
			if l, err = d.strList(v, kp); err == nil && l != nil {
				ag.Args = *l
			}
		case "env":
			ag.Env, err = d.strMap(v, kp)
			if len(ag.Env) == 0 {
				ag.Env = nil
			}
		case "permission":
			if s, err = d.str(v, kp); err == nil && s != nil {
				if *s != PermissionReject && *s != PermissionAllow {
					return d.valueErr(d.resolve(v), kp, "reject or allow")
				}
				ag.Permission = *s
			}
		case "sandbox":
			err = d.fields(v, kp, []string{"writable", "network"}, func(k string, v ast.Node, kp string) error {
				var err error
				if k == "network" {
					// An agent file may only narrow the network (SPEC §12):
					// on leaves the config's choice.
					var n *Network
					if n, err = d.network(v, kp); err == nil && n != nil {
						ag.NetworkOff = *n == NetworkOff
					}
					return err
				}
				ag.Writable, err = d.writable(v, kp)
				return err
			})
		case "instructions":
			var b *bool
			if b, err = d.boolean(v, kp); err == nil && b != nil {
				ag.NoInstructions = !*b
			}
		case "budget":
			err = d.budget(v, kp, &ag.Budget)
		case "permissions":
			err = d.permissions(v, kp, &ag.Permissions)
		case "timeout":
			var t *time.Duration
			if t, err = d.duration(v, kp); err == nil && t != nil {
				ag.Timeout = *t
			}
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	if !frontmatter.ValidName(ag.Name) {
		return nil, nil, &Error{Kind: KindValue, File: path, Key: "name", Want: "a name of letters, digits, '.', '_' and '-' (set name: or rename the file)", Got: quoteBounded(ag.Name)}
	}

	var warnings []Warning
	warn := func(format string, args ...any) {
		warnings = append(warnings, Warning{File: path, Agent: ag.Name, Message: fmt.Sprintf("agent %q: ", ag.Name) + fmt.Sprintf(format, args...)})
	}
	for _, w := range d.warnings {
		warn("%s", w)
	}

	if prof, ok := toolProfile(d, toolsNode); ok {
		switch prof {
		case "codex", "claude", "minimal":
			ag.ToolProfile = prof
		default:
			return nil, nil, d.valueErr(toolsNode, "tools", "profile codex, profile claude or profile minimal")
		}
		toolsNode = nil
	}
	if toolsNode != nil {
		names, err := toolList(d, toolsNode)
		if err != nil {
			return nil, nil, err
		}
		if names != nil {
			ag.Tools = []string{}
			for _, n := range names {
				if mcpspec.IsToolName(n) { // MCP tool names are the server's, case and all
					if !slices.Contains(ag.Tools, n) {
						ag.Tools = append(ag.Tools, n)
					}
					continue
				}
				t := strings.ToLower(n)
				if !slices.Contains(Tools, t) {
					warn("tool %q is not available in reins; dropped", n)
					continue
				}
				if !slices.Contains(ag.Tools, t) {
					ag.Tools = append(ag.Tools, t)
				}
			}
		}
	}

	for _, n := range ag.MCPServers {
		if _, ok := cfg.MCPServer(n); !ok {
			warn("MCP server %q is not configured (mcpServers in a config, or .mcp.json); an editor may still pass it to reins acp", n)
		}
	}

	if modelSpec != nil && *modelSpec != "" {
		m, err := agentModel(*modelSpec, ag.Provider, cfg)
		if err != nil {
			if !lenient {
				return nil, nil, d.valueErr(d.resolve(modelNode), "model", "PROVIDER/MODEL, a modelAliases name, or one of sonnet, opus, haiku, inherit")
			}
			warn("model %s is not a PROVIDER/MODEL reins knows; using the parent's model", quoteBounded(*modelSpec))
			m = ""
		}
		ag.Model = m
	}

	switch ag.Provider {
	case ProviderACP:
		if !cmdSet {
			return nil, nil, &Error{Kind: KindValue, File: path, Key: "command", Want: "the ACP agent's executable (provider acp needs one)"}
		}
	case ProviderPi:
		if !cmdSet {
			ag.Command = "pi"
		}
	}
	return ag, warnings, nil
}

// toolList reads tools as a comma-separated string or a list. nil means
// the key was null (the parent's tools).
// toolProfile reads `tools: profile NAME` (ok false for any other tools
// value); NAME is returned lower-cased, unchecked.
func toolProfile(d *decoder, n ast.Node) (string, bool) {
	if n == nil {
		return "", false
	}
	n = d.resolve(n)
	if isNull(n) {
		return "", false
	}
	s, ok := d.scalarText(n)
	if !ok {
		return "", false
	}
	f := strings.Fields(s)
	if len(f) != 2 || strings.ToLower(f[0]) != "profile" {
		return "", false
	}
	return strings.ToLower(f[1]), true
}

func toolList(d *decoder, n ast.Node) ([]string, error) {
	n = d.resolve(n)
	if isNull(n) {
		return nil, nil
	}
	var raw []string
	if s, ok := d.scalarText(n); ok {
		raw = strings.Split(s, ",")
	} else {
		l, err := d.strList(n, "tools")
		if err != nil {
			return nil, d.valueErr(n, "tools", "a comma-separated string or a list of tool names")
		}
		raw = *l
	}
	out := []string{}
	for _, t := range raw {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out, nil
}

// agentModel resolves an agent's model field. modelAliases apply first;
// Claude Code's shorthands otherwise mean the parent's model (""). pi and
// acp children name models in their own terms, so their value is kept as
// written; inprocess and reins children need a PROVIDER/MODEL reins knows.
func agentModel(spec, provider string, cfg *Config) (string, error) {
	if provider == ProviderPi || provider == ProviderACP {
		return spec, nil
	}
	if target, ok := cfg.ModelAliases[spec]; ok {
		return target, nil
	}
	if slices.Contains(claudeModels, strings.ToLower(spec)) {
		return "", nil
	}
	if _, _, err := cfg.splitKnown(spec); err != nil {
		return "", err
	}
	return spec, nil
}

// expandHome makes a writable path absolute: ~/x is below the user's home;
// a relative path is refused (relative to what? the workspace is writable
// already).
func expandHome(p string) (string, bool) {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", false
		}
		return filepath.Join(home, rest), true
	}
	if p == "~" {
		home, err := os.UserHomeDir()
		return home, err == nil
	}
	if !filepath.IsAbs(p) {
		return "", false
	}
	return filepath.Clean(p), true
}
