package harness

import (
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/subagent/acpchild"
	"github.com/reinsdev/reins/internal/subagent/pichild"
	"github.com/reinsdev/reins/internal/subagent/reinschild"
)

// providers are the subagent providers a session made with o offers, by
// the agent-definition provider name. Each out-of-process provider lives in
// its own package under internal/subagent.
func (h *Harness) providers(o SessionOptions) map[string]subagent.Provider {
	start := h.Config.Subagents.StartTimeout // subagents.startTimeout
	return map[string]subagent.Provider{
		config.ProviderInProcess: &subagent.InProcess{NewChild: h.childFactory(o)},
		config.ProviderPi:        pichild.New(pichild.Options{SessionsDir: h.SessionsDir(), Logf: h.Logf}),
		config.ProviderACP:       acpchild.New(acpchild.Options{Logf: h.Logf, LogPath: h.HostLogPath(), StartTimeout: start, SessionsDir: h.SessionsDir(), MCPServers: h.MCP.Servers()}),
		config.ProviderReins:     reinschild.New(reinschild.Options{Model: o.Model.Provider + "/" + o.Model.Name, BaseURL: o.Model.BaseURL, Logf: h.Logf, StartTimeout: start}),
	}
}

// isolatedCwd is an in-process child's workspace: the request's cwd when
// the manager moved it (an isolated child's worktree), else "" (the
// harness's own).
func isolatedCwd(own, req string) string {
	if req == "" || req == own {
		return ""
	}
	return req
}
