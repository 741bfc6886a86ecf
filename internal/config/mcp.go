package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"

	"github.com/goccy/go-yaml/ast"

	"github.com/reinsdev/reins/internal/mcpspec"
	"github.com/reinsdev/reins/internal/smallfile"
	"github.com/reinsdev/reins/internal/trust"
)

// MCPJSON is Claude Code's project MCP server file, read as it is in a
// trusted folder (docs/mcp.md).
const MCPJSON = ".mcp.json"

const mcpWant = "a mapping of server NAME: {command, args, env} or {type: http, url, headers}"

// parseMCPServers decodes a config layer's `mcpServers` strictly.
func parseMCPServers(d *decoder, n ast.Node, path string) ([]mcpspec.Server, error) {
	var out []mcpspec.Server
	err := d.each(n, path, mcpWant, func(name string, sv ast.Node, sp string, line int) error {
		if !mcpspec.ValidName(name) {
			return &Error{Kind: KindValue, File: d.file, Key: sp, Line: line, Want: "a server name of letters, digits, '_' and '-' (no \"__\", no '_' at the end, at most 40 bytes)"}
		}
		s := mcpspec.Server{Name: name, Source: d.file}
		var typ *string
		var typNode ast.Node
		err := d.fields(sv, sp, []string{"type", "command", "args", "env", "url", "headers"}, func(k string, v ast.Node, kp string) error {
			var err error
			var str *string
			switch k {
			case "type":
				typ, typNode = nil, v
				typ, err = d.str(v, kp)
			case "command":
				if str, err = d.str(v, kp); str != nil {
					s.Command = *str
				}
			case "args":
				var l *[]string
				if l, err = d.strList(v, kp); l != nil {
					s.Args = *l
				}
			case "env":
				s.Env, err = d.strMap(v, kp)
			case "url":
				if str, err = d.str(v, kp); str != nil {
					s.URL = *str
					if _, uerr := checkBaseURL(s.URL); uerr != nil && err == nil {
						err = d.valueErr(d.resolve(v), kp, "an absolute http:// or https:// URL")
					}
				}
			case "headers":
				s.Headers, err = d.strMap(v, kp)
			}
			return err
		})
		if err != nil {
			return err
		}
		if msg := checkMCPServer(s, typ); msg != "" {
			at := sv
			if typNode != nil {
				at = typNode
			}
			return &Error{Kind: KindValue, File: d.file, Key: sp, Line: d.line(at), Want: msg}
		}
		out = append(out, s)
		return nil
	})
	return out, err
}

// checkMCPServer says what is wrong with a server entry ("" when nothing):
// typ is its `type` (nil: unset, which means stdio unless a url is given).
func checkMCPServer(s mcpspec.Server, typ *string) string {
	t := ""
	if typ != nil {
		t = *typ
	}
	switch t {
	case "":
		if s.URL != "" && s.Command == "" {
			t = "http"
		} else {
			t = "stdio"
		}
	case "stdio", "http":
	default:
		return "type stdio or http (sse is not supported)"
	}
	if t == "stdio" {
		if s.Command == "" || s.URL != "" || len(s.Headers) > 0 {
			return "a stdio server: command (with args and env), and no url or headers"
		}
		return ""
	}
	if s.URL == "" || s.Command != "" || len(s.Args) > 0 || len(s.Env) > 0 {
		return "an http server: url (with headers), and no command, args or env"
	}
	return ""
}

// mcpJSONServer is one server of a .mcp.json.
type mcpJSONServer struct {
	Type    *string           `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// readMCPJSON reads a trusted folder's .mcp.json. It is another tool's
// file, read leniently: a server reins cannot use (an sse server, a bad
// name) is skipped with a warning, a file that is not JSON is skipped with
// a warning, and unknown keys are ignored. A missing file is no layer.
//
// honour is asked about the bytes read (LoadOptions.Honour); a file it
// refuses is no layer.
func readMCPJSON(path string, honour func([]byte) bool) (servers []mcpspec.Server, warnings []string, err error) {
	src, err := smallfile.Read(path, smallfile.Limit)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, []string{trust.Quote(path) + ": skipped: cannot be read"}, nil
	}
	if !honour(src) {
		return nil, nil, nil
	}
	var file struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(src, &file); err != nil {
		return nil, []string{trust.Quote(path) + ": skipped: not a JSON object with mcpServers"}, nil
	}
	names := make([]string, 0, len(file.MCPServers))
	for n := range file.MCPServers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		var e mcpJSONServer
		if err := json.Unmarshal(file.MCPServers[name], &e); err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: server %s skipped: not an object of command, args, env or type, url, headers", trust.Quote(path), quoteBounded(name)))
			continue
		}
		if !mcpspec.ValidName(name) {
			warnings = append(warnings, fmt.Sprintf("%s: server %s skipped: want a name of letters, digits, '_' and '-' (no \"__\", no '_' at the end)", trust.Quote(path), quoteBounded(name)))
			continue
		}
		s := mcpspec.Server{Name: name, Command: e.Command, Args: e.Args, Env: e.Env, URL: e.URL, Headers: e.Headers, Source: path}
		if s.URL != "" {
			if _, uerr := checkBaseURL(s.URL); uerr != nil {
				warnings = append(warnings, fmt.Sprintf("%s: server %s skipped: want an absolute http:// or https:// url", trust.Quote(path), name))
				continue
			}
		}
		if msg := checkMCPServer(s, e.Type); msg != "" {
			warnings = append(warnings, fmt.Sprintf("%s: server %s skipped: want %s", trust.Quote(path), name, msg))
			continue
		}
		servers = append(servers, s)
	}
	return servers, warnings, nil
}

// mergeMCP lays servers over base: a server of a later layer replaces the
// earlier one of the same name whole (fields do not mix between layers).
func mergeMCP(base, over []mcpspec.Server) []mcpspec.Server {
	for _, s := range over {
		if i := slices.IndexFunc(base, func(b mcpspec.Server) bool { return b.Name == s.Name }); i >= 0 {
			base[i] = s
			continue
		}
		base = append(base, s)
	}
	return base
}

// MCPServer returns the configured server named name.
func (c *Config) MCPServer(name string) (mcpspec.Server, bool) {
	i := slices.IndexFunc(c.MCPServers, func(s mcpspec.Server) bool { return s.Name == name })
	if i < 0 {
		return mcpspec.Server{}, false
	}
	return c.MCPServers[i], true
}

func mcpJSONPath(cwd string) string { return filepath.Join(cwd, MCPJSON) }
