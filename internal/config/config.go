// Package config reads reins's layered YAML configuration (docs/config.md) and its
// agent definitions, and answers the questions the rest of reins asks of
// them: which model, which endpoint and key, which retry policy, which
// subagent limits, which agents.
//
// Files are parsed strictly: an unknown key, a wrong type or an unparsable
// duration is an *Error naming the file, the dotted key and what was
// expected, because a typo silently ignored (say `retyr:`) would change
// behaviour with no trace.
package config

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/reinsdev/reins/internal/catalog"
	"github.com/reinsdev/reins/internal/compact"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/retry"
	"github.com/reinsdev/reins/internal/mcpspec"
	"github.com/reinsdev/reins/internal/rules"
	"github.com/reinsdev/reins/internal/smallfile"
	"github.com/reinsdev/reins/internal/trust"
)

// DefaultModel is the model when neither a flag nor any config layer sets one.
const DefaultModel = "deepseek/deepseek-chat"

// Subagent limit defaults (docs/config.md).
const (
	DefaultMaxDepth          = 3
	DefaultMaxParallel       = 10
	DefaultMaxBackgroundJobs = 10
	// DefaultStartTimeout bounds the start of an out-of-process child
	// (spawn and handshake) when subagents.startTimeout is unset.
	DefaultStartTimeout = 60 * time.Second
	// DefaultIdleTimeout is how long a finished child that can be
	// continued stays alive before it is torn down (subagents.idleTimeout);
	// a continuation after that resumes it from its log. Two minutes: a
	// kept agent process is heavy (an opencode child idled at 567 MB RSS
	// and 1-3 % CPU), and a continuation resumes it from its log anyway.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultMaxResultBytes bounds a child's output in its parent's tool
	// result (subagents.maxResultBytes); subagent_output pages the rest.
	DefaultMaxResultBytes = 32 << 10
	// DefaultCancelGrace is how long a parent waits for a cancelled
	// remote child (subagents.cancelGrace) before it settles the child
	// from what it holds (docs/engine.md, "Deadlines").
	DefaultCancelGrace = 10 * time.Second
)

// Providers lists the model providers reins knows (docs/providers.md), in display order.
var Providers = []string{"deepseek", "openai", "anthropic", "gemini", "mock"}

// RetryPolicy is a provider's effective retry policy (docs/providers.md). Its fields
// match retry.Policy, so a caller converts with retry.Policy(p).
type RetryPolicy struct {
	MaxRetries     int
	InitialDelay   time.Duration
	MaxDelay       time.Duration
	Jitter         float64
	RetryableCodes []llm.Code
}

// DefaultRetryPolicy is the policy of a provider the config does not
// change: the retry package's default, the one place it is written.
func DefaultRetryPolicy() RetryPolicy { return RetryPolicy(retry.DefaultPolicy()) }

// ProviderConfig is a provider's effective configuration. BaseURL is the
// config's value or the provider's default; APIKey is only the config's
// value. Flags and the environment are applied by Endpoint.
type ProviderConfig struct {
	// Wire is the protocol the provider speaks (WireChat, WireResponses,
	// WireAnthropic, WireGemini or WireMock): the config's wire or the
	// provider's default.
	Wire string
	// WireSet: the config chose Wire (providers.NAME.wire), which
	// WireFor keeps over its rule for openai.
	WireSet     bool
	BaseURL     string
	APIKey      string
	IdleTimeout time.Duration
	// ProgressTimeout is how long a response may send bytes but no
	// content (keep-alives only) before the attempt fails with TIMEOUT.
	ProgressTimeout time.Duration
	Retry           RetryPolicy
}

// Subagents are the delegation limits (docs/subagents.md).
type Subagents struct {
	// MaxDepth is the deepest child depth allowed; 0 forbids delegation.
	MaxDepth          int
	MaxParallel       int
	MaxBackgroundJobs int
	// StartTimeout bounds the start of every out-of-process child: spawn
	// and handshake, until the child has accepted its task.
	StartTimeout time.Duration
	// StallTimeout is how long a running child may send no protocol
	// message before it is stopped as stalled (subagents.stallTimeout).
	StallTimeout time.Duration
	// IdleTimeout is how long a finished child stays alive for a
	// continuation before it is torn down.
	IdleTimeout time.Duration
	// MaxResultBytes bounds the child output one tool result carries.
	MaxResultBytes int
	// CancelGrace is how long a parent waits for a cancelled remote
	// child's own result before settling it from what it holds.
	CancelGrace time.Duration
	// Engine is where background children and batch tasks run: local (in
	// this process, the default) or temporal (docs/engine.md).
	Engine Engine
	// Temporal is the cluster of the temporal engine.
	Temporal Temporal
}

// Engine is a subagents.engine value.
type Engine string

// Engines (docs/engine.md).
const (
	EngineLocal    Engine = "local"
	EngineTemporal Engine = "temporal"
)

// Temporal is subagents.temporal: where the temporal engine's cluster is.
type Temporal struct {
	// Address is the frontend's host:port.
	Address   string
	Namespace string
	// TaskQueue is the queue the parent submits to and `reins worker`
	// polls.
	TaskQueue string
}

// Temporal defaults (docs/engine.md): a local `temporal server start-dev`.
const (
	DefaultTemporalAddress   = "127.0.0.1:7233"
	DefaultTemporalNamespace = "default"
	DefaultTemporalTaskQueue = "reins"
)

// Sandbox is the confinement of the processes reins starts (docs/sandbox.md).
type Sandbox struct {
	// Enabled confines every process by its permission mode with Landlock;
	// false leaves them supervised but unconfined.
	Enabled bool
	// Network is `sandbox.network`: off (the default) cuts confined
	// processes off the network, on leaves them the host's.
	Network Network
	// AllowDomains are hosts confined processes reach through reins's
	// proxy while the network is off (`sandbox.allowDomains`).
	AllowDomains []string
	// Env is `sandbox.env`: what passes the scrubbing, what is set.
	Env SandboxEnv
	// Protect adds to the built-in protected paths (`sandbox.protect`).
	Protect []string
	// Git is `sandbox.git`: read-only ("" too, the default) or writable.
	Git GitAccess
	// Readable are credential paths opened on purpose (`sandbox.readable`).
	Readable []string
	// Limits are `sandbox.limits` of the user's own config and --config.
	Limits Limits
	// LimitsCap are the lowest `sandbox.limits` a project's config set:
	// they may only lower Limits (and the defaults), never raise them.
	LimitsCap Limits
	// Writable are paths every confined process may write under
	// workspace-write besides the workspace (a build cache such as
	// ~/.cache/go-build). Only the user's own config and --config set it.
	Writable []string
}

