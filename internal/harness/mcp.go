package harness

import (
	"errors"
	"slices"
	"sync"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/mcp"
	"github.com/reinsdev/reins/internal/mcpspec"
	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/tool"
)

// newMCP is the manager of the configured MCP servers: none starts until a
// session needs its tools. ${VAR} in their strings is expanded from the
// environment (docs/mcp.md); a server a repository declared may not name a
// variable the sandbox withholds as a secret, and is refused instead.
func (h *Harness) newMCP(servers []mcpspec.Server) *mcp.Manager {
	expanded := make([]mcpspec.Server, 0, len(servers))
	for _, s := range servers {
		expanded = append(expanded, mcpspec.ExpandServerFor(s, h.Getenv, h.Sandbox.Env.Withheld))
	}
	return mcp.NewManager(expanded, h.mcpOptions())
}

// AddMCPServers adds servers (an editor's, from ACP session/new) to the
// configured ones, replacing a configured server of the same name: the
// editor's list is the user's choice for that session. Their strings are
// taken as given (no ${VAR} expansion). Call it before the first session;
// it returns an error when a server has already started.
func (h *Harness) AddMCPServers(servers []mcpspec.Server) error {
	for _, s := range h.MCP.Servers() {
		if st, _ := h.MCP.Status(s.Name); st != mcp.StateIdle {
			return errors.New("harness: MCP servers added after one started")
		}
	}
	all := h.MCP.Servers()
	for _, s := range servers {
		if i := slices.IndexFunc(all, func(c mcpspec.Server) bool { return c.Name == s.Name }); i >= 0 {
			all[i] = s
			continue
		}
		all = append(all, s)
	}
	h.MCP = mcp.NewManager(all, h.mcpOptions())
	return nil
}

// mcpOptions are the options of the harness's MCP manager. A server's
// policy is the configuration's (mcp.ServerPolicy), read when the server
// starts: the ACP server and the temporal worker adjust h.Sandbox after
// New.
func (h *Harness) mcpOptions() mcp.Options {
	return mcp.Options{Logf: h.Logf, StartTimeout: h.Config.Subagents.StartTimeout, Dir: h.Cwd, Version: h.Version,
		Policy: func() sandbox.Policy { return mcp.ServerPolicy(h.Sandbox, h.Cwd) }}
}

// mcpRule is which MCP tools a session made with o may have
// (docs/mcp.md, "Which sessions get which tools"): a top-level session
// without a tool allowlist has every server's; otherwise a session has the
// tools its allowlist names and every tool of the servers it names
// (MCPServers). A child never has more than its parent (o.mcpWithin).
func mcpRule(o SessionOptions) func(name string) bool {
	top := o.Parent == ""
	return func(name string) bool {
		server, _, ok := mcpspec.SplitToolName(name)
		if !ok {
			return false
		}
		own := slices.Contains(o.MCPServers, server) ||
			(o.Tools != nil && slices.Contains(o.Tools, name)) ||
			(top && o.Tools == nil)
		return own && (o.mcpWithin == nil || o.mcpWithin(name))
	}
}

// mcpTools starts (once per harness, under the configuration's policy,
// whatever the session's mode) the servers a session made with o may use
// and returns their tools that mcpRule allows. A server that fails is in the host log and `reins mcp list`; a tool the
// session named explicitly whose server failed stands in with the fixed
// failure text, so the model is not left guessing.
func (h *Harness) mcpTools(o SessionOptions, allow func(string) bool) []tool.Tool {
	var wants []string
	consider := func(server string) {
		if h.MCP.Has(server) && !slices.Contains(wants, server) {
			wants = append(wants, server)
		}
	}
	top := o.Parent == ""
	for _, s := range h.MCP.Servers() {
		if (top && o.Tools == nil) || slices.Contains(o.MCPServers, s.Name) {
			consider(s.Name)
		}
	}
	for _, n := range o.Tools {
		if s, _, ok := mcpspec.SplitToolName(n); ok {
			consider(s)
		}
	}
	if len(wants) == 0 {
		return nil
	}
	got := make([][]*mcp.Tool, len(wants))
	errs := make([]error, len(wants))
	var wg sync.WaitGroup
	for i, w := range wants {
		wg.Go(func() { got[i], errs[i] = h.MCP.Tools(w) })
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
				if s, _, ok := mcpspec.SplitToolName(n); ok && s == w && allow(n) {
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
		if mcpspec.IsToolName(n) && (ag == nil || !slices.Contains(ag.Tools, n)) {
			continue
		}
		out = append(out, n)
	}
	return out
}

// MCPServerStatus is one configured server as `reins mcp list` shows it.
type MCPServerStatus struct {
	Server mcpspec.Server
	State  mcp.State
	// Err is why the server failed or stopped (a fixed text), else nil.
	Err   *mcp.Error
	Tools []*mcp.Tool
}

// MCPStatus starts every configured server, in parallel and as any
// session would, and reports each: its state, its failure and its tools.
func (h *Harness) MCPStatus() []MCPServerStatus {
	servers := h.MCP.Servers()
	out := make([]MCPServerStatus, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() {
			ts, _ := h.MCP.Tools(s.Name)
			st, err := h.MCP.Status(s.Name)
			out[i] = MCPServerStatus{Server: s, State: st, Err: err, Tools: ts}
		})
	}
	wg.Wait()
	return out
}
