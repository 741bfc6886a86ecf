package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// peer is the server's side of a stdio session under test: it reads what
// reins wrote, one message a line, and writes what the case says.
type peer struct {
	t   *testing.T
	in  *bufio.Scanner
	out io.WriteCloser
}

// next is reins's next message.
func (p *peer) next() message {
	if !p.in.Scan() {
		p.t.Errorf("reins wrote nothing more: %v", p.in.Err())
		return message{}
	}
	var m message
	if err := json.Unmarshal(p.in.Bytes(), &m); err != nil {
		p.t.Errorf("reins wrote a line that is not JSON: %q", p.in.Bytes())
	}
	return m
}

// write writes a line; an error (reins closed its end, as it does on a
// line it refuses) ends nothing here.
func (p *peer) write(line string) {
	io.WriteString(p.out, line+"\n")
}

// stdioSession is a session over pipes whose other end is run by script
// (in its own goroutine, ended by the test's cleanup).
func stdioSession(t *testing.T, script func(p *peer)) (*session, *logSink) {
	toClient, fromServer := io.Pipe()
	toServer, fromClient := io.Pipe()
	log := &logSink{}
	s := newSession(newStdioWire(toClient, fromClient), log.logf)
	p := &peer{t: t, in: bufio.NewScanner(toServer), out: fromServer}
	p.in.Buffer(nil, 1<<20)
	done := make(chan struct{})
	go func() {
		defer close(done)
		script(p)
		// Drain until reins closes, so its writes never block.
		for p.in.Scan() {
		}
	}()
	t.Cleanup(func() {
		s.Close()
		fromServer.Close()
		toServer.Close()
		<-done
	})
	return s, log
}

// TestStdioFraming: what a server writes on stdout and what reins makes
// of it, one call per case.
func TestStdioFraming(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script func(p *peer)
		// want is the call's outcome: "ok:<result>", "rpc:<code>" or
		// "broken:<text in the error>".
		want string
		// log is a text the host log must hold.
		log string
	}{
		{"answer", func(p *peer) {
			m := p.next()
			p.write(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"v":1}}`)
		}, "ok:1", ""},
		{"blank lines and a notification first", func(p *peer) {
			m := p.next()
			p.write("")
			p.write(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}`)
			p.write(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"v":2}}`)
		}, "ok:2", ""},
		{"garbage line", func(p *peer) {
			p.next()
			p.write(`this is not JSON`)
		}, "broken:not JSON", ""},
		{"not JSON-RPC 2.0", func(p *peer) {
			m := p.next()
			p.write(`{"id":` + string(m.ID) + `,"result":{}}`)
		}, "broken:not JSON-RPC 2.0", ""},
		{"batch", func(p *peer) {
			p.next()
			p.write(`[{"jsonrpc":"2.0","method":"x"}]`)
		}, "broken:batch", ""},
		{"oversize line", func(p *peer) {
			m := p.next()
			p.write(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"v":"` + strings.Repeat("x", maxFrame) + `"}}`)
		}, "broken:over 8388608 bytes", ""},
		{"id mismatch", func(p *peer) {
			m := p.next()
			p.write(`{"jsonrpc":"2.0","id":999,"result":{"v":9}}`)
			p.write(`{"jsonrpc":"2.0","id":"x","result":{"v":9}}`)
			p.write(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"v":3}}`)
		}, "ok:3", "an answer to no request of reins ignored"},
		{"error response", func(p *peer) {
			m := p.next()
			p.write(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32602,"message":"bad"}}`)
		}, "rpc:-32602", ""},
		{"server request ping", func(p *peer) {
			m := p.next()
			p.write(`{"jsonrpc":"2.0","id":"srv-1","method":"ping"}`)
			a := p.next()
			if string(a.ID) != `"srv-1"` || string(a.Result) != "{}" || a.Error != nil {
				p.t.Errorf("ping answered with %+v", a)
			}
			p.write(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"v":4}}`)
		}, "ok:4", ""},
		{"server request reins does not offer", func(p *peer) {
			m := p.next()
			p.write(`{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{}}`)
			a := p.next()
			if string(a.ID) != "7" || a.Error == nil || a.Error.Code != -32601 {
				p.t.Errorf("sampling answered with %+v", a)
			}
			p.write(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"v":5}}`)
		}, "ok:5", ""},
		{"dies mid-call", func(p *peer) {
			p.next()
			p.out.Close()
		}, "broken:EOF", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, log := stdioSession(t, tc.script)
			var res struct{ V any }
			err := s.call(context.Background(), "x/y", map[string]any{}, &res)
			var re *rpcError
			switch kind, arg, _ := strings.Cut(tc.want, ":"); kind {
			case "ok":
				if err != nil || fmt.Sprint(res.V) != arg {
					t.Errorf("call: %v, %v; want %s", res.V, err, arg)
				}
			case "rpc":
				if !errors.As(err, &re) || fmt.Sprint(re.Code) != arg {
					t.Errorf("call: %v; want JSON-RPC error %s", err, arg)
				}
			case "broken":
				if err == nil || errors.As(err, &re) || !strings.Contains(err.Error(), arg) {
					t.Errorf("call: %v; want a broken connection (%s)", err, arg)
				}
				select {
				case <-s.Done():
				case <-time.After(30 * time.Second):
					t.Error("the session is not marked ended")
				}
				if err := s.call(context.Background(), "x/y", nil, nil); err == nil {
					t.Error("a call on a broken session succeeded")
				}
			}
			if tc.log != "" && !strings.Contains(log.String(), tc.log) {
				t.Errorf("host log lacks %q:\n%s", tc.log, log)
			}
		})
	}
}

