// Package netproxy is the domain-allowlisting proxy of the sandbox
// (config `sandbox.allowDomains`, docs/sandbox.md): an HTTP proxy that
// speaks CONNECT (for HTTPS and anything tunnelled) and plain HTTP, runs
// outside the sandbox with the host's network, and lets a request through
// only to a listed host. A refused host gets a 403 whose body says why in
// one line — a clear failure in the tool result, never a hang. In the
// interactive terminal a host not listed is first asked about (Server.Ask,
// ask.go), with a bounded wait.
//
// The confined process reaches it through a Unix socket bound into its
// container (the supervisor's private folder); inside the container's
// network namespace the confine stage presents that socket at a loopback
// TCP address (Forward), which HTTPS_PROXY and HTTP_PROXY name.
package netproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DialTimeout bounds the connection to an allowed host.
const DialTimeout = 15 * time.Second

// headerTimeout bounds how long a client may take to send its request line
// and headers.
const headerTimeout = 30 * time.Second

// Allowed reports whether host (no port) matches the list: an entry is a
// host name matched exactly (case-insensitively), or "*.example.com",
// which matches every name below example.com but not example.com itself.
func Allowed(host string, allow []string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, a := range allow {
		a = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(a)), ".")
		if rest, ok := strings.CutPrefix(a, "*."); ok {
			if strings.HasSuffix(host, "."+rest) {
				return true
			}
			continue
		}
		if host == a {
			return true
		}
	}
	return false
}

// Server is one proxy. Serve it on a listener; Close ends it and every
// connection it carries.
type Server struct {
	Allow []string
	// Dial connects to an allowed host; nil means a net.Dialer with
	// DialTimeout.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Ask, when set, is asked about a host outside Allow before it is
	// refused (the interactive terminal's "allow HOST for this session?",
	// ask.go); the connection waits at most AskTimeout, and Close ends the
	// wait. Nil refuses at once.
	Ask func(ctx context.Context, host string) bool

	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

func (s *Server) init() {
	s.once.Do(func() {
		s.ctx, s.cancel = context.WithCancel(context.Background())
		s.conns = map[net.Conn]struct{}{}
		if s.Dial == nil {
			d := &net.Dialer{Timeout: DialTimeout}
			s.Dial = d.DialContext
		}
	})
}

// Serve accepts connections on ln until ln is closed or Close is called.
func (s *Server) Serve(ln net.Listener) error {
	s.init()
	go func() {
		<-s.ctx.Done()
		ln.Close()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if s.ctx.Err() != nil {
				return nil
			}
			return err
		}
		if !s.track(c, true) {
			c.Close()
			return nil
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.track(c, false)
			defer c.Close()
			s.handle(c)
		}()
	}
}

func (s *Server) track(c net.Conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		if s.ctx.Err() != nil {
			return false
		}
		s.conns[c] = struct{}{}
	} else {
		delete(s.conns, c)
	}
	return true
}

// Close ends the server and every connection, and waits for them.
func (s *Server) Close() error {
	s.init()
	s.cancel()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

// refuse writes the 403 that names the host: the host is the client's own
// request, so saying it back discloses nothing.
func refuse(w io.Writer, host, why string) {
	body := fmt.Sprintf("reins sandbox: %s %s\n", host, why)
	fmt.Fprintf(w, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
}

func (s *Server) handle(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(headerTimeout))
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	host := req.URL.Hostname()
	if req.Method == http.MethodConnect {
		host, _, _ = net.SplitHostPort(req.Host)
	}
	if host == "" {
		refuse(c, "(no host)", "is not a request this proxy understands")
		return
	}
	if !Allowed(host, s.Allow) && !s.asked(host) {
		refuse(c, host, "is not in sandbox.allowDomains; the network is off for this process")
		return
	}
	if req.Method == http.MethodConnect {
		up, err := s.Dial(s.ctx, "tcp", req.Host)
		if err != nil {
			fmt.Fprintf(c, "HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
			return
		}
		defer up.Close()
		fmt.Fprintf(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		s.pipe(c, up, br)
		return
	}
	// Plain HTTP: one request per connection, forwarded as is.
	addr := req.URL.Host
	if req.URL.Port() == "" {
		addr = net.JoinHostPort(host, "80")
	}
	up, err := s.Dial(s.ctx, "tcp", addr)
	if err != nil {
		fmt.Fprintf(c, "HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
		return
	}
	defer up.Close()
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	req.Close = true
	if err := req.Write(up); err != nil {
		return
	}
	_, _ = io.Copy(c, up)
}

// asked reports whether Ask allows host, waiting at most AskTimeout and
// never past Close.
func (s *Server) asked(host string) bool {
	if s.Ask == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(s.ctx, AskTimeout)
	defer cancel()
	return s.Ask(ctx, host) && ctx.Err() == nil
}

// pipe copies both ways until either side ends; what the client sent after
// its CONNECT request (already buffered in br) goes first.
func (s *Server) pipe(c, up net.Conn, br *bufio.Reader) {
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(up, br)
		if cw, ok := up.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(c, up)
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}()
	select {
	case <-done:
	case <-s.ctx.Done():
	}
	// One side ended: end the other (a half-open tunnel would hold the
	// connection, and the process, forever).
	c.Close()
	up.Close()
	<-done
}

// Forward accepts on ln (the loopback address inside the container) and
// joins each connection to the proxy's Unix socket at sock. It returns when
// ln is closed.
func Forward(ln net.Listener, sock string) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			up, err := net.DialTimeout("unix", sock, DialTimeout)
			if err != nil {
				return
			}
			defer up.Close()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
			go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
			<-done
			c.Close()
			up.Close()
			<-done
		}()
	}
}
