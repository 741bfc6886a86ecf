//go:build linux

package sandbox

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// TestAllowDomainsAsk (issue 26 item 3): a policy with AskSocket makes the
// container's domain proxy — in the supervisor, another process — ask
// reins (NewQuestions) about a host outside AllowDomains instead of
// refusing it: allowed, the host is reached and a second connection is
// not asked; refused, the proxy's refusal line. The question socket is not
// reachable from inside the container.
func TestAllowDomainsAsk(t *testing.T) {
	requireLandlock(t)
	if !Doctor().Namespaces {
		t.Fatal("this test needs unprivileged user namespaces (the domain proxy runs only in the container; README, \"Run the tests\")")
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "upstream-ok") }))
	defer up.Close()
	var mu sync.Mutex
	asked := map[string]int{}
	qs, err := NewQuestions(func(ctx context.Context, host string) bool {
		mu.Lock()
		asked[host]++
		mu.Unlock()
		return host == "127.0.0.1"
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		qs.Close()
		if _, err := os.Stat(qs.Socket); err == nil {
			t.Errorf("the question socket %s outlived Close", qs.Socket)
		}
	}()
	ws := t.TempDir()
	p := Policy{Mode: WorkspaceWrite, Workspace: ws, DenyNetwork: true, AllowDomains: []string{"listed.invalid"}, AskSocket: qs.Socket}
	c := `curl -sS --max-time 60 --noproxy '' `
	out, _ := runEnv(t, p, ws, nil, c+up.URL+`/ ; echo; `+c+up.URL+`/ ; echo; `+c+`http://refused.invalid/ ; echo; `+
		`curl -sS --max-time 60 --unix-socket '`+qs.Socket+`' http://x/ >/dev/null 2>&1; echo "socket-rc=$?"`)
	t.Logf("%s", out)
	if n := strings.Count(out, "upstream-ok"); n != 2 {
		t.Errorf("the allowed host answered %d of 2 times:\n%s", n, out)
	}
	if !strings.Contains(out, "reins sandbox: refused.invalid is not in sandbox.allowDomains") {
		t.Errorf("no refusal line for the refused host:\n%s", out)
	}
	// 7: curl could not connect; anything else means it reached the
	// socket (reins answers its request line with a refusal).
	if !strings.Contains(out, "socket-rc=7") {
		t.Errorf("the confined process reached the question socket:\n%s", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked["127.0.0.1"] != 1 || asked["refused.invalid"] != 1 || len(asked) != 2 {
		t.Errorf("questions: %v, want one for each host", asked)
	}
}