// A call whose context ends returns at once with ctx's error and tells
// the server (notifications/cancelled with the request's id).
func TestStdioCancel(t *testing.T) {
	got := make(chan message, 1)
	arrived := make(chan struct{})
	s, _ := stdioSession(t, func(p *peer) {
		m := p.next()
		close(arrived)
		c := p.next()
		got <- c
		if c.Method != "notifications/cancelled" || !strings.Contains(string(c.Params), `"requestId":`+string(m.ID)) {
			p.t.Errorf("after the cancel reins wrote %s %s", c.Method, c.Params)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.call(ctx, "tools/call", map[string]any{}, nil) }()
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the call never reached the server")
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("call: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a cancelled call hangs")
	}
	select {
	case <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("no cancellation reached the server")
	}
}

// httpPeer is a streamable HTTP server whose answers the case writes; it
// records every request's method, headers and body.
type httpPeer struct {
	mu   sync.Mutex
	reqs []seen
}

type seen struct {
	method, sessionID, protocol, accept, contentType string
	msg                                              message
}

func (h *httpPeer) record(r *http.Request) message {
	var m message
	json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&m)
	h.mu.Lock()
	h.reqs = append(h.reqs, seen{r.Method, r.Header.Get(headerSessionID), r.Header.Get(headerProtocol), r.Header.Get("Accept"), r.Header.Get("Content-Type"), m})
	h.mu.Unlock()
	return m
}

func (h *httpPeer) all() []seen {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]seen(nil), h.reqs...)
}

