package netproxy

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// The attacks of issue 47 item 9, through the real proxy on loopback. Each
// test here failed on adfed3d (the proxy forwarded what it was told).

// countingServer is an HTTP upstream on 127.0.0.1 that counts requests.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprintf(w, "upstream-ok host=%s", r.Host)
	}))
	return up, &hits
}

// rawRequest sends text to the proxy at addr and returns the status code
// and body of its answer; 0 when it closed without one.
func rawRequest(t *testing.T, addr, text string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.WriteString(c, text); err != nil {
		return 0, ""
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, string(b)
}

// TestAttackHostFronting: plain HTTP whose request line names an allowed
// host and whose Host header names another is refused, never forwarded
// (adfed3d forwarded it). The Host must be the URL's host and port.
func TestAttackHostFronting(t *testing.T) {
	defer goleak.VerifyNone(t)
	up, hits := countingServer(t)
	defer up.Close()
	hp := up.Listener.Addr().String()
	addr, stop := start(t, []string{"127.0.0.1"})
	defer stop()
	for _, c := range []struct {
		name string
		req  string
		want int
	}{
		{"other host", "GET http://" + hp + "/ HTTP/1.1\r\nHost: evil.example\r\n\r\n", 403},
		{"other host, same port", "GET http://" + hp + "/ HTTP/1.1\r\nHost: evil.example:" + up.URL[strings.LastIndex(up.URL, ":")+1:] + "\r\n\r\n", 403},
		{"other port", "GET http://" + hp + "/ HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n", 403},
		{"default port", "GET http://" + hp + "/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 403},
		{"no Host", "GET http://" + hp + "/ HTTP/1.1\r\n\r\n", 403},
		{"two Hosts", "GET http://" + hp + "/ HTTP/1.1\r\nHost: " + hp + "\r\nHost: evil.example\r\n\r\n", 0},
		{"origin form", "GET / HTTP/1.1\r\nHost: " + hp + "\r\n\r\n", 403},
		{"https in plain", "GET https://" + hp + "/ HTTP/1.1\r\nHost: " + hp + "\r\n\r\n", 403},
		{"headers too large", "GET http://" + hp + "/ HTTP/1.1\r\nHost: " + hp + "\r\nX: " + strings.Repeat("a", 70<<10) + "\r\n\r\n", 431},
	} {
		code, body := rawRequest(t, addr, c.req)
		if code != c.want {
			t.Errorf("%s: %d %q, want %d", c.name, code, body, c.want)
		}
		if code == 403 && !strings.HasPrefix(body, "reins sandbox: ") {
			t.Errorf("%s: the refusal says %q", c.name, body)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d refused requests reached the upstream", n)
	}
	// The same host, in other spellings, is forwarded with the URL's Host.
	for _, host := range []string{hp, strings.Replace(hp, ":", ".:", 1)} {
		code, body := rawRequest(t, addr, "GET HTTP://"+hp+"/ HTTP/1.1\r\nHost: "+host+"\r\n\r\n")
		if code != 200 || body != "upstream-ok host="+hp {
			t.Errorf("Host %s: %d %q", host, code, body)
		}
	}
}

// recorder is a TCP upstream on loopback that reports, for each
// connection, how many bytes reached it before its first read ended: a
// refused tunnel must deliver none.
func recorder(t *testing.T) (string, <-chan int, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
			n, _ := c.Read(make([]byte, 1<<16))
			c.Close()
			got <- n
		}
	}()
	return ln.Addr().String(), got, func() { ln.Close(); <-done }
}

// tunnel opens a CONNECT tunnel to target through the proxy at addr.
func tunnel(t *testing.T, addr, target string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	// Read the answer byte by byte: nothing of the tunnel may be consumed.
	var line []byte
	for !strings.HasSuffix(string(line), "\r\n\r\n") {
		var b [1]byte
		if _, err := c.Read(b[:]); err != nil {
			c.Close()
			t.Fatalf("CONNECT %s: %q %v", target, line, err)
		}
		line = append(line, b[0])
	}
	if !strings.HasPrefix(string(line), "HTTP/1.1 200 ") {
		c.Close()
		t.Fatalf("CONNECT %s: %q", target, line)
	}
	return c
}

// TestAttackSNIMismatch: a CONNECT tunnel whose ClientHello names another
// host than the CONNECT host is ended before a byte reaches the upstream
// (adfed3d forwarded it), and the TLS client is told access_denied. So are
// a name host's hello without a name, an address host's hello with a name,
// and bytes that are not TLS. The same host is tunnelled, both for a name
// (listed, and resolving to a listed address) and an address.
func TestAttackSNIMismatch(t *testing.T) {
	defer goleak.VerifyNone(t)
	rec, got, stopRec := recorder(t)
	defer stopRec()
	_, recPort, _ := net.SplitHostPort(rec)
	addr, stop := start(t, []string{"localhost", "127.0.0.1"})
	defer stop()

	for _, c := range []struct {
		name, target, sni string
		plain             bool
	}{
		{"another name", "localhost:" + recPort, "evil.example", false},
		{"no name for a name", "localhost:" + recPort, "", false},
		{"a name for an address", rec, "evil.example", false},
		{"plain HTTP in the tunnel", rec, "", true},
	} {
		conn := tunnel(t, addr, c.target)
		var err error
		if c.plain {
			fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n")
			_, err = conn.Read(make([]byte, 1))
		} else {
			err = tls.Client(conn, &tls.Config{ServerName: c.sni, InsecureSkipVerify: true}).Handshake()
		}
		conn.Close()
		if err == nil {
			t.Errorf("%s: the tunnel answered", c.name)
		} else if !c.plain && !strings.Contains(err.Error(), "access denied") {
			t.Errorf("%s: the TLS client was not told access_denied: %v", c.name, err)
		}
		select {
		case n := <-got:
			if n != 0 {
				t.Errorf("%s: %d bytes reached the upstream", c.name, n)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: the upstream was never dialled nor closed", c.name)
		}
	}

	// The same host: a real TLS server answers through the tunnel.
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "tls-ok") }))
	defer up.Close()
	_, upPort, _ := net.SplitHostPort(up.Listener.Addr().String())
	for target, sni := range map[string]string{
		"localhost:" + upPort: "LocalHost.", // case and the trailing dot do not matter
		"127.0.0.1:" + upPort: "127.0.0.1",  // crypto/tls sends no name for an address
	} {
		conn := tunnel(t, addr, target)
		tc := tls.Client(conn, &tls.Config{ServerName: sni, InsecureSkipVerify: true})
		fmt.Fprintf(tc, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target)
		resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
		if err != nil {
			t.Errorf("%s: %v", target, err)
		} else {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "tls-ok" {
				t.Errorf("%s: %q", target, b)
			}
		}
		tc.Close()
	}
}

