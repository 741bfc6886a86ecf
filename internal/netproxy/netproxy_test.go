package netproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestAllowed(t *testing.T) {
	allow := []string{"proxy.golang.org", "*.npmjs.org", "Example.COM."}
	for host, want := range map[string]bool{
		"proxy.golang.org":      true,
		"PROXY.golang.org":      true,
		"evil-proxy.golang.org": false,
		"registry.npmjs.org":    true,
		"npmjs.org":             false,
		"example.com":           true,
		"example.com.evil.net":  false,
		"":                      false,
	} {
		if got := Allowed(host, allow); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", host, got, want)
		}
	}
}

func start(t *testing.T, allow []string) (string, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Allow: allow}
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(ln) }()
	return ln.Addr().String(), func() { s.Close(); <-done }
}

// TestProxy: an allowed host is reached by plain HTTP and through CONNECT;
// a refused one gets a 403 naming it at once, for both.
func TestProxy(t *testing.T) {
	defer goleak.VerifyNone(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "upstream-ok") }))
	defer up.Close()
	addr, stop := start(t, []string{"127.0.0.1"})
	defer stop()
	pu, _ := url.Parse("http://" + addr)
	tr := &http.Transport{Proxy: http.ProxyURL(pu)}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}

	resp, err := c.Get(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "upstream-ok" {
		t.Errorf("plain HTTP through the proxy: %q", b)
	}

	resp, err = c.Get("http://refused.example/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(b), "refused.example is not in sandbox.allowDomains") {
		t.Errorf("refused plain HTTP: %d %q", resp.StatusCode, b)
	}

	// CONNECT, by hand: allowed then refused.
	for host, want := range map[string]string{up.Listener.Addr().String(): "200", "refused.example:443": "403"} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		line, err := bufio.NewReader(conn).ReadString('\n')
		conn.Close()
		if err != nil || !strings.Contains(line, " "+want+" ") {
			t.Errorf("CONNECT %s: %q %v, want %s", host, line, err, want)
		}
	}
}
