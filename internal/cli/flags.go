package main

import (
	"github.com/spf13/pflag"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/tool"
)

// sessionFlags are the flags of every command that runs sessions (run, acp,
// sdk): where the workspace is, which config and model, how much a turn may
// do. They are defined here once so the three commands spell and explain
// them alike.
type sessionFlags struct {
	cwd        string
	config     string
	model      string
	baseURL    string
	permission string
	maxSteps   int
	sandbox    string
	effort     string
	network    string
}

// register adds the flags to fl; cwdUsage explains --cwd for the command.
func (f *sessionFlags) register(fl *pflag.FlagSet, cwdUsage string) {
	fl.StringVar(&f.cwd, "cwd", "", cwdUsage)
	fl.StringVar(&f.config, "config", "", "an extra config file, applied last")
	fl.StringVarP(&f.model, "model", "m", "", "model as PROVIDER/MODEL, a short name (sonnet, opus, haiku, gpt, gemini, deepseek) or a model id (default from config, else the first provider whose key is set)")
	fl.StringVar(&f.effort, "effort", "", "reasoning effort: low, medium or high (default from config or the agent; none: the provider's)")
	fl.StringVar(&f.baseURL, "base-url", "", "the provider's base URL (any OpenAI-compatible server with openai/MODEL)")
	fl.StringVar(&f.permission, "permission", string(tool.WorkspaceWrite), "read-only, workspace-write or full-access")
	fl.IntVar(&f.maxSteps, "max-steps", agent.DefaultMaxSteps, "most steps in a turn")
	fl.StringVar(&f.sandbox, "sandbox", "", "on or off: confine every process reins starts with Landlock (default from config: on)")
	fl.StringVar(&f.network, "network", "", "on or off: the network of confined processes (default from config sandbox.network: off)")
}

// check validates what the harness does not: the permission mode and the
// step bound. Errors are usage errors (exit 2) naming the flag.
func (f *sessionFlags) check() (tool.Permission, error) {
	perm, err := tool.ParsePermission(f.permission)
	if err != nil {
		return "", &exitError{code: exitUsage, msg: "--permission: " + err.Error()}
	}
	if f.maxSteps <= 0 {
		return "", &exitError{code: exitUsage, msg: "--max-steps: want a positive number"}
	}
	if _, err := llm.ParseEffort(f.effort); err != nil {
		return "", &exitError{code: exitUsage, msg: "--effort: want low, medium or high"}
	}
	if f.sandbox != "" && f.sandbox != "on" && f.sandbox != "off" {
		return "", &exitError{code: exitUsage, msg: "--sandbox: want on or off"}
	}
	if f.network != "" && f.network != "on" && f.network != "off" {
		return "", &exitError{code: exitUsage, msg: "--network: want on or off"}
	}
	return perm, nil
}

// effortOf is --effort, checked by check.
func (f *sessionFlags) effortOf() llm.Effort { return llm.Effort(f.effort) }
