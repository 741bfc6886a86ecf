package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/testutil"
)

const providerCanary = "PROVIDER-CANARY-7f3a"

// TestProviderMessageOnlyOnStderr (issue 15): the provider's own error
// text reaches the user's stderr (after the fixed code, naming the host
// log) and the host log, and nothing else: not the --json object, a
// session log, a diagnostic, or any model request — a child's provider
// error included.
func TestProviderMessageOnlyOnStderr(t *testing.T) {
	sc, err := mock.Parse([]byte(`
replies:
  - match: PARENT-GO
    toolCalls:
      - {id: c1, name: subagent, arguments: {description: fails, prompt: CHILD-FAIL}}
  - match: CHILD-FAIL
    status: 400
    body: '{"error":{"message":"child ` + providerCanary + ` bad request"}}'
fallback:
  status: 401
  body: '{"error":{"message":"parent ` + providerCanary + ` bad key"}}'
`))
	if err != nil {
		t.Fatal(err)
	}
	url, srv, stop := mock.StartTest(sc)
	defer stop()
	home := t.TempDir()
	cmd := reinsCmd(t, home, "run", "--json", "-m", "openai/m", "--base-url", url, "PARENT-GO")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	code, stderr := exitCode(t, cmd)
	if code != exitFailed {
		t.Fatalf("exit %d, want 1; stderr %s", code, stderr)
	}
	if n := srv.Count(); n != 3 {
		t.Fatalf("%d requests, want parent, child, parent", n)
	}
	want := "reins: turn ended with AUTH; the provider said (HTTP 401: parent " + providerCanary + " bad key); details in " + filepath.Join(home, "logs", "reins.log")
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	if bytes.Contains(stdout.Bytes(), []byte(providerCanary)) {
		t.Errorf("the --json object carries provider text: %s", stdout.Bytes())
	}
	for i, r := range srv.Requests() {
		if bytes.Contains(r.Body, []byte(providerCanary)) {
			t.Errorf("model request %d carries provider text", i)
		}
	}
	testutil.CanaryOnlyInHostLog(t, home, providerCanary)
	if _, err := os.Stat(filepath.Join(home, "logs", "reins.log")); err != nil {
		t.Error(err)
	}
}
