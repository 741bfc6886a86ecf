package cli

import (
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/tool"
)

// SessionFlags are the flags of every command that runs sessions (run, acp,
// sdk, batch, the interactive reins): where the workspace is, which config
// and model, how much a turn may do. They are defined here once so the
// commands spell and explain them alike.
type SessionFlags struct {
	Cwd        string
	Config     string
	Model      string
	BaseURL    string
	Permission string
	MaxSteps   int
	Sandbox    string
	Effort     string
	Network    string
	Wire       string
}

// Register adds the flags to fl; cwdUsage explains --cwd for the command.
func (f *SessionFlags) Register(fl *pflag.FlagSet, cwdUsage string) {
	fl.StringVar(&f.Cwd, "cwd", "", cwdUsage)
	fl.StringVar(&f.Config, "config", "", "an extra config file, applied last")
	fl.StringVarP(&f.Model, "model", "m", "", "model as PROVIDER/MODEL, a short name (sonnet, opus, haiku, gpt, gemini, deepseek) or a model id (default from config, else the first provider whose key is set)")
	fl.StringVar(&f.Effort, "effort", "", "reasoning effort: low, medium or high (default from config or the agent; none: the provider's)")
	fl.StringVar(&f.BaseURL, "base-url", "", "the provider's base URL (any OpenAI-compatible server with openai/MODEL, which then speaks the chat wire)")
	fl.StringVar(&f.Wire, "wire", "", "the provider's wire: chat, responses, anthropic or gemini (default: the config's, else the provider's; openai at a base URL other than OpenAI's: chat)")
	fl.StringVar(&f.Permission, "permission", string(tool.WorkspaceWrite), "read-only, workspace-write or full-access")
	fl.IntVar(&f.MaxSteps, "max-steps", agent.DefaultMaxSteps, "most steps in a turn")
	fl.StringVar(&f.Sandbox, "sandbox", "", "on or off: confine every process reins starts with Landlock (default from config: on)")
	fl.StringVar(&f.Network, "network", "", "on or off: the network of confined processes (default from config sandbox.network: off)")
}

// Check validates what the harness does not: the permission mode and the
// step bound. Errors are usage errors (exit 2) naming the flag.
func (f *SessionFlags) Check() (tool.Permission, error) {
	perm, err := tool.ParsePermission(f.Permission)
	if err != nil {
		return "", &ExitError{Code: ExitUsage, Msg: "--permission: " + err.Error()}
	}
	if f.MaxSteps <= 0 {
		return "", &ExitError{Code: ExitUsage, Msg: "--max-steps: want a positive number"}
	}
	if _, err := llm.ParseEffort(f.Effort); err != nil {
		return "", &ExitError{Code: ExitUsage, Msg: "--effort: want low, medium or high"}
	}
	if f.Sandbox != "" && f.Sandbox != "on" && f.Sandbox != "off" {
		return "", &ExitError{Code: ExitUsage, Msg: "--sandbox: want on or off"}
	}
	if f.Wire != "" && !slices.Contains(config.Wires, f.Wire) {
		return "", &ExitError{Code: ExitUsage, Msg: "--wire: want " + strings.Join(config.Wires, ", ")}
	}
	if f.Network != "" && f.Network != "on" && f.Network != "off" {
		return "", &ExitError{Code: ExitUsage, Msg: "--network: want on or off"}
	}
	return perm, nil
}

// EffortOf is --effort, checked by Check.
func (f *SessionFlags) EffortOf() llm.Effort { return llm.Effort(f.Effort) }

// OpenFlags are what OpenSession reads: the session flags, --agent,
// --max-tokens, and which session to continue (--resume, --continue).
// reins run and the interactive reins share them.
type OpenFlags struct {
	SessionFlags
	Agent     string
	MaxTokens int
	Resume    string
	Continue  bool
}

// InteractiveFlags are the root command's (`reins` with no command): the
// session flags of reins run and --yes. reins registers them, for its
// help and to check them, and reins-tui parses the same command line.
type InteractiveFlags struct {
	OpenFlags
	Yes bool
}

// Register adds the interactive flags to fl.
func (f *InteractiveFlags) Register(fl *pflag.FlagSet) {
	f.SessionFlags.Register(fl, "workspace directory (default: the current directory)")
	fl.StringVar(&f.Agent, "agent", "", "run as this agent definition")
	fl.IntVar(&f.MaxTokens, "max-tokens", 0, "most output tokens per model request (0: the provider's default)")
	fl.StringVar(&f.Resume, "resume", "", "continue this session (any unique id prefix), in its workspace unless --cwd; with no id, list this folder's sessions to pick one")
	fl.BoolVarP(&f.Continue, "continue", "c", false, "continue the latest session of the workspace")
	fl.BoolVarP(&f.Yes, "yes", "y", false, "do not ask before write, edit and bash (--permission stays the ceiling)")
}
