package config

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinsdev/reins/internal/mcpspec"
)

func serverNames(ss []mcpspec.Server) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name+"@"+filepath.Base(filepath.Dir(s.Source))+"/"+filepath.Base(s.Source))
	}
	return out
}

// The layers and .mcp.json: a nearer layer's server replaces a farther
// one's whole, .mcp.json sits between the user's config and the project's.
func TestMCPServersLayers(t *testing.T) {
	home := "mcpServers:\n  a: {command: a-home}\n  b: {command: b-home, args: [x], env: {K: v}}\n  c: {type: http, url: 'https://c.example/mcp', headers: {Authorization: 'Bearer ${TOKEN}'}}\n"
	cwd := "mcpServers:\n  b: {type: http, url: 'http://127.0.0.1:9/mcp'}\n"
	opts := layers(t, home, cwd, "")
	writeFile(t, filepath.Join(opts.Cwd, ".mcp.json"), `{"mcpServers": {
		"a": {"command": "npx", "args": ["-y", "x"], "env": {"E": "1"}, "cwd": "ignored"},
		"b": {"command": "from-json"},
		"old": {"type": "sse", "url": "https://sse.example"},
		"bad name": {"command": "x"},
		"d": {"type": "http", "url": "https://d.example/mcp"}
	}, "other": true}`)
	c, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a@work/.mcp.json", "b@.reins/config.yaml", "c@home/config.yaml", "d@work/.mcp.json"}
	if got := serverNames(c.MCPServers); !cmp.Equal(got, want) {
		t.Errorf("servers %v, want %v", got, want)
	}
	a, _ := c.MCPServer("a")
	if a.Command != "npx" || !slices.Equal(a.Args, []string{"-y", "x"}) || a.Env["E"] != "1" || a.Transport() != mcpspec.Stdio {
		t.Errorf("a = %+v", a)
	}
	b, _ := c.MCPServer("b")
	if b.Transport() != mcpspec.HTTP || b.Command != "" || b.Env != nil {
		t.Errorf("b = %+v: the project's http entry must replace the json's stdio one whole", b)
	}
	cs, _ := c.MCPServer("c")
	if cs.Headers["Authorization"] != "Bearer ${TOKEN}" {
		t.Errorf("c = %+v (expansion happens at use)", cs)
	}
	if len(c.MCPWarnings) != 2 || !strings.Contains(strings.Join(c.MCPWarnings, "\n"), "server old skipped: want type stdio or http") {
		t.Errorf("warnings %q", c.MCPWarnings)
	}
	if !slices.Contains(ProjectFiles(opts), ".mcp.json") {
		t.Errorf("ProjectFiles %v lacks .mcp.json", ProjectFiles(opts))
	}

	// Untrusted: neither the project's config nor its .mcp.json count.
	opts.Trusted = false
	c, err = Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := serverNames(c.MCPServers); !cmp.Equal(got, []string{"a@home/config.yaml", "b@home/config.yaml", "c@home/config.yaml"}) {
		t.Errorf("untrusted: servers %v", got)
	}
}

// A .mcp.json that is not JSON is skipped with a warning: another tool's
// file never stops reins.
func TestMCPJSONBroken(t *testing.T) {
	opts := layers(t, "", "", "")
	writeFile(t, filepath.Join(opts.Cwd, ".mcp.json"), `{"mcpServers": [`)
	c, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.MCPServers) != 0 || len(c.MCPWarnings) != 1 || !strings.Contains(c.MCPWarnings[0], "skipped") {
		t.Errorf("servers %v, warnings %q", c.MCPServers, c.MCPWarnings)
	}
}

func TestMCPServersErrors(t *testing.T) {
	for _, tc := range []struct {
		body, key, want string
	}{
		{"mcpServers: {x: {}}\n", "mcpServers.x", "a stdio server"},
		{"mcpServers: {x: {command: a, url: 'http://h/'}}\n", "mcpServers.x", "a stdio server"},
		{"mcpServers: {x: {type: http}}\n", "mcpServers.x", "an http server"},
		{"mcpServers: {x: {type: http, url: 'http://h/', env: {A: b}}}\n", "mcpServers.x", "an http server"},
		{"mcpServers: {x: {type: sse, url: 'http://h/'}}\n", "mcpServers.x", "sse is not supported"},
		{"mcpServers: {x: {type: http, url: 'ftp://h/'}}\n", "mcpServers.x.url", "http:// or https://"},
		{"mcpServers: {x: {command: a, cwd: /}}\n", "mcpServers.x.cwd", "one of type"},
		{"mcpServers: {a__b: {command: a}}\n", "mcpServers.a__b", "server name"},
		{"mcpServers: [a]\n", "mcpServers", "a mapping of server NAME"},
	} {
		_, err := Load(layers(t, tc.body, "", ""))
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != tc.key || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v (key %q), want key %q and %q", tc.body, err, keyOf(ce), tc.key, tc.want)
		}
	}
}

func keyOf(e *Error) string {
	if e == nil {
		return ""
	}
	return e.Key
}

// Agent files name servers and MCP tools; names are kept as written and
// an unconfigured server is a warning.
func TestAgentMCP(t *testing.T) {
	opts := layers(t, "mcpServers: {everything: {command: x}}\n", "", "")
	writeFile(t, filepath.Join(opts.Home, "agents", "m.md"), agentFile(
		"name: m\nmcpServers: [everything, missing, everything]\ntools: [Read, mcp__everything__echo, mcp__other__Do_It]\n", "body"))
	writeFile(t, filepath.Join(opts.Home, "agents", "bad.md"), agentFile("name: bad\nmcpServers: [a/b]\n", ""))
	cfg, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	agents, warnings, err := LoadAgents(opts, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ag, ok := agents.Get("m")
	if !ok {
		t.Fatalf("agent m not loaded: %v", warnings)
	}
	if !slices.Equal(ag.MCPServers, []string{"everything", "missing"}) {
		t.Errorf("MCPServers %v", ag.MCPServers)
	}
	if !slices.Equal(ag.Tools, []string{"read", "mcp__everything__echo", "mcp__other__Do_It"}) {
		t.Errorf("Tools %v", ag.Tools)
	}
	var ws []string
	for _, w := range warnings {
		ws = append(ws, w.String())
	}
	all := strings.Join(ws, "\n")
	if !strings.Contains(all, `MCP server "missing" is not configured`) || strings.Contains(all, `"everything" is not configured`) {
		t.Errorf("warnings:\n%s", all)
	}
	if agents.Broken("bad") == nil || !strings.Contains(agents.Broken("bad").Error(), "mcpServers") {
		t.Errorf("bad agent: %v", agents.Broken("bad"))
	}
}
