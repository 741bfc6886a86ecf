// Package mcpspec is what an MCP server is to reins's configuration: its
// definition (a command or a URL), the validity of its name, the
// mcp__server__tool naming and ${VAR} expansion. It has no runtime, so
// internal/config reads and validates servers without linking the MCP
// client, the sandbox or the tool registry (internal/mcp re-exports these
// names).
package mcpspec

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// Transport is how reins reaches a server.
type Transport string

const (
	// Stdio runs the server as a child process speaking on stdin/stdout.
	Stdio Transport = "stdio"
	// HTTP reaches the server over streamable HTTP.
	HTTP Transport = "http"
)

// Server is one configured MCP server: a command (stdio) or a URL (http).
type Server struct {
	// Name is the server's name: the middle of its tools' names.
	Name    string
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
	// Source says where the server was configured: a config file, a
	// .mcp.json, or "editor" (reins acp's session/new).
	Source string
	// UserConfig: the server was declared by the user's own config
	// ($REINS_HOME/config.yaml or --config), not by a repository's file
	// (.reins/config.yaml, .mcp.json). Only such a server may name a
	// secret variable in ${VAR} (ExpandServerFor).
	UserConfig bool
	// Refused is the secret variable whose expansion ExpandServerFor
	// refused ("" when none): the server is not started.
	Refused string
}

// Transport is HTTP for a server with a URL, else Stdio.
func (s Server) Transport() Transport {
	if s.URL != "" {
		return HTTP
	}
	return Stdio
}

// ValidName reports whether s may name a server: letters, digits, '_' and
// '-', at most 40 bytes, no "__" (which separates the parts of a tool
// name) and no '_' at the end. A name becomes part of tool names models
// must accept, and the end rule keeps that naming one-to-one: server "a_"
// with tool "b" and server "a" with tool "_b" would both be mcp__a___b,
// one server's tool lost and calls routed to the other.
func ValidName(s string) bool {
	if s == "" || len(s) > 40 || strings.Contains(s, "__") || strings.HasSuffix(s, "_") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !toolNameByte(s[i]) {
			return false
		}
	}
	return true
}

// toolNameByte is a byte model APIs accept in a tool name.
func toolNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// Prefix starts every MCP tool name.
const Prefix = "mcp__"

// maxToolName is the longest tool name the model APIs accept.
const maxToolName = 64

// ToolName is the model-facing name of server's tool name, or false when
// the name cannot be one (too long, or characters models refuse).
func ToolName(server, name string) (string, bool) {
	full := Prefix + server + "__" + name
	if name == "" || len(full) > maxToolName {
		return "", false
	}
	for i := 0; i < len(name); i++ {
		if !toolNameByte(name[i]) {
			return "", false
		}
	}
	return full, true
}

// SplitToolName splits mcp__<server>__<tool> into its server and tool;
// ok is false for any other name.
func SplitToolName(full string) (server, name string, ok bool) {
	rest, found := strings.CutPrefix(full, Prefix)
	if !found {
		return "", "", false
	}
	server, name, found = strings.Cut(rest, "__")
	if !found || !ValidName(server) || name == "" {
		return "", "", false
	}
	return server, name, true
}

// IsToolName reports whether name is an MCP tool name (mcp__<server>__<tool>).
func IsToolName(name string) bool {
	_, _, ok := SplitToolName(name)
	return ok
}

// Expand replaces ${VAR} and ${VAR:-default} in s by the environment's
// values, as Claude Code does in .mcp.json: so a project file can name a
// key without holding it. An unset variable without a default is "".
func Expand(s string, getenv func(string) string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		key, def, hasDef := strings.Cut(s[i+2:i+j], ":-")
		v := getenv(key)
		if v == "" && hasDef {
			v = def
		}
		b.WriteString(v)
		s = s[i+j+1:]
	}
}

// ExpandServer applies Expand to every string of s a user may write a
// variable into.
func ExpandServer(s Server, getenv func(string) string) Server {
	if getenv == nil {
		getenv = os.Getenv
	}
	s.Command = Expand(s.Command, getenv)
	s.URL = Expand(s.URL, getenv)
	s.Args = slices.Clone(s.Args)
	for i, a := range s.Args {
		s.Args[i] = Expand(a, getenv)
	}
	s.Env = expandMap(s.Env, getenv)
	s.Headers = expandMap(s.Headers, getenv)
	return s
}

// ExpandServerFor is ExpandServer with the rule for repository files: a
// server not declared by the user's own config (UserConfig false) may not
// name a variable secret reports (the sandbox's scrub rule,
// sandbox.EnvPolicy.Withheld) anywhere in its strings — command, args,
// env, url or headers — or a trusted repository's .mcp.json could hand
// the user's API key to a program or URL of its choosing
// (`env: {X: "${ANTHROPIC_API_KEY}"}`). Such a server comes back
// unexpanded with Refused set to the first such variable, in the order of
// Vars; the MCP manager then refuses to start it.
func ExpandServerFor(s Server, getenv func(string) string, secret func(name string) bool) Server {
	if !s.UserConfig {
		for _, v := range Vars(s) {
			if secret(v) {
				s.Refused = v
				return s
			}
		}
	}
	return ExpandServer(s, getenv)
}

// Vars are the variables s names in ${VAR} or ${VAR:-default}, in the
// order command, args, env and headers (by key), url; each once.
func Vars(s Server) []string {
	var out []string
	// Expand's own parse, with a getenv that records the names.
	record := func(key string) string {
		if !slices.Contains(out, key) {
			out = append(out, key)
		}
		return ""
	}
	add := func(str string) { Expand(str, record) }
	add(s.Command)
	for _, a := range s.Args {
		add(a)
	}
	for _, m := range []map[string]string{s.Env, s.Headers} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			add(m[k])
		}
	}
	add(s.URL)
	return out
}

func expandMap(m map[string]string, getenv func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = Expand(v, getenv)
	}
	return out
}

// Describe is a one-line description of how s is reached, for
// `reins mcp list`: the command and arguments, or the URL.
func (s Server) Describe() string {
	if s.Transport() == HTTP {
		return "http " + s.URL
	}
	return fmt.Sprintf("stdio %s", strings.Join(append([]string{s.Command}, s.Args...), " "))
}