func initAnswer(id json.RawMessage) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"t","version":"1"}}}`
}

// TestHTTPSession: initialize over streamable HTTP, the session id and
// protocol version carried on every later request, answers as JSON or as
// an event stream of several events (the server's ping answered on its
// own POST), and DELETE with the session id on close.
func TestHTTPSession(t *testing.T) {
	peer := &httpPeer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := peer.record(r)
		switch {
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		case m.Method == "initialize":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set(headerSessionID, "sess-1")
			io.WriteString(w, initAnswer(m.ID))
		case len(m.ID) == 0 || m.Method == "":
			w.WriteHeader(http.StatusAccepted)
		case m.Method == "tools/list":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "id: 0\ndata: \n\n")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n")
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"method\":\"ping\"}\n\n")
			fmt.Fprintf(w, ": keep-alive\n\n")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\n", m.ID)
			fmt.Fprintf(w, "data: \"result\":{\"tools\":[{\"name\":\"a\",\"inputSchema\":{\"type\":\"object\"}}]}}\n\n")
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"done"}]}}`, m.ID)
		}
	}))
	defer srv.Close()
	s := newSession(newHTTPWire(srv.URL, srv.Client()), (&logSink{}).logf)
	ctx := context.Background()
	if err := s.initialize(ctx, "test"); err != nil {
		t.Fatal(err)
	}
	ts, err := s.tools(ctx, maxTools)
	if err != nil || len(ts) != 1 || ts[0].Name != "a" {
		t.Fatalf("tools: %v, %v", ts, err)
	}
	res, err := s.callTool(ctx, "a", map[string]any{})
	if err != nil || Render(res) != "done" {
		t.Fatalf("call: %v, %v", res, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	reqs := peer.all()
	var methods []string
	for i, r := range reqs {
		name := r.method + " " + r.msg.Method
		if r.msg.Method == "" && r.method == http.MethodPost {
			name += "answer " + string(r.msg.ID)
		}
		methods = append(methods, name)
		if r.method == http.MethodPost && (r.accept != "application/json, text/event-stream" || r.contentType != "application/json") {
			t.Errorf("%s: Accept %q, Content-Type %q", name, r.accept, r.contentType)
		}
		if i == 0 {
			if r.sessionID != "" || r.protocol != "" {
				t.Errorf("initialize carried session %q, version %q", r.sessionID, r.protocol)
			}
			continue
		}
		if r.sessionID != "sess-1" || r.protocol != "2025-06-18" {
			t.Errorf("%s: session %q, version %q; want sess-1, 2025-06-18", name, r.sessionID, r.protocol)
		}
	}
	want := `POST initialize,POST notifications/initialized,POST tools/list,POST answer "p1",POST tools/call,DELETE `
	if strings.Join(methods, ",") != want {
		t.Errorf("requests:\n%s\nwant\n%s", strings.Join(methods, ","), want)
	}
}

// TestHTTPFailures: what a streamable HTTP server does wrong ends the
// call (and the session) with an error, never a hang.
func TestHTTPFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		// call answers tools/call.
		call func(w http.ResponseWriter, m message)
		want string
	}{
		{"stale session", func(w http.ResponseWriter, _ message) { http.NotFound(w, nil) }, "no longer knows the session"},
		{"server error", func(w http.ResponseWriter, _ message) { http.Error(w, "boom", 500) }, "HTTP status 500"},
		{"stream ends without the answer", func(w http.ResponseWriter, _ message) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
		}, "without the answer"},
		{"oversize event", func(w http.ResponseWriter, m message) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"x\":\"%s\"}}\n\n", m.ID, strings.Repeat("x", maxFrame))
		}, "event over"},
		{"oversize JSON", func(w http.ResponseWriter, m message) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"x\":\"%s\"}}", m.ID, strings.Repeat("x", maxFrame))
		}, "message over"},
		{"answer to another id", func(w http.ResponseWriter, _ message) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":12345,"result":{}}`)
		}, "without the answer"},
		{"garbage body", func(w http.ResponseWriter, _ message) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `<html>`)
		}, "not JSON"},
		{"other content type", func(w http.ResponseWriter, _ message) {
			w.Header().Set("Content-Type", "text/html")
		}, "content type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deleted := make(chan string, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var m message
				json.NewDecoder(r.Body).Decode(&m)
				switch {
				case r.Method == http.MethodDelete:
					deleted <- r.Header.Get(headerSessionID)
				case m.Method == "initialize":
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set(headerSessionID, "s")
					io.WriteString(w, initAnswer(m.ID))
				case m.Method == "tools/call":
					tc.call(w, m)
				default:
					w.WriteHeader(http.StatusAccepted)
				}
			}))
			defer srv.Close()
			s := newSession(newHTTPWire(srv.URL, srv.Client()), (&logSink{}).logf)
			defer s.Close()
			if err := s.initialize(context.Background(), "test"); err != nil {
				t.Fatal(err)
			}
			errc := make(chan error, 1)
			go func() {
				_, err := s.callTool(context.Background(), "a", nil)
				errc <- err
			}()
			select {
			case err := <-errc:
				var re *rpcError
				if err == nil || errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("call: %v, want an error saying %q", err, tc.want)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("the call hangs")
			}
			select {
			case <-s.Done():
			default:
				t.Error("the session is not marked ended")
			}
			s.Close()
			// A session the server forgot is not deleted; any other is.
			select {
			case sid := <-deleted:
				if tc.name == "stale session" || sid != "s" {
					t.Errorf("DELETE with session %q", sid)
				}
			default:
				if tc.name != "stale session" {
					t.Error("no DELETE on close")
				}
			}
		})
	}
}

