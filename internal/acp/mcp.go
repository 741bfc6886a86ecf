package acp

import (
	"strconv"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinsdev/reins/internal/mcpspec"
)

// maxEditorServers bounds the MCP servers one session/new may bring.
const maxEditorServers = 64

// editorServers turns the MCP servers of an editor's session/new or
// session/load into reins's: stdio and http ones; sse (which reins does
// not advertise) is refused with a clear message. Editors name servers
// for humans ("GitHub (work)"), so a name is made a valid server name
// (mcp.ValidName) by keeping letters, digits, '_' and '-', and a clash
// gets a -2, -3 suffix: the model sees tools as mcp__<that name>__<tool>.
func editorServers(in []sdk.McpServer) ([]mcpspec.Server, error) {
	if len(in) > maxEditorServers {
		return nil, sdk.NewInvalidParams(map[string]any{"error": "too many MCP servers (at most " + strconv.Itoa(maxEditorServers) + ")"})
	}
	var out []mcpspec.Server
	used := map[string]bool{}
	for _, s := range in {
		var srv mcpspec.Server
		switch {
		case s.Stdio != nil:
			if s.Stdio.Command == "" {
				return nil, sdk.NewInvalidParams(map[string]any{"error": "an MCP server has no command"})
			}
			srv = mcpspec.Server{Name: s.Stdio.Name, Command: s.Stdio.Command, Args: s.Stdio.Args}
			for _, e := range s.Stdio.Env {
				if srv.Env == nil {
					srv.Env = map[string]string{}
				}
				srv.Env[e.Name] = e.Value
			}
		case s.Http != nil:
			if !strings.HasPrefix(s.Http.Url, "http://") && !strings.HasPrefix(s.Http.Url, "https://") {
				return nil, sdk.NewInvalidParams(map[string]any{"error": "an http MCP server's url must be an absolute http:// or https:// URL"})
			}
			srv = mcpspec.Server{Name: s.Http.Name, URL: s.Http.Url}
			for _, hd := range s.Http.Headers {
				if srv.Headers == nil {
					srv.Headers = map[string]string{}
				}
				srv.Headers[hd.Name] = hd.Value
			}
		default:
			return nil, sdk.NewInvalidParams(map[string]any{"error": "reins supports stdio and http MCP servers, not sse; configure the server for http"})
		}
		srv.Name = uniqueName(serverName(srv.Name), used)
		srv.Source = "editor"
		out = append(out, srv)
	}
	return out, nil
}

// serverName makes an editor's display name a valid server name.
func serverName(display string) string {
	var b strings.Builder
	prev := byte(0)
	for i := 0; i < len(display) && b.Len() < 32; i++ {
		c := display[i]
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-'
		if !ok {
			c = '_'
		}
		if c == '_' && (prev == '_' || b.Len() == 0) {
			continue
		}
		b.WriteByte(c)
		prev = c
	}
	name := strings.TrimRight(b.String(), "_")
	if name == "" {
		return "server"
	}
	return name
}

func uniqueName(name string, used map[string]bool) string {
	n := name
	for i := 2; used[n]; i++ {
		n = name + "-" + strconv.Itoa(i)
	}
	used[n] = true
	return n
}
