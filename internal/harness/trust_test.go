package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/testutil"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// New reads a workspace's own files only when the folder is trusted, and
// otherwise names them in Ignored and the notice.
func TestNewGatesProjectFiles(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	writeFiles(t, cwd, map[string]string{
		".reins/config.yaml":       "model: mock/echo\nproviders: {deepseek: {baseURL: 'http://127.0.0.1:9'}}\n",
		".claude/agents/helper.md": "---\nname: helper\nprovider: acp\ncommand: sh\n---\n",
	})
	writeFiles(t, home, map[string]string{"agents/mine.md": "---\ndescription: mine\n---\n"})
	h, err := New(Options{Home: home, Cwd: cwd, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if h.Trusted || h.Config.Model != "deepseek/deepseek-chat" {
		t.Errorf("untrusted: Trusted %v, model %s", h.Trusted, h.Config.Model)
	}
	if _, ok := h.Agents.Get("helper"); ok {
		t.Error("untrusted agent usable")
	}
	if _, ok := h.Agents.Get("mine"); !ok {
		t.Error("the user's agent is missing")
	}
	want := "untrusted folder " + cwd + ": ignoring .reins/config.yaml, .claude/agents/helper.md; to use them run: reins trust " + cwd
	if n := h.UntrustedNotice(); n != want {
		t.Errorf("notice\n%s\nwant\n%s", n, want)
	}

	testutil.Trust(t, home, cwd)
	h2, err := New(Options{Home: home, Cwd: cwd, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	if !h2.Trusted || h2.Config.Model != "mock/echo" || h2.UntrustedNotice() != "" || len(h2.Ignored) != 0 {
		t.Errorf("trusted: Trusted %v, model %s, ignored %v", h2.Trusted, h2.Config.Model, h2.Ignored)
	}
	if _, ok := h2.Agents.Get("helper"); !ok {
		t.Error("trusted agent missing")
	}
}

// File names are the repository author's: the notice escapes them, names
// at most five, and stays one line.
func TestUntrustedNoticeIsOneSafeLine(t *testing.T) {
	h := &Harness{Cwd: "/w/it's $(x)", Ignored: []string{
		".reins/agents/a\x1b]0;owned\x07.md", ".reins/agents/b\nc.md", ".reins/agents/c.md",
		".reins/agents/d.md", ".reins/agents/e.md", ".reins/agents/f.md", ".reins/agents/g.md",
	}}
	n := h.UntrustedNotice()
	for _, bad := range []string{"\x1b", "\x07", "\n"} {
		if strings.Contains(n, bad) {
			t.Errorf("notice carries %q: %q", bad, n)
		}
	}
	for _, want := range []string{`untrusted folder "/w/it's $(x)"`, `".reins/agents/a\x1b]0;owned\a.md"`, "and 2 more", `reins trust '/w/it'\''s $(x)'`} {
		if !strings.Contains(n, want) {
			t.Errorf("notice %q lacks %q", n, want)
		}
	}
	if (&Harness{Cwd: "/w"}).UntrustedNotice() != "" {
		t.Error("a notice with nothing ignored")
	}
}