// Answers over HTTP that fail the call and leave the session as it was
// (as the Go SDK did): a JSON-RPC error, with status 200 or an HTTP error
// status (then an *rpcError all the same, so the model reads its code),
// and a passing overload status.
func TestHTTPErrorAnswer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		code   int64 // 0: not a JSON-RPC error
	}{
		{"JSON-RPC error", 200, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"server says no"}}`, -32603},
		{"JSON-RPC error with 400", 400, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"bad params"}}`, -32602},
		{"overloaded", 503, `try later %s`, 0},
		{"rate limited", 429, `slow down %s`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var m message
				json.NewDecoder(r.Body).Decode(&m)
				switch m.Method {
				case "initialize":
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, initAnswer(m.ID))
				case "tools/call":
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(tc.status)
					fmt.Fprintf(w, tc.body, m.ID)
				default:
					w.WriteHeader(http.StatusAccepted)
				}
			}))
			defer srv.Close()
			s := newSession(newHTTPWire(srv.URL, srv.Client()), (&logSink{}).logf)
			defer s.Close()
			if err := s.initialize(context.Background(), "test"); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				var re *rpcError
				_, err := s.callTool(context.Background(), "a", nil)
				if tc.code != 0 && (!errors.As(err, &re) || re.Code != tc.code) {
					t.Errorf("call: %v, want JSON-RPC error %d", err, tc.code)
				}
				if tc.code == 0 && (err == nil || errors.As(err, &re)) {
					t.Errorf("call: %v, want a failure that is no JSON-RPC error", err)
				}
			}
			if s.Err() != nil {
				t.Errorf("the session ended: %v", s.Err())
			}
		})
	}
}

// A server answering initialize with a protocol version reins does not
// speak fails the start.
func TestUnsupportedVersion(t *testing.T) {
	s, _ := stdioSession(t, func(p *peer) {
		m := p.next()
		p.write(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"1999-01-01","capabilities":{}}}`)
	})
	if err := s.initialize(context.Background(), "test"); err == nil || !strings.Contains(err.Error(), "reins does not") {
		t.Errorf("initialize: %v", err)
	}
}

// A server that never reads its stdin: a call whose message fills the
// pipe ends with its context, not in a write that never returns, and the
// half-written line breaks the connection.
func TestStdioServerNeverReads(t *testing.T) {
	toClient, fromServer, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	toServer, fromClient, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer fromServer.Close()
	defer toServer.Close()
	s := newSession(newStdioWire(toClient, fromClient), (&logSink{}).logf)
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- s.call(ctx, "tools/call", map[string]any{"big": strings.Repeat("x", 4<<20)}, nil)
	}()
	// The write has begun once its first byte is out; the rest (4 MiB)
	// cannot fit in the pipe, so it is blocked when ctx ends.
	toServer.SetReadDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.ReadFull(toServer, make([]byte, 1)); err != nil {
		t.Fatalf("reins wrote nothing: %v", err)
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("call: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("a write to a server that does not read hangs")
	}
	select {
	case <-s.Done():
	case <-time.After(30 * time.Second):
		t.Error("a half-written line did not break the connection")
	}
}

// Calls in flight together are matched to their answers by id, whatever
// order the server answers in: each call gets back the number it sent.
func TestStdioConcurrentCalls(t *testing.T) {
	const n = 20
	s, _ := stdioSession(t, func(p *peer) {
		var ms []message
		for range n {
			ms = append(ms, p.next())
		}
		for i := n - 1; i >= 0; i-- {
			var params struct{ K int }
			json.Unmarshal(ms[i].Params, &params)
			p.write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"v":%d}}`, ms[i].ID, params.K))
		}
	})
	var wg sync.WaitGroup
	for k := range n {
		wg.Go(func() {
			var res struct{ V int }
			if err := s.call(context.Background(), "x/y", map[string]int{"k": k + 1}, &res); err != nil || res.V != k+1 {
				t.Errorf("call %d: %v, got %d", k+1, err, res.V)
			}
		})
	}
	wg.Wait()
}
