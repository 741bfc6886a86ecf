package harness

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/mcp"
	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/tool"
)

// newMCP is the manager of the configured MCP servers: none starts until a
// session needs its tools. ${VAR} in their strings is expanded from the
// environment (docs/mcp.md).
func (h *Harness) newMCP(servers []mcp.Server) *mcp.Manager {
	expanded := make([]mcp.Server, 0, len(servers))
	for _, s := range servers {
		expanded = append(expanded, mcp.ExpandServer(s, h.Getenv))
	}
	return mcp.NewManager(expanded, h.MCPOptions())
}

// MCPOptions are the options of every MCP manager of this harness (the
// configured servers', and each ACP session's editor servers').
func (h *Harness) MCPOptions() mcp.Options {
	return mcp.Options{Logf: h.Logf, StartTimeout: h.Config.Subagents.StartTimeout, Dir: h.Cwd, Version: h.Version}
}

// mcpRule is which MCP tools a session made with o may have
// (docs/mcp.md, "Which sessions get which tools"): a top-level session
// without a tool allowlist has every server's; otherwise a session has the
// tools its allowlist names and every tool of the servers it names
// (MCPServers). A child never has more than its parent (o.mcpWithin).
func mcpRule(o SessionOptions) func(name string) bool {
	top := o.Parent == ""
	return func(name string) bool {
		server, _, ok := mcp.SplitToolName(name)
		if !ok {
			return false
		}
		own := slices.Contains(o.MCPServers, server) ||
			(o.Tools != nil && slices.Contains(o.Tools, name)) ||
			(top && o.Tools == nil)
		return own && (o.mcpWithin == nil || o.mcpWithin(name))
	}
}

// mcpTools starts (once per harness, or per editor session) the servers a
// session made with o may use and returns their tools that mcpRule allows.
// A server that fails is in the host log and `reins mcp list`; a tool the
// session named explicitly whose server failed stands in with the fixed
// failure text, so the model is not left guessing.
func (h *Harness) mcpTools(o SessionOptions, perm tool.Permission, allow func(string) bool) []tool.Tool {
	managers := []*mcp.Manager{o.MCP, h.MCP} // the editor's servers first
	type want struct {
		mgr    *mcp.Manager
		server string
	}
	var wants []want
	seen := map[string]bool{}
	consider := func(server string) {
		if seen[server] {
			return
		}
		seen[server] = true
		for _, m := range managers {
			if m.Has(server) {
				wants = append(wants, want{m, server})
				return
			}
		}
	}
	top := o.Parent == ""
	for _, m := range managers {
		for _, s := range m.Servers() {
			if (top && o.Tools == nil) || slices.Contains(o.MCPServers, s.Name) {
				consider(s.Name)
			}
		}
	}
	for _, n := range o.Tools {
		if s, _, ok := mcp.SplitToolName(n); ok {
			consider(s)
		}
	}
	if len(wants) == 0 {
		return nil
	}
	pol := h.Sandbox
	pol.Mode, pol.Workspace = sandbox.Mode(perm), h.Cwd
	got := make([][]*mcp.Tool, len(wants))
	errs := make([]error, len(wants))
	var wg sync.WaitGroup
	for i, w := range wants {
		wg.Go(func() { got[i], errs[i] = w.mgr.Tools(context.Background(), w.server, pol) })
	}
	wg.Wait()
	var out []tool.Tool
	for i, w := range wants {
		for _, t := range got[i] {
			if allow(t.Spec().Name) {
				out = append(out, t)
			}
		}
		var me *mcp.Error
		if errs[i] != nil && errors.As(errs[i], &me) {
			for _, n := range o.Tools {
				if s, _, ok := mcp.SplitToolName(n); ok && s == w.server && allow(n) {
					out = append(out, mcp.Unavailable(n, me))
				}
			}
		}
	}
	return out
}

// childTools is a child's allowlist with the MCP tools its agent file does
// not name itself taken out: an agent gets MCP tools only by naming them
// (or their server), never by inheriting its parent's list.
func childTools(tools []string, ag *config.Agent) []string {
	if tools == nil {
		return nil
	}
	out := []string{}
	for _, n := range tools {
		if mcp.IsToolName(n) && (ag == nil || !slices.Contains(ag.Tools, n)) {
			continue
		}
		out = append(out, n)
	}
	return out
}
