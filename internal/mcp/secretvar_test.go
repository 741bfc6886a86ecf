package mcp

import (
	"errors"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reinsdev/reins/internal/mcpspec"
	"github.com/reinsdev/reins/internal/sandbox"
)

// TestExpandSecretRule: the ${VAR} rule of repository-declared servers is
// the sandbox's scrub rule (EnvPolicy.Withheld): a secret name or a
// provider's key variable (Deny) is refused in any string of the server,
// a variable sandbox.env.pass lets through is not, and a server of the
// user's own config may name anything.
func TestExpandSecretRule(t *testing.T) {
	env := sandbox.EnvPolicy{Pass: []string{"GITHUB_TOKEN"}, Deny: []string{"OPENROUTER"}}
	getenv := func(k string) string { return "value-of-" + k }
	for _, tc := range []struct {
		name    string
		srv     mcpspec.Server
		refused string
	}{
		{"env", mcpspec.Server{Command: "x", Env: map[string]string{"A": "${ANTHROPIC_API_KEY}"}}, "ANTHROPIC_API_KEY"},
		{"arg with default", mcpspec.Server{Command: "x", Args: []string{"--t=${MY_SECRET:-none}"}}, "MY_SECRET"},
		{"header", mcpspec.Server{URL: "https://h/${PLAIN}", Headers: map[string]string{"Authorization": "Bearer ${API_AUTH}"}}, "API_AUTH"},
		{"command", mcpspec.Server{Command: "${DB_PASSWORD}"}, "DB_PASSWORD"},
		{"deny by list", mcpspec.Server{Command: "x", Env: map[string]string{"K": "${OPENROUTER}"}}, "OPENROUTER"},
		{"passed", mcpspec.Server{Command: "x", Env: map[string]string{"G": "${GITHUB_TOKEN}"}}, ""},
		{"plain", mcpspec.Server{Command: "x", Args: []string{"${HOME}/${PLAIN}"}}, ""},
		{"user's own", mcpspec.Server{Command: "x", Env: map[string]string{"A": "${ANTHROPIC_API_KEY}"}, UserConfig: true}, ""},
	} {
		got := mcpspec.ExpandServerFor(tc.srv, getenv, env.Withheld)
		if got.Refused != tc.refused {
			t.Errorf("%s: Refused = %q, want %q", tc.name, got.Refused, tc.refused)
		}
		all := strings.Join(append(append([]string{got.Command, got.URL}, got.Args...), slices.Collect(mapValues(got.Env, got.Headers))...), " ")
		if tc.refused != "" && strings.Contains(all, "value-of-") {
			t.Errorf("%s: a refused server was expanded: %s", tc.name, all)
		}
		if tc.refused == "" && strings.Contains(all, "${") {
			t.Errorf("%s: not expanded: %s", tc.name, all)
		}
	}
}

func mapValues(ms ...map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, m := range ms {
			for _, v := range m {
				if !yield(v) {
					return
				}
			}
		}
	}
}

// TestRefusedServerNeverStarts: the manager fails a refused server at its
// first use with FailSecretVar, naming the variable (escaped: it comes
// from a repository's file), and never connects to it.
func TestRefusedServerNeverStarts(t *testing.T) {
	m := NewManager([]mcpspec.Server{{Name: "repo", Command: "x", Refused: "EVIL_KEY\x1b[2J"}}, Options{})
	defer m.Close()
	var dialed atomic.Int32
	m.dial = func(mcpspec.Server) (io.ReadCloser, io.WriteCloser) {
		dialed.Add(1)
		return nil, nil
	}
	_, err := m.Tools("repo")
	var me *Error
	if !errors.As(err, &me) || me.Failure != FailSecretVar {
		t.Fatalf("Tools: %v, want a FailSecretVar", err)
	}
	if msg := me.Error(); !strings.Contains(msg, "MCP server repo was not started") || !strings.Contains(msg, `${EVIL_KEY\x1b[2J}`) || strings.Contains(msg, "\x1b") {
		t.Errorf("error text: %q", msg)
	}
	if st, _ := m.Status("repo"); st != StateFailed {
		t.Errorf("state %s", st)
	}
	if n := dialed.Load(); n != 0 {
		t.Errorf("the refused server was dialed %d times", n)
	}
}
