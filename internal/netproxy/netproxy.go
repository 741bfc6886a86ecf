// Package netproxy is the domain-allowlisting proxy of the sandbox
// (config `sandbox.allowDomains`, docs/sandbox.md): an HTTP proxy that
// speaks CONNECT (for HTTPS and anything tunnelled) and plain HTTP, runs
// outside the sandbox with the host's network, and lets a request through
// only to a listed host. A refused host gets a 403 whose body says why in
// one line — a clear failure in the tool result, never a hang. In the
// interactive terminal a host not listed is first asked about (Server.Ask,
// ask.go), with a bounded wait.
//
// It checks what it forwards, not only the name it is told (issue 47
// item 9): plain HTTP's Host header must be its URL's host (plainTarget);
// a CONNECT tunnel must carry TLS whose ClientHello names the CONNECT host
// (helloFor, hello.go); and an allowed name is resolved once, to public
// addresses only unless the user listed the address itself, and the proxy
// dials the address it checked (addr.go).
//
// The confined process reaches it through a Unix socket bound into its
// container (the supervisor's private folder); inside the container's
// network namespace the confine stage presents that socket at a loopback
// TCP address (Forward), which HTTPS_PROXY and HTTP_PROXY name.
package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/textproto"
	"strconv"
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
	// Dial connects to an address the proxy checked: addr is always an
	// IP:port, never a name. Nil means a net.Dialer with DialTimeout.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Resolve looks up an allowed name's addresses, once per connection;
	// nil means the system's resolver. (A seam for tests, which have no
	// DNS: the address checks apply to whatever it returns.)
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
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
	reply(w, "403 Forbidden", host, why)
}

// reply writes a status with a one-line body that names the host.
func reply(w io.Writer, status, host, why string) {
	body := fmt.Sprintf("reins sandbox: %s %s\n", host, why)
	fmt.Fprintf(w, "HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", status, len(body), body)
}

// maxHead bounds a request's line and headers; it is also the connection's
// read buffer, which holds a CONNECT's ClientHello record (maxHelloRecord).
const maxHead = 64 << 10

func (s *Server) handle(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(headerTimeout))
	br := bufio.NewReaderSize(c, maxHead)
	head, err := peekHead(br)
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			reply(c, "431 Request Header Fields Too Large", "(request)", "has headers over 64 KiB")
		}
		return
	}
	// The Host headers as sent (http.ReadRequest drops them), read before
	// head's bytes — br's buffer — are consumed.
	hosts, hostsErr := hostHeaders(head)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	connect := req.Method == http.MethodConnect
	var host, port string
	if connect {
		host, port, err = splitHostPort(req.Host, "")
	} else {
		host, port, err = plainTarget(req, hosts, hostsErr)
	}
	if err != nil {
		refuse(c, "(request)", err.Error())
		return
	}
	if !Allowed(host, s.Allow) && !s.asked(host) {
		refuse(c, host, "is not in sandbox.allowDomains; the network is off for this process")
		return
	}
	up, ok := s.dial(c, host, port)
	if !ok {
		return
	}
	defer up.Close()
	if connect {
		fmt.Fprintf(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		if !s.helloFor(c, br, host) {
			return
		}
		s.pipe(c, up, br)
		return
	}
	// Plain HTTP: one request per connection, forwarded with the Host its
	// checked request line names (req.Host; Go drops the header itself).
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	req.Close = true
	if err := req.Write(up); err != nil {
		return
	}
	_, _ = io.Copy(c, up)
}

// peekHead returns the request line and headers, through the empty line,
// without consuming them: at most the buffer's size (maxHead), else
// bufio.ErrBufferFull.
func peekHead(br *bufio.Reader) ([]byte, error) {
	from := 0
	for {
		// Wait for one byte more than was searched, then search all that
		// is buffered.
		if _, err := br.Peek(from + 1); err != nil {
			return nil, err
		}
		b, _ := br.Peek(br.Buffered())
		for i := max(from, 1); i < len(b); i++ {
			if b[i] != '\n' {
				continue
			}
			// An empty line: "\n\n" or "\n\r\n".
			if b[i-1] == '\n' || (i >= 2 && b[i-1] == '\r' && b[i-2] == '\n') {
				return b[:i+1], nil
			}
		}
		from = len(b)
	}
}