// Config is the merged configuration with defaults applied.
type Config struct {
	// Hooks are the `hooks:` objects of the layers that set one, in layer
	// order (internal/hooks reads them); HooksUnconfined is
	// `hooks.unconfined`, which only the user's own config or --config
	// may set (docs/hooks.md).
	Hooks           []HookLayer
	HooksUnconfined bool
	Model           string
	// ModelFrom is the file of the layer that set `model` ("": none did,
	// and Model is DefaultModel, which the keys that are set may replace:
	// SPEC §12 "provider from keys").
	ModelFrom string
	// Effort is config `effort` (low, medium, high; "": the provider's
	// default), what --effort overrides.
	Effort       llm.Effort
	ModelAliases map[string]string
	// Models is the `models:` table: what the user says about models,
	// keyed by PROVIDER/MODEL (`reins models` lists them).
	Models map[string]ModelInfo
	// InstructionFiles are the project-instruction file names, in order of
	// preference (`instructions: {files: [...]}`); empty reads none.
	InstructionFiles []string
	Subagents        Subagents
	Sandbox          Sandbox
	// Budget is the default budget of a run's whole delegation tree
	// (`budget:`); the --budget-* and --timeout flags override it.
	Budget Budget
	// Context is config `context:`, how the loop keeps a conversation
	// inside its model's window (docs/config.md).
	Context Context
	// MCPServers are the MCP servers (`mcpServers`, and a trusted
	// folder's .mcp.json), in the order the layers named them; a later
	// layer's server replaces an earlier one of the same name.
	MCPServers []mcpspec.Server
	// MCPWarnings are the .mcp.json entries skipped as unusable.
	MCPWarnings []string
	// Files are the layers that were read, lowest precedence first.
	Files []string
	// Telemetry is config `telemetry:` (telemetry.go).
	Telemetry Telemetry
	// Permissions are the permission rules of every layer together
	// (`permissions: {allow, deny}`, internal/rules): a layer adds rules,
	// it never removes another's.
	Permissions rules.List

	providers map[string]rawProvider
}

// Context is config `context:`.
type Context struct {
	// CompactAt is the fraction of the model's window a request may fill
	// before the older history is summarized (0 < CompactAt <= 1).
	CompactAt float64
	// MaxToolResultBytes bounds a tool result in the model's history; the
	// session log keeps it whole.
	MaxToolResultBytes int
}

// Context defaults (docs/config.md). The built-in tools cap their output
// at 50 KiB, so the default bound of a tool result cuts only tools without
// a cap of their own.
const (
	DefaultCompactAt          = compact.DefaultCompactAt
	DefaultMaxToolResultBytes = compact.DefaultMaxToolResultBytes
)

// ModelInfo is one entry of config `models:`; a zero field is unknown.
type ModelInfo struct {
	ContextWindow int
	MaxOutput     int
	// Price is USD per million tokens.
	Price ModelPrice
}

// ModelPrice is a model's price in USD per million tokens; nil is unknown.
type ModelPrice struct {
	Input, Output, CacheRead, CacheWrite *float64
}

// LoadOptions says where the layers are. Home is REINS_HOME as resolved by
// the caller (default ~/.reins); empty skips that layer, as does an empty
// Cwd. Extra is the --config file; it must exist when given.
//
// Cwd's project files (.reins/config.yaml, .reins/agents, .claude/agents)
// are read only when Trusted is set: the caller asks internal/trust
// whether the user trusts Cwd. The zero value reads none of them, so a
// caller that forgets to ask gets the safe behaviour.
type LoadOptions struct {
	Home    string
	Cwd     string
	Trusted bool
	Extra   string
	// InstructionFiles, when set, are the instruction file names
	// ProjectFiles looks for (Config.InstructionFiles); nil: the defaults.
	InstructionFiles *[]string
	// Honour, when set, is asked about every project file read in a
	// trusted Cwd, with the bytes read (trust.Gate.Honour: is this the
	// content the user approved?); a file it refuses is not used. The
	// harness always sets it; nil honours every file (tests of the
	// loaders themselves).
	Honour func(dir, rel string, content []byte) bool
}

// honour asks opts.Honour about the project file rel of Cwd.
func (opts LoadOptions) honour(rel string, content []byte) bool {
	return opts.Honour == nil || opts.Honour(opts.Cwd, rel, content)
}

// Origin is who wrote a config layer. It decides whether a base URL the
// layer sets may receive the user's API key (Config.Endpoint).
type Origin uint8

const (
	// OriginUnknown is the zero value: a layer nobody said the origin of.
	// It is never trusted with the user's key, so a layer added later
	// without an origin fails closed instead of redirecting keys.
	OriginUnknown Origin = iota
	// OriginUser is $REINS_HOME/config.yaml.
	OriginUser
	// OriginFlag is the file given with --config.
	OriginFlag
	// OriginTrustedProject is <cwd>/.reins/config.yaml in a folder the
	// user trusted.
	OriginTrustedProject
)

// UserChosen reports whether the user wrote the layer or vouched for its
// author: only such a layer may send the user's key to an endpoint of its
// choosing.
func (o Origin) UserChosen() bool {
	switch o {
	case OriginUser, OriginFlag, OriginTrustedProject:
		return true
	}
	return false
}

func (o Origin) String() string {
	switch o {
	case OriginUser:
		return "user config"
	case OriginFlag:
		return "--config"
	case OriginTrustedProject:
		return "trusted project config"
	}
	return "config of unknown origin"
}

// Project paths, relative to the workspace. Every project file reins reads
// is listed by ProjectFiles, so that an untrusted folder's notice names it.
// They are constants, not filepath.Join's results, which would be
// computed at every reins start (internal/lazy).
const sep = string(filepath.Separator)

var (
	projectConfig = ".reins" + sep + "config.yaml"
	// projectAgentDirs are nearest first; Claude Code's files are read
	// leniently (another tool's file must not stop reins).
	projectAgentDirs = [...]struct {
		rel     string
		lenient bool
	}{{".reins" + sep + "agents", false}, {".claude" + sep + "agents", true}}
)

// InstructionFiles are the default project-instruction file names, in
// order of preference: a directory's AGENTS.md, else its CLAUDE.md (read
// by internal/harness, only in trusted folders; config
// `instructions.files` names others).
var InstructionFiles = []string{"AGENTS.md", "CLAUDE.md"}

func derefList(l *[]string) []string {
	if l == nil {
		return nil
	}
	return *l
}

