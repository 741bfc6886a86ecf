package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reinsdev/reins/internal/sandbox"
)

// TestInteractiveDomainQuestion (issue 26 item 3): with the network off and
// sandbox.allowDomains naming another host, a confined bash's curl through
// the domain proxy to a host outside the list makes the interactive
// terminal ask "allow HOST for this session?" while the connection waits.
// y: the server's reply reaches the tool result (and so the model); a
// second command to the same host is not asked again. n: the proxy's
// refusal line reaches the model and the host gets no request.
func TestInteractiveDomainQuestion(t *testing.T) {
	if !sandbox.Doctor().Namespaces {
		t.Fatal("this test needs unprivileged user namespaces (the domain proxy runs only in the container; README, \"Run the tests\")")
	}
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		fmt.Fprintf(w, "HELLO-FROM%s\n", strings.ReplaceAll(r.URL.Path, "/", "-"))
	}))
	t.Cleanup(srv.Close)
	// 127.0.0.1 is outside the list; NO_PROXY names it, so curl is told to
	// use the proxy all the same (the proxy, outside, reaches the host's
	// loopback). The address itself, not a name resolving to it: an
	// allowed name only leads to public addresses, while an address the
	// user allowed when asked is theirs to reach (docs/sandbox.md).
	local := srv.URL
	curl := func(u string) string { return "curl -sS --max-time 300 --noproxy '' " + u }
	url, _ := startMock(t, fmt.Sprintf(`
replies:
  - match: FETCH-YES
    toolCalls:
      - {id: b1, name: bash, arguments: {command: %q}}
  - match: HELLO-FROM-yes
    text: "fetched yes."
  - match: FETCH-AGAIN
    toolCalls:
      - {id: b2, name: bash, arguments: {command: %q}}
  - match: HELLO-FROM-again
    text: "fetched again."
  - match: FETCH-NO
    toolCalls:
      - {id: b3, name: bash, arguments: {command: %q}}
  - match: "refused.invalid is not in sandbox.allowDomains"
    text: "refusal seen."
`, curl(local+"/yes"), curl(local+"/again"), curl("http://refused.invalid/no")))
	home, ws := t.TempDir(), t.TempDir()
	cfg := "sandbox:\n  network: off\n  allowDomains: ['listed.invalid']\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	tm, wait := startTerm(t, home, []string{"NO_COLOR=1", "TERM=xterm-256color"}, "--cwd", ws, "-m", "openai/test", "--base-url", url)
	tm.waitFor("new session")

	// y: allowed for the session, the reply reaches the model.
	tm.typeKeys("FETCH-YES\r")
	tm.waitFor("[y] once") // the bash tool's own question
	off := len(tm.text())
	tm.typeKeys("y")
	waitAfter(tm, off, "? allow 127.0.0.1 for this session?")
	waitAfter(tm, off, "[y] allow for this session")
	tm.typeKeys("y")
	waitAfter(tm, off, "network 127.0.0.1: allowed for this session")
	waitAfter(tm, off, "fetched yes.")

	// The same host again: no second question.
	off = len(tm.text())
	tm.typeKeys("FETCH-AGAIN\r")
	waitAfter(tm, off, "[y] once")
	off2 := len(tm.text())
	tm.typeKeys("y")
	waitAfter(tm, off2, "fetched again.")
	if s := tm.text()[off:]; strings.Contains(s, "for this session?") {
		t.Fatalf("the allowed host was asked about again:\n%s", s)
	}

	// n: the refusal line.
	off = len(tm.text())
	tm.typeKeys("FETCH-NO\r")
	waitAfter(tm, off, "[y] once")
	off = len(tm.text())
	tm.typeKeys("y")
	waitAfter(tm, off, "? allow refused.invalid for this session?")
	waitAfter(tm, off, "[y] allow for this session")
	tm.typeKeys("n")
	waitAfter(tm, off, "network refused.invalid: refused for this session")
	waitAfter(tm, off, "refusal seen.")

	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(paths, " ") != "/yes /again" {
		t.Errorf("the server got %v, want /yes /again", paths)
	}
}

// TestInteractiveDomainQuestionQuit: Ctrl-D while the domain question is
// open ends reins — the question, the waiting connection, the confined
// curl and its proxy — without an answer and without a hang; the host gets
// no request, and the question socket's folder is gone.
func TestInteractiveDomainQuestionQuit(t *testing.T) {
	if !sandbox.Doctor().Namespaces {
		t.Fatal("this test needs unprivileged user namespaces (the domain proxy runs only in the container; README, \"Run the tests\")")
	}
	var mu sync.Mutex
	var hits int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	local := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	url, _ := startMock(t, fmt.Sprintf(`
replies:
  - match: FETCH
    toolCalls:
      - {id: b1, name: bash, arguments: {command: %q}}
`, "curl -sS --max-time 300 --noproxy '' "+local+"/x"))
	home, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("sandbox:\n  network: off\n  allowDomains: ['listed.invalid']\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir() // where reins makes its question socket
	tm, wait := startTerm(t, home, []string{"NO_COLOR=1", "TERM=xterm-256color", "TMPDIR=" + tmp}, "--cwd", ws, "-m", "openai/test", "--base-url", url)
	tm.waitFor("new session")
	if m, _ := filepath.Glob(filepath.Join(tmp, "reins-ask-*", "q.sock")); len(m) != 1 {
		t.Fatalf("question sockets while the session runs: %v", m)
	}
	tm.typeKeys("FETCH\r")
	tm.waitFor("[y] once")
	off := len(tm.text())
	tm.typeKeys("y")
	waitAfter(tm, off, "[y] allow for this session")
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
	mu.Lock()
	defer mu.Unlock()
	if hits != 0 {
		t.Errorf("the host got %d requests", hits)
	}
	if m, _ := filepath.Glob(filepath.Join(tmp, "reins-ask-*")); len(m) > 0 {
		t.Errorf("the question socket's folder outlived reins: %v", m)
	}
}
