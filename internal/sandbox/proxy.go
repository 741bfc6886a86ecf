package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/reinsdev/reins/internal/netproxy"
)

// proxyAddr is where the domain proxy appears inside the container: the
// loopback of the process's own network namespace, so no port is shared
// with anything on the host.
const proxyAddr = "127.0.0.1:3128"

// proxied reports whether p reaches the network through the proxy.
func (p Policy) proxied() bool {
	return p.Confined() && p.DenyNetwork && len(p.AllowDomains) > 0 && !p.NoNamespaces
}

// proxySocket is the proxy's Unix socket in the private folder tmp, which
// the container binds in at the same path.
func proxySocket(tmp string) string { return filepath.Join(tmp, ".reins-proxy.sock") }

// serveProxy starts the proxy of p on its socket and returns its stop.
func serveProxy(p Policy, tmp string) (func(), error) {
	ln, err := net.Listen("unix", proxySocket(tmp))
	if err != nil {
		return nil, err
	}
	srv := &netproxy.Server{Allow: p.AllowDomains}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	return func() {
		srv.Close()
		<-done
		_ = os.Remove(proxySocket(tmp))
	}, nil
}

// withProxy points the proxy variables at proxyAddr (both spellings: curl
// reads the lower-case ones, Go and npm either).
func withProxy(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY":
			continue
		}
		out = append(out, kv)
	}
	u := "http://" + proxyAddr
	return append(out, "HTTP_PROXY="+u, "HTTPS_PROXY="+u, "http_proxy="+u, "https_proxy="+u, "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1")
}
