//go:build linux

package sandbox

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestAllowDomainsProxyHonest (issue 47 item 9), from a confined bash
// through the container's proxy (which runs in the supervisor): a Host
// header other than the allowed URL's host is refused; a TLS tunnel whose
// ClientHello names another host than the CONNECT host is ended before the
// upstream sees the hello (openssl s_client is told access_denied), while
// curl's own TLS to the listed address passes; and an allowed name that
// resolves to loopback ("localhost") is refused, naming what to list.
func TestAllowDomainsProxyHonest(t *testing.T) {
	requireLandlock(t)
	if !Doctor().Namespaces {
		t.Fatal("this test needs unprivileged user namespaces (the domain proxy runs only in the container; README, \"Run the tests\")")
	}
	var hits sync.Map // Host → true, for the plain upstream
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Store(r.Host, true)
		io.WriteString(w, "upstream-ok")
	}))
	defer up.Close()
	var mu sync.Mutex
	var names []string // server names the TLS upstream was asked for
	tup := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "tls-ok") }))
	tup.TLS = &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		mu.Lock()
		names = append(names, h.ServerName)
		mu.Unlock()
		return nil, nil
	}}
	tup.StartTLS()
	defer tup.Close()
	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
	tlsAddr := tup.Listener.Addr().String()

	ws := t.TempDir()
	c := `curl -sS --max-time 60 --noproxy '' `
	p := Policy{Mode: WorkspaceWrite, Workspace: ws, DenyNetwork: true, AllowDomains: []string{"127.0.0.1"}}
	out, _ := runEnv(t, p, ws, nil,
		c+`-H 'Host: evil.example' `+up.URL+`/; echo; `+
			c+`-k https://`+tlsAddr+`/; echo; `+
			`openssl s_client -proxy 127.0.0.1:3128 -connect `+tlsAddr+` -servername evil.example </dev/null 2>&1 | grep -o 'alert access denied' | head -1`)
	t.Logf("%s", out)
	for _, want := range []string{"reins sandbox: (request) has a Host header that is not the host of its URL", "tls-ok", "alert access denied"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	hits.Range(func(k, _ any) bool { t.Errorf("the fronted request reached the upstream (Host %v)", k); return true })
	mu.Lock()
	for _, n := range names {
		if n != "" {
			t.Errorf("the TLS upstream saw a hello for %q", n)
		}
	}
	mu.Unlock()

	p.AllowDomains = []string{"localhost"}
	out, _ = runEnv(t, p, ws, nil, c+`http://localhost:`+port+`/; echo; `+c+`https://localhost:`+port+`/ 2>&1`)
	t.Logf("%s", out)
	if !strings.Contains(out, "reins sandbox: localhost resolves to 127.0.0.1, a loopback address, which the proxy does not reach; list that address itself in sandbox.allowDomains") {
		t.Errorf("a name resolving to loopback was not refused:\n%s", out)
	}
	if strings.Contains(out, "upstream-ok") {
		t.Errorf("a name resolving to loopback reached the upstream:\n%s", out)
	}
}
