package cli

import (
	"fmt"
	"io"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/internal/trust"
)

// OpenSession is the session setup reins run and the interactive reins
// (reins-tui) share, so that both start a session from the same flags the
// same way: the flags checked, the session to resume picked (--continue),
// the harness opened (its notices on stderr), the agent applied and the
// model resolved. It returns the harness, which the caller closes, the
// session options and the agent (nil without --agent).
func OpenSession(stderr io.Writer, f *OpenFlags) (*harness.Harness, harness.SessionOptions, *config.Agent, error) {
	var opts harness.SessionOptions
	perm, err := f.Check()
	if err != nil {
		return nil, opts, nil, err
	}
	if f.MaxTokens < 0 {
		return nil, opts, nil, &ExitError{Code: ExitUsage, Msg: "--max-tokens: want 0 (the provider's default) or a positive number"}
	}
	if err := PickSession(f); err != nil {
		return nil, opts, nil, err
	}
	h, err := harness.New(harness.Options{Cwd: f.Cwd, ConfigFile: f.Config, Sandbox: f.Sandbox, Network: f.Network})
	if err != nil {
		return nil, opts, nil, err
	}
	NoticeUntrusted(stderr, h)
	WarnBroken(stderr, h)
	h.SandboxNotice(stderr)
	opts = harness.SessionOptions{MaxSteps: f.MaxSteps, MaxTokens: f.MaxTokens, Permission: perm, Resume: f.Resume}
	modelSpec, agent, err := agentOptions(h, f.Agent, f.Model, &opts)
	if err == nil {
		h.Effort, h.Wire = runEffort(f, agent), f.Wire
		opts.Model, err = h.ResolveModel(modelSpec, f.BaseURL)
	}
	if err != nil {
		h.Close()
		return nil, opts, nil, err
	}
	noticeModel(stderr, h, modelSpec, opts.Model)
	return h, opts, agent, nil
}

// agentOptions applies --agent NAME to opts (its system prompt, tools,
// instructions, MCP servers) and returns the model spec to use: model (-m)
// if set, else the agent's; and the agent (nil without --agent). An unknown, broken, untrusted or out-of-process agent
// is a usage error.
func agentOptions(h *harness.Harness, agentName, model string, opts *harness.SessionOptions) (string, *config.Agent, error) {
	modelSpec := model
	var ag *config.Agent
	if agentName != "" {
		var ok bool
		ag, ok = h.Agents.Get(agentName)
		if b := h.Agents.Broken(agentName); !ok && b != nil {
			return "", nil, &ExitError{Code: ExitUsage, Msg: "--agent " + agentName + ": " + b.Error()}
		}
		if !ok {
			for _, ig := range h.Agents.Ignored() {
				if ig.Name == agentName {
					return "", nil, &ExitError{Code: ExitUsage, Msg: fmt.Sprintf("--agent %s: defined only in this untrusted folder (%s); run: reins trust %s",
						agentName, trust.Quote(ig.Source), trust.ShellArg(h.Cwd))}
				}
			}
			return "", nil, &ExitError{Code: ExitUsage, Msg: fmt.Sprintf("--agent %s: no such agent (see reins agents)", agentName)}
		}
		if ag.Provider != "" && ag.Provider != "inprocess" {
			return "", nil, &ExitError{Code: ExitUsage, Msg: fmt.Sprintf("--agent %s: a %s agent runs only as a subagent", agentName, ag.Provider)}
		}
		if modelSpec == "" {
			modelSpec = ag.Model
		}
		opts.System, opts.Tools, opts.NoInstructions = ag.SystemPrompt, ag.Tools, ag.NoInstructions
		opts.Agent = ag.Name
		opts.MCPServers = ag.MCPServers
		opts.Skills = ag.Skills
		opts.ToolProfile = tool.Profile(ag.ToolProfile)
	}
	return modelSpec, ag, nil
}