// ProjectFiles lists the project files that exist in opts.Cwd, as paths
// relative to it: the config layer, the instruction file and the agent files. A path that is
// also the user's own (the workspace is the home directory, so
// <cwd>/.reins is $REINS_HOME; or the config layer is the --config file)
// is read as the user's and is left out. Errors
// reading a directory leave its files out: the list is for telling the
// user what was ignored, never for loading.
func ProjectFiles(opts LoadOptions) []string {
	if opts.Cwd == "" {
		return nil
	}
	var out []string
	cfg := filepath.Join(opts.Cwd, projectConfig)
	if fi, err := os.Stat(cfg); err == nil && !fi.IsDir() && !sameFile(cfg, homeConfig(opts.Home)) && !sameFile(cfg, opts.Extra) {
		out = append(out, projectConfig)
	}
	if fi, err := os.Stat(mcpJSONPath(opts.Cwd)); err == nil && fi.Mode().IsRegular() {
		out = append(out, MCPJSON)
	}
	for _, rel := range ClaudeSettings { // their hooks (internal/hooks)
		if fi, err := os.Stat(filepath.Join(opts.Cwd, rel)); err == nil && fi.Mode().IsRegular() {
			out = append(out, rel)
		}
	}
	names := InstructionFiles
	if opts.InstructionFiles != nil {
		names = *opts.InstructionFiles
	}
	for _, name := range names {
		if fi, err := os.Stat(filepath.Join(opts.Cwd, name)); err == nil && fi.Mode().IsRegular() {
			out = append(out, name)
			break
		}
	}
	for _, d := range projectAgentDirs {
		dir := filepath.Join(opts.Cwd, d.rel)
		if sameFile(dir, homeAgents(opts.Home)) {
			continue
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".md") {
				out = append(out, filepath.Join(d.rel, e.Name()))
			}
		}
	}
	// Agent Skills (internal/skills) and custom commands
	// (internal/commands): a skill's SKILL.md, a command folder's files
	// at its top.
	for _, rel := range projectSkillDirs {
		dir := filepath.Join(opts.Cwd, rel)
		if opts.Home != "" && sameFile(dir, filepath.Join(opts.Home, "skills")) {
			continue
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if _, err := os.Lstat(filepath.Join(dir, e.Name(), "SKILL.md")); err == nil {
				out = append(out, filepath.Join(rel, e.Name(), "SKILL.md"))
			}
		}
	}
	for _, rel := range projectCommandDirs {
		dir := filepath.Join(opts.Cwd, rel)
		if opts.Home != "" && sameFile(dir, filepath.Join(opts.Home, "commands")) {
			continue
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".md") || e.IsDir() {
				out = append(out, filepath.Join(rel, e.Name()))
			}
		}
	}
	return out
}

// The project folders of skills and custom commands, for ProjectFiles.
var (
	projectSkillDirs   = [...]string{".reins" + sep + "skills", ".claude" + sep + "skills", ".agents" + sep + "skills"}
	projectCommandDirs = [...]string{".reins" + sep + "commands", ".claude" + sep + "commands"}
)

// Sources are the files and folders the loaders may read for opts, whether
// they exist or not: the user's and the project's config layers, the
// --config file, the project's MCP list and instruction files, and every
// agent folder. A process that keeps what it loaded (a worker's harness
// per workspace) stats them to see whether it must load again; the
// folders' entries count too (Fingerprint).
func Sources(opts LoadOptions) (files, dirs []string) {
	if c := homeConfig(opts.Home); c != "" {
		files = append(files, c)
	}
	if opts.Extra != "" {
		files = append(files, opts.Extra)
	}
	if a := homeAgents(opts.Home); a != "" {
		dirs = append(dirs, a)
	}
	if opts.Cwd == "" {
		return files, dirs
	}
	files = append(files, filepath.Join(opts.Cwd, projectConfig), mcpJSONPath(opts.Cwd))
	names := InstructionFiles
	if opts.InstructionFiles != nil {
		names = *opts.InstructionFiles
	}
	for _, name := range names {
		files = append(files, filepath.Join(opts.Cwd, name))
	}
	for _, d := range projectAgentDirs {
		dirs = append(dirs, filepath.Join(opts.Cwd, d.rel))
	}
	return files, dirs
}

// Fingerprint is the state of Sources(opts) and the extra files as one
// comparable string: each path's size, modification time and mode (or
// its absence), and for each folder the same of every entry. Two equal
// fingerprints mean nothing the loaders read has changed, to the
// precision of the file system's clock.
func Fingerprint(opts LoadOptions, extra ...string) string {
	files, dirs := Sources(opts)
	var b strings.Builder
	stat := func(p string) {
		b.WriteString(p)
		fi, err := os.Stat(p)
		if err != nil {
			b.WriteString(" -\n")
			return
		}
		fmt.Fprintf(&b, " %d %d %s\n", fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
	}
	for _, f := range append(files, extra...) {
		stat(f)
	}
	for _, d := range dirs {
		stat(d)
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			stat(filepath.Join(d, e.Name()))
		}
	}
	return b.String()
}

func homeConfig(home string) string {
	if home == "" {
		return ""
	}
	return filepath.Join(home, "config.yaml")
}

func homeAgents(home string) string {
	if home == "" {
		return ""
	}
	return filepath.Join(home, "agents")
}

// sameFile reports whether a and b both exist and are the same file or
// directory.
func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// Default returns the configuration with no layers.
func Default() *Config {
	c, _ := merge(nil)
	return c
}

// Load reads $Home/config.yaml, <Cwd>/.reins/config.yaml (only when
// opts.Trusted) and Extra, later layers overriding the fields they set;
// maps merge per key.
func Load(opts LoadOptions) (*Config, error) {
	type layer struct {
		path     string
		optional bool
		origin   Origin
	}
	var layers []layer
	if opts.Home != "" {
		layers = append(layers, layer{homeConfig(opts.Home), true, OriginUser})
	}
	projectAt := -1
	if p := filepath.Join(opts.Cwd, projectConfig); opts.Cwd != "" && opts.Trusted && !sameFile(p, homeConfig(opts.Home)) {
		projectAt = len(layers)
		layers = append(layers, layer{p, true, OriginTrustedProject})
	}
	if opts.Extra != "" {
		layers = append(layers, layer{opts.Extra, false, OriginFlag})
	}
	var raws []*rawConfig
	for i, l := range layers {
		src, err := smallfile.Read(l.path, smallfile.Limit)
		if err != nil {
			if l.optional && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("reading config: %w", err)
		}
		if i == projectAt && !opts.honour(projectConfig, src) {
			continue // not approved: the caller stops on Honour's refusal
		}
		r, err := parseConfig(l.path, l.origin, src)
		if err != nil {
			return nil, err
		}
		raws = append(raws, r)
	}
	// Claude Code's .mcp.json is a project layer above the user's config
	// and below the project's own: the nearer, reins-specific file wins
	// on a name clash.
	if p := mcpJSONPath(opts.Cwd); opts.Cwd != "" && opts.Trusted {
		servers, warnings, _ := readMCPJSON(p, func(src []byte) bool { return opts.honour(MCPJSON, src) })
		if len(servers) > 0 || len(warnings) > 0 {
			at := 0
			for at < len(raws) && raws[at].origin == OriginUser {
				at++
			}
			raws = slices.Insert(raws, at, &rawConfig{file: p, origin: OriginTrustedProject, mcpServers: servers, mcpWarnings: warnings})
		}
	}
	return merge(raws)
}

// rawConfig is one layer as written: nil pointers are "not set", so a
// layer overrides only what it mentions and 0 stays distinct from unset.
type rawConfig struct {
	telemetry      *rawTelemetry
	permissions    rules.List
	file           string
	origin         Origin
	model          *string
	modelLine      int
	effort         *string
	providers      map[string]rawProvider
	modelAliases   map[string]string
	aliasLines     map[string]int
	models         map[string]ModelInfo
	maxDepth       *int
	maxParallel    *int
	maxBgJobs      *int
	startTimeout   *time.Duration
	stallTimeout   *time.Duration
	idleTimeout    *time.Duration
	maxResultBytes *int
	cancelGrace    *time.Duration
	budget         *Budget
	sandboxOn      *bool
	sandboxMore    sandboxLayer
	sandboxW       []string
	instrFiles     *[]string
	compactAt      *float64
	maxToolRes     *int
	mcpServers     []mcpspec.Server
	mcpWarnings    []string
	engine         *string
	temporal       rawTemporal
	hooks          json.RawMessage
	hooksUnconf    *bool
}

