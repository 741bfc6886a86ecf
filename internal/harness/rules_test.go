package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinsdev/reins/internal/rules"
)

// TestSessionRules: a session's tool environment carries the config's
// rules and its agent file's, decided before any question.
func TestSessionRules(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("permissions: {allow: ['bash(go test:*)']}\n"), 0o644)
	os.MkdirAll(filepath.Join(home, "agents"), 0o755)
	os.WriteFile(filepath.Join(home, "agents", "docs.md"), []byte("---\npermissions: {allow: ['write(docs/**)'], deny: ['bash(go test -race:*)']}\n---\nwrite docs\n"), 0o644)
	h, err := New(Options{Home: home, Cwd: cwd, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	m, err := h.ResolveModel("mock/echo", "")
	if err != nil {
		t.Fatal(err)
	}
	decide := func(o SessionOptions, name, args string) rules.Verdict {
		o.Model = m
		s, err := h.NewSession(o)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		v, _ := s.Agent.Env.Rules.Decide(name, json.RawMessage(args))
		return v
	}
	if v := decide(SessionOptions{}, "bash", `{"command":"go test ./..."}`); v != rules.VerdictAllow {
		t.Errorf("config allow: %q", v)
	}
	if v := decide(SessionOptions{}, "write", `{"path":"docs/a.md"}`); v != rules.VerdictAsk {
		t.Errorf("an agent's rule applied without the agent: %q", v)
	}
	if v := decide(SessionOptions{Agent: "docs"}, "write", `{"path":"docs/a.md"}`); v != rules.VerdictAllow {
		t.Errorf("agent allow: %q", v)
	}
	if v := decide(SessionOptions{Agent: "docs"}, "bash", `{"command":"go test -race ./..."}`); v != rules.VerdictDeny {
		t.Errorf("agent deny over config allow: %q", v)
	}
}