// plainTarget checks a plain HTTP request: an absolute http:// URL in the
// request line, and exactly one Host header naming the same host and port
// (issue 47 item 9: a Host other than the checked name would let an allowed
// name — a CDN's — front any site it serves). hosts are the
// values of its Host headers as the client sent them (hostHeaders).
func plainTarget(req *http.Request, hosts []string, hostsErr error) (host, port string, err error) {
	if req.URL.Scheme != "http" || req.URL.Host == "" {
		return "", "", errors.New("is not a request this proxy understands (plain HTTP needs an absolute http:// URL; use CONNECT for https)")
	}
	host, port, err = splitHostPort(req.URL.Host, "80")
	if err != nil {
		return "", "", err
	}
	if hostsErr != nil {
		return "", "", hostsErr
	}
	if len(hosts) != 1 {
		return "", "", errors.New("needs exactly one Host header")
	}
	hh, hp, err := splitHostPort(hosts[0], "80")
	if err != nil || !sameHost(hh, host) || hp != port {
		return "", "", fmt.Errorf("has a Host header that is not the host of its URL %s", hostPort(host, port))
	}
	return host, port, nil
}

// hostHeaders returns the values of the Host headers in head.
func hostHeaders(head []byte) ([]string, error) {
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(head)))
	if _, err := tp.ReadLine(); err != nil {
		return nil, errors.New("is not a request this proxy understands")
	}
	h, err := tp.ReadMIMEHeader()
	if err != nil {
		return nil, errors.New("is not a request this proxy understands")
	}
	return h.Values("Host"), nil
}

// splitHostPort splits an authority (host, host:port, [v6], [v6]:port) into
// a host without brackets or trailing dot and a port number 1-65535 in
// canonical form; def is the port when none is given ("" requires one).
func splitHostPort(hp, def string) (host, port string, err error) {
	bad := fmt.Errorf("has an address %q this proxy does not understand", truncate(hp, 64))
	host, port = hp, ""
	if h, p, err := net.SplitHostPort(hp); err == nil {
		host, port = h, p
	} else if strings.HasPrefix(hp, "[") && strings.HasSuffix(hp, "]") {
		host = hp[1 : len(hp)-1]
	} else if strings.Contains(hp, ":") {
		return "", "", bad
	}
	if port == "" {
		port = def
	}
	n, perr := strconv.ParseUint(port, 10, 16)
	host = strings.TrimSuffix(host, ".")
	if perr != nil || n == 0 || host == "" || !validHost(host) {
		return "", "", bad
	}
	return host, strconv.FormatUint(n, 10), nil
}

// hostPort joins a host and port for a message.
func hostPort(host, port string) string { return net.JoinHostPort(host, port) }

// truncate bounds text from the client before it is said back.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// dial resolves host (already allowed), refuses an address the proxy must
// not reach, and connects to a checked one; on failure it has answered c.
func (s *Server) dial(c net.Conn, host, port string) (net.Conn, bool) {
	addrs, refused, err := s.resolve(s.ctx, host)
	if refused != nil {
		refuse(c, host, fmt.Sprintf("resolves to %s, a %s address, which the proxy does not reach; list that address itself in sandbox.allowDomains to allow it", refused.addr, refused.class))
		return nil, false
	}
	if err != nil {
		reply(c, "502 Bad Gateway", host, "has no address the proxy could look up")
		return nil, false
	}
	n, _ := strconv.ParseUint(port, 10, 16)
	up, err := s.dialAddrs(s.ctx, addrs, uint16(n))
	if err != nil {
		reply(c, "502 Bad Gateway", hostPort(host, port), "could not be reached")
		return nil, false
	}
	return up, true
}

// helloFor reads the tunnel's first bytes, a TLS ClientHello (at most one
// record of 16 KiB, within headerTimeout), without consuming them, and
// reports whether they may go to host: its server name must be host, and a
// name host needs one (an IP literal host — one the user listed or allowed
// — may have none, as TLS clients send no name for an address). Anything
// else — other bytes than TLS, a malformed or split hello, another name —
// ends the tunnel before a byte reaches the host; a TLS client is first
// told access_denied.
func (s *Server) helloFor(c net.Conn, br *bufio.Reader, host string) bool {
	_ = c.SetReadDeadline(time.Now().Add(headerTimeout))
	defer c.SetReadDeadline(time.Time{})
	hdr, err := br.Peek(recordHeaderLen)
	if err != nil {
		return false
	}
	n, err := helloRecordLen(hdr)
	if err != nil {
		return false
	}
	rec, err := br.Peek(n)
	if err != nil {
		return false
	}
	sni, err := clientHelloSNI(rec)
	_, literal := netip.ParseAddr(host)
	ok := err == nil && (sameHost(sni, host) || (sni == "" && literal == nil))
	if !ok {
		// A fatal access_denied alert (RFC 8446 §6), in the clear as
		// every alert before the handshake's keys.
		_, _ = c.Write([]byte{0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x31})
	}
	return ok
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