// TestAttackResolvedLoopback: an allowed name that resolves to loopback
// (here "localhost", through the system's resolver) is refused for plain
// HTTP and CONNECT alike, and the upstream never sees it (adfed3d dialled
// it). Listing the address itself is how the user reaches it — directly, or
// through the name.
func TestAttackResolvedLoopback(t *testing.T) {
	defer goleak.VerifyNone(t)
	up, hits := countingServer(t)
	defer up.Close()
	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
	get := func(allow []string, u string) (int, string) {
		addr, stop := start(t, allow)
		defer stop()
		pu, _ := url.Parse("http://" + addr)
		tr := &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr, Timeout: 60 * time.Second}).Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	code, body := get([]string{"localhost"}, "http://localhost:"+port+"/")
	if code != 403 || !strings.Contains(body, "loopback address") || !strings.Contains(body, "list that address itself") {
		t.Errorf("plain HTTP to a name resolving to loopback: %d %q", code, body)
	}
	addr, stop := start(t, []string{"localhost"})
	code, body = rawRequest(t, addr, "CONNECT localhost:"+port+" HTTP/1.1\r\nHost: localhost:"+port+"\r\n\r\n")
	stop()
	if code != 403 || !strings.Contains(body, "loopback address") {
		t.Errorf("CONNECT to a name resolving to loopback: %d %q", code, body)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback upstream was reached %d times", n)
	}

	if code, body := get([]string{"127.0.0.1"}, up.URL+"/"); code != 200 || !strings.HasPrefix(body, "upstream-ok") {
		t.Errorf("the listed address: %d %q", code, body)
	}
	if code, body := get([]string{"localhost", "127.0.0.1"}, "http://localhost:"+port+"/"); code != 200 || !strings.HasPrefix(body, "upstream-ok") {
		t.Errorf("a name resolving to a listed address: %d %q", code, body)
	}
}

// dripConn writes one byte at a time: the proxy must gather a request's
// head and a ClientHello however the client's writes are cut.
type dripConn struct{ net.Conn }

func (d dripConn) Write(b []byte) (int, error) {
	for i := range b {
		if _, err := d.Conn.Write(b[i : i+1]); err != nil {
			return i, err
		}
	}
	return len(b), nil
}

// TestDripped: a request head and a ClientHello sent a byte per write are
// gathered (within the header deadline) and pass.
func TestDripped(t *testing.T) {
	defer goleak.VerifyNone(t)
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "tls-ok") }))
	defer up.Close()
	plain, hits := countingServer(t)
	defer plain.Close()
	addr, stop := start(t, []string{"localhost", "127.0.0.1"})
	defer stop()

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	hp := plain.Listener.Addr().String()
	fmt.Fprintf(dripConn{c}, "GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n", hp, hp)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("a dripped request: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	c.Close()
	if hits.Load() != 1 {
		t.Errorf("the dripped request reached the upstream %d times", hits.Load())
	}

	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
	conn := tunnel(t, addr, "localhost:"+port)
	defer conn.Close()
	tc := tls.Client(dripConn{conn}, &tls.Config{ServerName: "localhost", InsecureSkipVerify: true})
	if err := tc.Handshake(); err != nil {
		t.Fatalf("a dripped ClientHello: %v", err)
	}
	fmt.Fprintf(tc, "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
	resp, err = http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "tls-ok" {
		t.Errorf("through the tunnel: %q", b)
	}
}
