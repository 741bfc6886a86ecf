package sandbox

import (
	"context"
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
	if p.AskSocket != "" {
		srv.Ask = netproxy.AskOver(p.AskSocket)
	}
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

// Questions is reins's end of the proxies' question "allow HOST for this
// session?" (netproxy.Questions): a Unix socket in a private folder of the
// host's temporary directory, which a policy names in AskSocket. The
// container never sees it (its /tmp is private and every host socket is
// covered); a process that reached it could only ask, never answer.
type Questions struct {
	// Socket is the path a Policy's AskSocket names.
	Socket string
	q      *netproxy.Questions
	dir    string
	ln     net.Listener
	done   chan struct{}
}

// NewQuestions serves ask — the user's answer about one host, false when
// ctx ends first — to the proxies of every process started with a policy
// whose AskSocket is the result's Socket. Close it when the session ends.
func NewQuestions(ask func(ctx context.Context, host string) bool) (*Questions, error) {
	dir, err := os.MkdirTemp("", "reins-ask-")
	if err != nil {
		return nil, err
	}
	sock := filepath.Join(dir, "q.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	qs := &Questions{Socket: sock, q: &netproxy.Questions{Ask: ask}, dir: dir, ln: ln, done: make(chan struct{})}
	go func() {
		defer close(qs.done)
		_ = netproxy.ServeQuestions(ln, qs.q)
	}()
	return qs, nil
}

// Close refuses every open question, stops serving and removes the socket.
func (qs *Questions) Close() error {
	qs.q.Close()
	err := qs.ln.Close()
	<-qs.done
	os.RemoveAll(qs.dir)
	return err
}
