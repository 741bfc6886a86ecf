package acpchild

import (
	"slices"
	"sort"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinsdev/reins/internal/mcpspec"
)

// mcpServers are the MCP servers the child's agent file names
// (`mcpServers`), as session/new carries them: stdio servers always (every
// ACP agent must take them), http servers only when the child said in
// initialize that it takes them. A name no server has, or an http server
// the child cannot take, is left out with a host-log line.
func (r *run) mcpServers(http bool) []sdk.McpServer {
	out := []sdk.McpServer{}
	for _, name := range r.req.Agent.MCPServers {
		i := slices.IndexFunc(r.p.opts.MCPServers, func(s mcpspec.Server) bool { return s.Name == name })
		if i < 0 {
			r.p.logf("acp child %s (%s): MCP server %s is not configured; not passed", r.req.RunID, r.req.Agent.Name, name)
			continue
		}
		s := r.p.opts.MCPServers[i]
		if s.Transport() == mcpspec.HTTP {
			if !http {
				r.p.logf("acp child %s (%s): MCP server %s is an http server and the child takes none; not passed", r.req.RunID, r.req.Agent.Name, name)
				continue
			}
			h := &sdk.McpServerHttpInline{Name: s.Name, Type: "http", Url: s.URL, Headers: []sdk.HttpHeader{}}
			for _, k := range sortedKeys(s.Headers) {
				h.Headers = append(h.Headers, sdk.HttpHeader{Name: k, Value: s.Headers[k]})
			}
			out = append(out, sdk.McpServer{Http: h})
			continue
		}
		st := &sdk.McpServerStdio{Name: s.Name, Command: s.Command, Args: append([]string{}, s.Args...), Env: []sdk.EnvVariable{}}
		for _, k := range sortedKeys(s.Env) {
			st.Env = append(st.Env, sdk.EnvVariable{Name: k, Value: s.Env[k]})
		}
		out = append(out, sdk.McpServer{Stdio: st})
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
