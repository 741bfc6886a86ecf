package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/session"
)

// TestViewCommand runs a real session, exports it, and serves it: the
// address printed carries the token the server asks for, and SIGTERM
// stops it with exit 0.
func TestViewCommand(t *testing.T) {
	sc, err := mock.Parse([]byte(`
replies:
  - match: delegate it
    toolCalls:
      - name: subagent
        arguments: {description: child work, prompt: CHILD do it}
  - match: CHILD
    text: the <b>answer</b>
  - match: answer
    text: parent done
`))
	if err != nil {
		t.Fatal(err)
	}
	url, _, stop := mock.StartTest(sc)
	defer stop()
	home := t.TempDir()
	if code, stderr := exitCode(t, reinsCmd(t, home, "run", "--base-url", url, "-m", "openai/m", "delegate it")); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	infos, err := session.Scan(filepath.Join(home, "sessions"))
	if err != nil || len(infos) != 2 {
		t.Fatalf("sessions: %v %d, want the parent and its child", err, len(infos))
	}
	id := infos[0].Header.ID
	if infos[0].Header.ParentSession != "" {
		id = infos[1].Header.ID
	}

	out := filepath.Join(t.TempDir(), "run.html")
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"export", []string{"view", "--export", out, id[:len(id)-2]}, 0},
		{"export without a session", []string{"view", "--export", out}, 2},
		{"unknown session", []string{"view", "--no-open", "nope"}, 2}, // as for every SESSION argument (docs/cli.md)
		{"bad port", []string{"view", "--no-open", "--port", "70000"}, 2},
		{"two sessions", []string{"view", "a", "b"}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if code, stderr := exitCode(t, reinsCmd(t, home, tc.args...)); code != tc.want {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.want, stderr)
			}
		})
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), id) || !strings.Contains(string(page), `\u003cb\u003eanswer`) || strings.Contains(string(page), "<b>answer") {
		t.Errorf("export lacks the session or leaves its text unescaped: %d bytes", len(page))
	}
	if !strings.Contains(string(page), `"nodes":2`) || !strings.Contains(string(page), `"label":"child work"`) {
		t.Error("the export lacks the child of the run")
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".reins-view-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}

	cmd := reinsCmd(t, home, "view", "--no-open", id)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no address printed: %v", err)
	}
	m := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+/)\?token=([A-Za-z0-9_-]{43})#s=` + id + ` `).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("printed %q", line)
	}
	wrong := m[2][:42] + "A"
	if wrong == m[2] {
		wrong = m[2][:42] + "B"
	}
	for _, c := range []struct {
		url  string
		want int
	}{
		{m[1] + "api/sessions/" + id + "?token=" + m[2], 200},
		{m[1] + "api/sessions/" + id, 401},
		{m[1] + "api/sessions/" + id + "?token=" + wrong, 401},
	} {
		resp, err := http.Get(c.url)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET %s: %d, want %d", c.url, resp.StatusCode, c.want)
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after SIGTERM: %v, want exit 0", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("reins view did not stop on SIGTERM")
	}
}