type rawTemporal struct{ address, namespace, taskQueue *string }

type rawProvider struct {
	wire      *string
	apiKeyEnv *string
	baseURL   *string
	apiKey    *string
	// from is the layer that set baseURL, keyFrom the one that set
	// apiKey, and keyEnvFrom the one that set apiKeyEnv: Endpoint decides
	// by them where a key may go.
	from, keyFrom, keyEnvFrom layerRef
	idleTimeout               *time.Duration
	progressTO                *time.Duration
	retry                     rawRetry
	// headers are providers.NAME.headers by canonical name, each with the
	// layer that set it (Headers decides by it whether its ${VAR}s may be
	// expanded); models is providers.NAME.models.
	headers map[string]rawHeader
	models  *[]string
	// at and line are the last layer that named the provider and the
	// line of its key there: where a provider of the user's own that
	// lacks its wire or baseURL is reported (merge).
	at   layerRef
	line int
}

// rawHeader is one providers.NAME.headers value as written and its layer.
type rawHeader struct {
	value string
	from  layerRef
}

type rawRetry struct {
	maxRetries     *int
	initialDelay   *time.Duration
	maxDelay       *time.Duration
	jitter         *float64
	retryableCodes *[]string
}

// layerRef names the config layer a value came from.
type layerRef struct {
	file   string
	origin Origin
}

