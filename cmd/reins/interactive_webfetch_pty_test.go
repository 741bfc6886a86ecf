package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInteractiveWebfetch (issue 30 item 8): with the network off and
// sandbox.allowDomains naming 127.0.0.1, a webfetch asks; [a] adds
// webfetch(domain:127.0.0.1) and the page's text reaches the model; a
// second page of that host is not asked; a host outside allowDomains is
// asked (the rule is for one host) and then refused by the network
// policy, which the model sees.
func TestInteractiveWebfetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><body><script>SCRIPT</script><h1>MARK-%s</h1></body></html>", strings.TrimPrefix(r.URL.Path, "/"))
	}))
	t.Cleanup(srv.Close)
	away := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	url, _ := startMock(t, fmt.Sprintf(`
replies:
  - match: FETCH-ONE
    toolCalls:
      - {id: f1, name: webfetch, arguments: {url: "%[1]s/first"}}
  - match: "# MARK-first"
    text: "fetched once."
  - match: FETCH-TWO
    toolCalls:
      - {id: f2, name: webfetch, arguments: {url: "%[1]s/second"}}
  - match: "# MARK-second"
    text: "fetched twice."
  - match: FETCH-AWAY
    toolCalls:
      - {id: f3, name: webfetch, arguments: {url: "%[2]s/away"}}
  - match: "localhost is not in sandbox.allowDomains"
    text: "refusal seen."
`, srv.URL, away))
	home, cwd := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("sandbox:\n  network: off\n  allowDomains: ['127.0.0.1']\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tm, wait := mockTerm(t, home, cwd, url)

	tm.typeKeys("FETCH-ONE\r")
	tm.waitFor("[a] always allow webfetch(domain:127.0.0.1)")
	tm.typeKeys("a")
	tm.waitFor("fetched once.")

	off := len(tm.text())
	tm.typeKeys("FETCH-TWO\r")
	tm.waitFor("fetched twice.")
	if s := tm.text()[off:]; strings.Contains(s, "? allow webfetch") {
		t.Fatalf("the allowed domain asked again:\n%s", s)
	}

	off = len(tm.text())
	tm.typeKeys("FETCH-AWAY\r")
	waitAfter(tm, off, "[a] always allow webfetch(domain:localhost)")
	tm.typeKeys("y")
	tm.waitFor("refusal seen.")
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
}