// parseConfig decodes one config file strictly.
func parseConfig(file string, origin Origin, src []byte) (*rawConfig, error) {
	d := &decoder{file: file}
	body, err := d.parse(src)
	if err != nil {
		return nil, err
	}
	r := &rawConfig{file: file, origin: origin, providers: map[string]rawProvider{}, modelAliases: map[string]string{}, aliasLines: map[string]int{}, models: map[string]ModelInfo{}}
	err = d.fields(body, "", []string{"model", "effort", "providers", "modelAliases", "models", "subagents", "sandbox", "instructions", "budget", "context", "mcpServers", "telemetry", "permissions", "hooks"}, func(k string, v ast.Node, kp string) error {
		var err error
		switch k {
		case "hooks":
			r.hooks, r.hooksUnconf, err = d.hooks(v, kp, origin == OriginUser || origin == OriginFlag)
		case "permissions":
			err = d.permissions(v, kp, &r.permissions)
		case "telemetry":
			r.telemetry = &rawTelemetry{}
			err = d.telemetry(v, kp, r.telemetry)
		case "budget":
			r.budget = &Budget{}
			err = d.budget(v, kp, r.budget)
		case "context":
			err = d.fields(v, kp, []string{"compactAt", "maxToolResultBytes"}, func(k string, v ast.Node, kp string) error {
				var err error
				switch k {
				case "compactAt":
					r.compactAt, err = d.fraction(v, kp)
					if err == nil && r.compactAt != nil && *r.compactAt <= 0 {
						err = d.valueErr(d.resolve(v), kp, "a number above 0 and at most 1, such as 0.85")
					}
				case "maxToolResultBytes":
					r.maxToolRes, err = positive(d, v, kp)
				}
				return err
			})
		case "mcpServers":
			r.mcpServers, err = parseMCPServers(d, v, kp)
		case "instructions":
			err = d.fields(v, kp, []string{"files"}, func(_ string, v ast.Node, kp string) error {
				l, err := d.strList(v, kp)
				if err != nil {
					return err
				}
				for _, name := range derefList(l) {
					if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
						return d.valueErr(d.resolve(v), kp, "a list of file names (no directories), such as [AGENTS.md, CLAUDE.md]")
					}
				}
				r.instrFiles = l
				return nil
			})
		case "models":
			err = d.each(v, kp, "a mapping of PROVIDER/MODEL: {contextWindow, maxOutput, price}", func(name string, mv ast.Node, mp string, line int) error {
				if _, _, err := splitModel(name); err != nil {
					return &Error{Kind: KindValue, File: file, Key: mp, Line: line, Want: "a PROVIDER/MODEL key (PROVIDER one of " + strings.Join(Providers, ", ") + ")"}
				}
				var mi ModelInfo
				err := d.fields(mv, mp, []string{"contextWindow", "maxOutput", "price"}, func(k string, v ast.Node, kp string) error {
					var err error
					var i *int
					switch k {
					case "contextWindow":
						if i, err = d.integer(v, kp); i != nil {
							mi.ContextWindow = *i
						}
					case "maxOutput":
						if i, err = d.integer(v, kp); i != nil {
							mi.MaxOutput = *i
						}
					case "price":
						err = d.fields(v, kp, []string{"input", "output", "cacheRead", "cacheWrite"}, func(k string, v ast.Node, kp string) error {
							f, err := d.number(v, kp)
							switch k {
							case "input":
								mi.Price.Input = f
							case "output":
								mi.Price.Output = f
							case "cacheRead":
								mi.Price.CacheRead = f
							case "cacheWrite":
								mi.Price.CacheWrite = f
							}
							return err
						})
					}
					return err
				})
				r.models[name] = mi
				return err
			})
		case "effort":
			r.effort, err = d.str(v, kp)
			if err == nil && r.effort != nil {
				if _, perr := llm.ParseEffort(*r.effort); perr != nil {
					err = d.valueErr(d.resolve(v), kp, "low, medium or high")
				}
			}
		case "model":
			r.model, err = d.str(v, kp)
			r.modelLine = d.line(v)
			if err == nil && r.model != nil && *r.model == "" {
				err = d.valueErr(d.resolve(v), kp, "PROVIDER/MODEL, such as "+DefaultModel)
			}
		case "providers":
			err = d.each(v, kp, "a mapping of provider names ("+providerList()+")", func(name string, pv ast.Node, pp string, line int) error {
				if !validProviderName(name) {
					return &Error{Kind: KindUnknownKey, File: file, Key: pp, Line: line, Want: "a provider name (letters, digits, '-', '_', '.'): " + providerList()}
				}
				p, err := parseProvider(d, pv, pp)
				p.from, p.keyFrom, p.keyEnvFrom = layerRef{file, origin}, layerRef{file, origin}, layerRef{file, origin}
				p.at, p.line = layerRef{file, origin}, line
				for k, h := range p.headers {
					h.from = layerRef{file, origin}
					p.headers[k] = h
				}
				r.providers[name] = p
				return err
			})
		case "modelAliases":
			err = d.each(v, kp, "a mapping of alias: PROVIDER/MODEL", func(alias string, av ast.Node, ap string, _ int) error {
				r.aliasLines[alias] = d.line(av)
				s, err := d.str(av, ap)
				if err != nil {
					return err
				}
				if s == nil {
					return d.valueErr(d.resolve(av), ap, "PROVIDER/MODEL, such as anthropic/claude-sonnet-4-5")
				}
				if _, _, err := splitModel(*s); err != nil {
					return d.valueErr(d.resolve(av), ap, "PROVIDER/MODEL (PROVIDER one of "+strings.Join(Providers, ", ")+")")
				}
				r.modelAliases[alias] = *s
				return nil
			})
		case "sandbox":
			err = d.fields(v, kp, []string{"enabled", "network", "writable", "allowDomains", "env", "protect", "readable", "git", "limits"}, func(k string, v ast.Node, kp string) error {
				if ok, err := d.sandboxKey(&r.sandboxMore, k, v, kp, origin == OriginUser || origin == OriginFlag); ok {
					return err
				}
				var err error
				switch k {
				case "enabled":
					r.sandboxOn, err = d.boolean(v, kp)
					// Only the user turns the sandbox off: a repository may
					// tighten it (network: false), never lift it.
					if err == nil && r.sandboxOn != nil && !*r.sandboxOn && origin != OriginUser && origin != OriginFlag {
						err = d.valueErr(d.resolve(v), kp, "true (only your own config or --config may turn the sandbox off)")
					}
				case "writable":
					r.sandboxW, err = d.writable(v, kp)
					if err == nil && len(r.sandboxW) > 0 && origin != OriginUser && origin != OriginFlag {
						err = d.valueErr(d.resolve(v), kp, "nothing here (only your own config or --config may widen the sandbox)")
					}
				}
				return err
			})
		case "subagents":
			err = d.fields(v, kp, []string{"maxDepth", "maxParallel", "maxBackgroundJobs", "startTimeout", "stallTimeout", "idleTimeout", "maxResultBytes", "cancelGrace", "engine", "temporal"}, func(k string, v ast.Node, kp string) error {
				var err error
				switch k {
				case "maxDepth":
					r.maxDepth, err = d.integer(v, kp)
				case "maxParallel":
					r.maxParallel, err = positive(d, v, kp)
				case "maxBackgroundJobs":
					r.maxBgJobs, err = positive(d, v, kp)
				case "stallTimeout":
					r.stallTimeout, err = d.duration(v, kp)
					if err == nil && r.stallTimeout != nil && *r.stallTimeout <= 0 {
						err = d.valueErr(d.resolve(v), kp, "a duration > 0 such as 5m")
					}
				case "startTimeout":
					r.startTimeout, err = d.duration(v, kp)
					if err == nil && r.startTimeout != nil && *r.startTimeout <= 0 {
						err = d.valueErr(d.resolve(v), kp, "a duration > 0 such as 60s")
					}
				case "idleTimeout":
					r.idleTimeout, err = d.duration(v, kp)
					if err == nil && r.idleTimeout != nil && *r.idleTimeout <= 0 {
						err = d.valueErr(d.resolve(v), kp, "a duration > 0 such as 10m")
					}
				case "cancelGrace":
					r.cancelGrace, err = d.duration(v, kp)
					if err == nil && r.cancelGrace != nil && *r.cancelGrace <= 0 {
						err = d.valueErr(d.resolve(v), kp, "a duration > 0 such as 10s")
					}
				case "maxResultBytes":
					r.maxResultBytes, err = d.integer(v, kp)
					if err == nil && r.maxResultBytes != nil && *r.maxResultBytes < 1024 {
						err = d.valueErr(d.resolve(v), kp, "an integer >= 1024")
					}
				case "engine":
					r.engine, err = d.str(v, kp)
					if err == nil && r.engine != nil && *r.engine != string(EngineLocal) && *r.engine != string(EngineTemporal) {
						err = d.valueErr(d.resolve(v), kp, "local or temporal")
					}
				case "temporal":
					err = d.fields(v, kp, []string{"address", "namespace", "taskQueue"}, func(k string, v ast.Node, kp string) error {
						s, err := d.str(v, kp)
						if err == nil && s != nil && strings.TrimSpace(*s) == "" {
							err = d.valueErr(d.resolve(v), kp, "a non-empty string")
						}
						switch k {
						case "address":
							r.temporal.address = s
						case "namespace":
							r.temporal.namespace = s
						case "taskQueue":
							r.temporal.taskQueue = s
						}
						return err
					})
				}
				return err
			})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// positive decodes an integer >= 1: a parallelism of 0 would deadlock.
func positive(d *decoder, v ast.Node, kp string) (*int, error) {
	i, err := d.integer(v, kp)
	if err == nil && i != nil && *i < 1 {
		return nil, d.valueErr(d.resolve(v), kp, "an integer >= 1")
	}
	return i, err
}

func parseProvider(d *decoder, n ast.Node, path string) (rawProvider, error) {
	var p rawProvider
	err := d.fields(n, path, []string{"wire", "baseURL", "apiKey", "apiKeyEnv", "headers", "models", "idleTimeout", "progressTimeout", "retry"}, func(k string, v ast.Node, kp string) error {
		var err error
		switch k {
		case "wire":
			p.wire, err = d.str(v, kp)
			if err == nil && p.wire != nil && !slices.Contains(Wires, *p.wire) {
				err = d.valueErr(d.resolve(v), kp, "a wire: "+strings.Join(Wires, ", "))
			}
		case "apiKeyEnv":
			p.apiKeyEnv, err = d.str(v, kp)
			if err == nil && p.apiKeyEnv != nil && *p.apiKeyEnv == "" {
				err = d.valueErr(d.resolve(v), kp, "an environment variable name")
			}
		case "baseURL":
			p.baseURL, err = d.str(v, kp)
			if err == nil && p.baseURL != nil {
				if _, err2 := checkBaseURL(*p.baseURL); err2 != nil {
					err = d.valueErr(d.resolve(v), kp, "an absolute http:// or https:// URL")
				}
			}
		case "apiKey":
			p.apiKey, err = d.str(v, kp)
		case "headers":
			p.headers, err = parseHeaders(d, v, kp)
		case "models":
			p.models, err = d.strList(v, kp)
			if err == nil && p.models != nil {
				seq, _ := d.resolve(v).(*ast.SequenceNode)
				for i, m := range *p.models {
					if !validModelName(m) {
						return d.valueErr(d.resolve(seq.Values[i]), fmt.Sprintf("%s[%d]", kp, i), "a model name (no spaces or control characters, at most 200 bytes)")
					}
				}
			}
		case "idleTimeout":
			p.idleTimeout, err = d.duration(v, kp)
			if err == nil && p.idleTimeout != nil && *p.idleTimeout == 0 {
				err = d.valueErr(d.resolve(v), kp, "a duration > 0 such as 300s")
			}
		case "progressTimeout":
			p.progressTO, err = d.duration(v, kp)
			if err == nil && p.progressTO != nil && *p.progressTO == 0 {
				err = d.valueErr(d.resolve(v), kp, "a duration > 0 such as 10m")
			}
		case "retry":
			p.retry, err = parseRetry(d, v, kp)
		}
		return err
	})
	return p, err
}

func parseRetry(d *decoder, n ast.Node, path string) (rawRetry, error) {
	var r rawRetry
	known := []string{"maxRetries", "initialDelay", "maxDelay", "jitter", "retryableCodes"}
	err := d.fields(n, path, known, func(k string, v ast.Node, kp string) error {
		var err error
		switch k {
		case "maxRetries":
			r.maxRetries, err = d.integer(v, kp)
		case "initialDelay":
			r.initialDelay, err = d.duration(v, kp)
		case "maxDelay":
			r.maxDelay, err = d.duration(v, kp)
		case "jitter":
			r.jitter, err = d.fraction(v, kp)
		case "retryableCodes":
			r.retryableCodes, err = d.strList(v, kp)
			if err == nil && r.retryableCodes != nil {
				seq, _ := d.resolve(v).(*ast.SequenceNode)
				for i, c := range *r.retryableCodes {
					// The failure codes a retry policy may name: the adapters'.
					if retryable := llm.ProviderCodes(); !slices.Contains(retryable, llm.Code(c)) {
						names := make([]string, len(retryable))
						for j, k := range retryable {
							names[j] = string(k)
						}
						return d.valueErr(d.resolve(seq.Values[i]), fmt.Sprintf("%s[%d]", kp, i), "a failure code: "+strings.Join(names, ", "))
					}
				}
			}
		}
		return err
	})
	return r, err
}

// merge folds layers over the defaults and validates the result.
func merge(raws []*rawConfig) (*Config, error) {
	c := &Config{
		Model:            DefaultModel,
		ModelAliases:     map[string]string{},
		Models:           map[string]ModelInfo{},
		InstructionFiles: InstructionFiles,
		Subagents: Subagents{MaxDepth: DefaultMaxDepth, MaxParallel: DefaultMaxParallel, MaxBackgroundJobs: DefaultMaxBackgroundJobs,
			StartTimeout: DefaultStartTimeout, StallTimeout: DefaultStallTimeout, IdleTimeout: DefaultIdleTimeout, MaxResultBytes: DefaultMaxResultBytes,
			CancelGrace: DefaultCancelGrace, Engine: EngineLocal, Temporal: Temporal{Address: DefaultTemporalAddress, Namespace: DefaultTemporalNamespace, TaskQueue: DefaultTemporalTaskQueue}},
		Sandbox:   Sandbox{Enabled: true, Network: NetworkOff},
		Context:   Context{CompactAt: DefaultCompactAt, MaxToolResultBytes: DefaultMaxToolResultBytes},
		providers: map[string]rawProvider{},
	}
	var modelFrom *rawConfig
	for _, r := range raws {
		c.Files = append(c.Files, r.file)
		if r.hooks != nil {
			c.Hooks = append(c.Hooks, HookLayer{File: r.file, User: r.origin == OriginUser || r.origin == OriginFlag, Hooks: r.hooks})
		}
		if r.hooksUnconf != nil {
			c.HooksUnconfined = *r.hooksUnconf
		}
		if r.model != nil {
			c.Model, modelFrom = *r.model, r
			c.ModelFrom = r.file
		}
		if r.effort != nil {
			c.Effort = llm.Effort(*r.effort)
		}
		maps.Copy(c.ModelAliases, r.modelAliases)
		maps.Copy(c.Models, r.models)
		if r.instrFiles != nil {
			c.InstructionFiles = *r.instrFiles
		}
		if r.compactAt != nil {
			c.Context.CompactAt = *r.compactAt
		}
		setInt(&c.Context.MaxToolResultBytes, r.maxToolRes)
		c.Permissions.Allow = append(c.Permissions.Allow, r.permissions.Allow...)
		c.Permissions.Deny = append(c.Permissions.Deny, r.permissions.Deny...)
		if t := r.telemetry; t != nil { // the keys a layer sets win
			c.Telemetry.OTLPEndpoint = cmp.Or(t.OTLPEndpoint, c.Telemetry.OTLPEndpoint)
			c.Telemetry.Protocol = cmp.Or(t.Protocol, c.Telemetry.Protocol)
			if t.Headers != nil {
				c.Telemetry.Headers = t.Headers
			}
			if t.content != nil {
				c.Telemetry.Content = *t.content
			}
		}
		setInt(&c.Subagents.MaxDepth, r.maxDepth)
		setInt(&c.Subagents.MaxParallel, r.maxParallel)
		setInt(&c.Subagents.MaxBackgroundJobs, r.maxBgJobs)
		if r.startTimeout != nil {
			c.Subagents.StartTimeout = *r.startTimeout
		}
		if r.stallTimeout != nil {
			c.Subagents.StallTimeout = *r.stallTimeout
		}
		if b := r.budget; b != nil { // the fields a layer sets win (0 is never set)
			c.Budget.Tokens = cmp.Or(b.Tokens, c.Budget.Tokens)
			c.Budget.USD = cmp.Or(b.USD, c.Budget.USD)
			c.Budget.Time = cmp.Or(b.Time, c.Budget.Time)
		}
		if r.idleTimeout != nil {
			c.Subagents.IdleTimeout = *r.idleTimeout
		}
		setInt(&c.Subagents.MaxResultBytes, r.maxResultBytes)
		if r.cancelGrace != nil {
			c.Subagents.CancelGrace = *r.cancelGrace
		}
		if r.engine != nil {
			c.Subagents.Engine = Engine(*r.engine)
		}
		setStr(&c.Subagents.Temporal.Address, r.temporal.address)
		setStr(&c.Subagents.Temporal.Namespace, r.temporal.namespace)
		setStr(&c.Subagents.Temporal.TaskQueue, r.temporal.taskQueue)
		if r.sandboxOn != nil {
			c.Sandbox.Enabled = *r.sandboxOn
		}
		r.sandboxMore.apply(&c.Sandbox)
		c.Sandbox.Writable = append(c.Sandbox.Writable, r.sandboxW...)
		for i := range r.mcpServers {
			// Only these servers may name a secret in ${VAR} (mcpspec.ExpandServerFor).
			r.mcpServers[i].UserConfig = r.origin == OriginUser || r.origin == OriginFlag
		}
		c.MCPServers = mergeMCP(c.MCPServers, r.mcpServers)
		c.MCPWarnings = append(c.MCPWarnings, r.mcpWarnings...)
		for name, p := range r.providers {
			c.providers[name] = p.over(c.providers[name])
		}
	}
	if err := c.checkProviders(); err != nil {
		return nil, err
	}
	// An alias's provider is known once every layer is read (one may
	// define it).
	for _, r := range raws {
		for alias, target := range r.modelAliases {
			if _, _, err := c.splitKnown(target); err != nil {
				return nil, &Error{Kind: KindValue, File: r.file, Key: "modelAliases." + alias, Line: r.aliasLines[alias],
					Want: "PROVIDER/MODEL (PROVIDER one of " + c.providerList() + ")", Got: quoteBounded(target)}
			}
		}
	}
	if modelFrom != nil {
		if _, _, err := c.ResolveModel(c.Model); err != nil {
			return nil, &Error{Kind: KindValue, File: modelFrom.file, Key: "model", Line: modelFrom.modelLine,
				Want: "PROVIDER/MODEL (PROVIDER one of " + c.providerList() + "), a short name (" + shortNames() + ") or a modelAliases name",
				Got:  quoteBounded(c.Model)}
		}
	}
	return c, nil
}

func setStr(dst *string, v *string) {
	if v != nil {
		*dst = *v
	}
}

func setInt(dst *int, v *int) {
	if v != nil {
		*dst = *v
	}
}

func pick[T any](hi, lo *T) *T {
	if hi != nil {
		return hi
	}
	return lo
}

// over returns p layered over lo: fields p sets win.
func (p rawProvider) over(lo rawProvider) rawProvider {
	from, keyFrom, keyEnvFrom := p.from, p.keyFrom, p.keyEnvFrom
	if p.baseURL == nil {
		from = lo.from
	}
	if p.apiKeyEnv == nil {
		keyEnvFrom = lo.keyEnvFrom
	}
	if p.apiKey == nil {
		keyFrom = lo.keyFrom
	}
	at, line := p.at, p.line
	if at.file == "" {
		at, line = lo.at, lo.line
	}
	return rawProvider{
		at:          at,
		line:        line,
		wire:        pick(p.wire, lo.wire),
		apiKeyEnv:   pick(p.apiKeyEnv, lo.apiKeyEnv),
		baseURL:     pick(p.baseURL, lo.baseURL),
		apiKey:      pick(p.apiKey, lo.apiKey),
		from:        from,
		keyFrom:     keyFrom,
		keyEnvFrom:  keyEnvFrom,
		idleTimeout: pick(p.idleTimeout, lo.idleTimeout),
		progressTO:  pick(p.progressTO, lo.progressTO),
		headers:     overHeaders(p.headers, lo.headers),
		models:      pick(p.models, lo.models),
		retry: rawRetry{
			maxRetries:     pick(p.retry.maxRetries, lo.retry.maxRetries),
			initialDelay:   pick(p.retry.initialDelay, lo.retry.initialDelay),
			maxDelay:       pick(p.retry.maxDelay, lo.retry.maxDelay),
			jitter:         pick(p.retry.jitter, lo.retry.jitter),
			retryableCodes: pick(p.retry.retryableCodes, lo.retry.retryableCodes),
		},
	}
}

// Retry returns the provider's effective retry policy.
func (c *Config) Retry(provider string) RetryPolicy {
	p := DefaultRetryPolicy()
	r := c.providers[provider].retry
	if r.maxRetries != nil {
		p.MaxRetries = *r.maxRetries
	}
	if r.initialDelay != nil {
		p.InitialDelay = *r.initialDelay
	}
	if r.maxDelay != nil {
		p.MaxDelay = *r.maxDelay
	}
	if r.jitter != nil {
		p.Jitter = *r.jitter
	}
	if r.retryableCodes != nil {
		p.RetryableCodes = make([]llm.Code, len(*r.retryableCodes))
		for i, c := range *r.retryableCodes {
			p.RetryableCodes[i] = llm.Code(c)
		}
	}
	return p
}

// Provider returns the provider's effective configuration.
func (c *Config) Provider(name string) ProviderConfig {
	raw := c.providers[name]
	wire, _, _, def := ProviderDefaults(name)
	if raw.wire != nil {
		wire = *raw.wire
	}
	pc := ProviderConfig{Wire: wire, WireSet: raw.wire != nil, BaseURL: def, IdleTimeout: llm.DefaultIdleTimeout, ProgressTimeout: llm.DefaultProgressTimeout, Retry: c.Retry(name)}
	if raw.baseURL != nil {
		pc.BaseURL = strings.TrimRight(*raw.baseURL, "/")
	}
	if raw.apiKey != nil {
		pc.APIKey = *raw.apiKey
	}
	if raw.idleTimeout != nil {
		pc.IdleTimeout = *raw.idleTimeout
	}
	if raw.progressTO != nil {
		pc.ProgressTimeout = *raw.progressTO
	}
	return pc
}

// Wire names (SPEC §12 `providers.<name>.wire`): the protocol an adapter
// speaks. WireMock is the in-process scripted model, never configurable.
const (
	WireChat      = "chat"      // OpenAI chat completions (and compatible servers)
	WireResponses = "responses" // OpenAI Responses API
	WireAnthropic = "anthropic" // Anthropic Messages
	WireGemini    = "gemini"    // Gemini streamGenerateContent?alt=sse
	WireMock      = "mock"
)

// Wires are the values providers.<name>.wire accepts.
var Wires = []string{WireChat, WireResponses, WireAnthropic, WireGemini}

// ProviderDefaults is the table of docs/providers.md: the wire a provider speaks
// by default (a Wire* name), the environment variables holding its key and
// base URL, and its default base URL. An unknown name yields empty
// strings.
func ProviderDefaults(name string) (wire, keyEnv, baseURLEnv, defaultBaseURL string) {
	switch name {
	case "deepseek":
		return WireChat, "DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", "https://api.deepseek.com"
	case "openai":
		return WireResponses, "OPENAI_API_KEY", "OPENAI_BASE_URL", "https://api.openai.com/v1"
	case "anthropic":
		return WireAnthropic, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "https://api.anthropic.com"
	case "gemini":
		return WireGemini, "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL", "https://generativelanguage.googleapis.com"
	case "mock":
		return WireMock, "", "", ""
	// The presets (providers.go): OpenAI-compatible services and local
	// servers, on the chat wire.
	case "openrouter":
		return WireChat, "OPENROUTER_API_KEY", "", "https://openrouter.ai/api/v1"
	case "groq":
		return WireChat, "GROQ_API_KEY", "", "https://api.groq.com/openai/v1"
	case "together":
		return WireChat, "TOGETHER_API_KEY", "", "https://api.together.xyz/v1"
	case "ollama":
		return WireChat, "OLLAMA_API_KEY", "", "http://localhost:11434/v1"
	case "lmstudio":
		return WireChat, "LMSTUDIO_API_KEY", "", "http://localhost:1234/v1"
	case "vllm":
		return WireChat, "VLLM_API_KEY", "", "http://localhost:8000/v1"
	}
	return "", "", "", ""
}

// MissingKeyError is a provider that needs an API key and has none.
type MissingKeyError struct {
	Provider string
	EnvVar   string
}

func (e *MissingKeyError) Error() string {
	return fmt.Sprintf("%s is not set (needed by provider %s); set it, or set another provider's key (%s) and choose its model with -m, e.g. -m sonnet, -m gpt, -m deepseek, -m gemini (with no -m the first key set chooses), or a service or local server's: -m openrouter/MODEL, -m ollama/MODEL; reins models shows every provider and whether its key is set; reins demo runs without a key",
		e.EnvVar, e.Provider, strings.Join(keyVars(), ", "))
}

// KeyRedirectError is a base URL that would receive the user's API key
// although neither the user nor a folder the user trusted chose it. The
// key is named (an environment variable, or the apiKey field and its
// file), never its value.
type KeyRedirectError struct {
	Provider string
	File     string // the layer that set the base URL
	Key      string // e.g. DEEPSEEK_API_KEY, or providers.deepseek.apiKey in FILE
}

func (e *KeyRedirectError) Error() string {
	return fmt.Sprintf("%s: providers.%s.baseURL would receive %s, but this file is not your config, a --config file or a trusted folder's; set the endpoint with --base-url or the provider's base-URL variable",
		trust.Quote(e.File), e.Provider, e.Key)
}

// Endpoint returns the base URL and API key for provider.
//
// Base URL precedence: baseURLFlag (--base-url) > the provider's base-URL
// environment variable > the config's baseURL > the default. A trailing
// slash is dropped, since adapters append "/chat/completions" or
// "/v1/messages".
//
// Key precedence: the config's apiKey > the provider's key environment
// variable. An explicit apiKey wins because it is the more specific,
// deliberate choice (e.g. a project pointing at its own gateway).
//
// A missing key is a *MissingKeyError before any request, except where no
// key can be needed:
//   - openai with a base URL other than the default: OpenAI-compatible
//     local servers (Ollama, vLLM, llama.cpp) take no key;
//   - deepseek and anthropic with a loopback base URL (localhost,
//     127.0.0.0/8, ::1): this is what lets tests and demos point reins at
//     a local fake server such as `reins mock-llm` without keys, while a
//     real remote endpoint still fails early and clearly.
//
// Keys go only where the user sent them: the user's key (from the
// environment, or an apiKey in a layer the user chose) is sent to the
// default endpoint, --base-url, the base-URL variable, or a baseURL set by
// a layer whose Origin is UserChosen. A baseURL from any other layer that
// would receive it is a *KeyRedirectError. Load never reads such a layer
// today (an untrusted folder's config is skipped); the check is here so a
// layer added later cannot redirect keys by forgetting to say its origin.
//
// The mock provider has no endpoint: it returns "", "", nil.
func (c *Config) Endpoint(provider string, getenv func(string) string, baseURLFlag string) (baseURL, apiKey string, err error) {
	wire, keyEnv, urlEnv, def := ProviderDefaults(provider)
	raw := c.providers[provider]
	if wire == "" && raw.wire != nil && raw.baseURL != nil {
		// A provider of the user's own (checkProviders): its key only
		// through apiKeyEnv or apiKey, its base URL only from the config.
		wire = *raw.wire
	}
	switch wire {
	case "":
		return "", "", fmt.Errorf("unknown provider %q; want one of %s", provider, c.providerList())
	case WireMock:
		return "", "", nil
	}
	if raw.apiKeyEnv != nil {
		// Which of the user's variables is sent is the user's choice
		// alone, like where a key goes.
		if !raw.keyEnvFrom.origin.UserChosen() {
			return "", "", fmt.Errorf("%s: providers.%s.apiKeyEnv would choose which of your variables is sent, but this file is not your config, a --config file or a trusted folder's", trust.Quote(raw.keyEnvFrom.file), provider)
		}
		keyEnv = *raw.apiKeyEnv
	}
	from := ""
	fromLayer := false
	switch {
	case baseURLFlag != "":
		baseURL, from = baseURLFlag, "--base-url"
	case urlEnv != "" && getenv(urlEnv) != "":
		baseURL, from = getenv(urlEnv), urlEnv
	case raw.baseURL != nil && *raw.baseURL != "":
		baseURL, from, fromLayer = *raw.baseURL, "providers."+provider+".baseURL", true
	default:
		baseURL = def
	}
	u, err := checkBaseURL(baseURL)
	if err != nil {
		return "", "", fmt.Errorf("base URL from %s: want an absolute http:// or https:// URL, got %s", from, quoteBounded(baseURL))
	}
	baseURL = strings.TrimRight(baseURL, "/")

	keyName, usersKey := keyEnv, false
	if raw.apiKey != nil && *raw.apiKey != "" {
		apiKey = *raw.apiKey
		keyName = "providers." + provider + ".apiKey in " + trust.Quote(raw.keyFrom.file)
		usersKey = raw.keyFrom.origin.UserChosen()
	} else if keyEnv != "" {
		apiKey = getenv(keyEnv)
		usersKey = apiKey != ""
	}
	if usersKey && fromLayer && !raw.from.origin.UserChosen() {
		return "", "", &KeyRedirectError{Provider: provider, File: raw.from.file, Key: keyName}
	}
	if apiKey == "" {
		optional := keyEnv == "" || keyOptional(provider) || isLoopback(u.Hostname()) || (provider == "openai" && baseURL != def)
		if !optional {
			return "", "", &MissingKeyError{Provider: provider, EnvVar: keyEnv}
		}
	}
	return baseURL, apiKey, nil
}

func checkBaseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("not an absolute http(s) URL")
	}
	return u, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ResolveModel turns a model spec into provider and model. A spec that is
// a modelAliases name is replaced by its PROVIDER/MODEL first (one level:
// aliases do not chain).
func (c *Config) ResolveModel(spec string) (provider, model string, err error) {
	if target, ok := c.ModelAliases[spec]; ok {
		provider, model, err = c.splitKnown(target)
		if err != nil {
			return "", "", fmt.Errorf("model alias %q maps to %q: %w", spec, target, err)
		}
		return provider, model, nil
	}
	if !strings.Contains(spec, "/") && spec != "" {
		// A short name (sonnet, gpt, ...) or a model id without its
		// provider: the catalogue says which (SPEC §12).
		return catalog.Current().Resolve(spec)
	}
	provider, model, err = c.splitKnown(spec)
	if err != nil {
		return "", "", fmt.Errorf("model %q: %w", spec, err)
	}
	return provider, model, nil
}

// shortNames lists the catalogue's short model names.
func shortNames() string {
	return strings.Join(catalog.ShortNames(), ", ")
}

var errModelForm error = modelFormError{}

// modelFormError is errModelForm: a type whose text is built when shown,
// as a value built from Providers would be at every reins start
// (internal/lazy).
type modelFormError struct{}

func (modelFormError) Error() string {
	return "want PROVIDER/MODEL such as " + DefaultModel + " or a modelAliases name; PROVIDER is one of " + providerList()
}

// splitModel splits PROVIDER/MODEL; which providers exist is the
// config's to say (splitKnown): a provider of the user's own may be
// defined in another layer.
func splitModel(spec string) (provider, model string, err error) {
	provider, model, ok := strings.Cut(spec, "/")
	if !ok || provider == "" || model == "" || !validProviderName(provider) {
		return "", "", errModelForm
	}
	return provider, model, nil
}

// splitKnown is splitModel for a provider c knows: a built-in, a preset
// or one of the user's own.
func (c *Config) splitKnown(spec string) (provider, model string, err error) {
	provider, model, err = splitModel(spec)
	if err == nil && !c.known(provider) {
		return "", "", fmt.Errorf("unknown provider %q: want PROVIDER/MODEL such as %s or a modelAliases name; PROVIDER is one of %s", provider, DefaultModel, c.providerList())
	}
	return provider, model, err
}
