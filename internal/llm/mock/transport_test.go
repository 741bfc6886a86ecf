package mock

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

const inProcessBase = "http://mock.invalid"

func inProcess(s *Script) (*Server, *http.Client) {
	srv := NewServer(s)
	return srv, &http.Client{Transport: srv.Transport()}
}

// TestTransportMatchesTCP: the in-process transport yields the same status,
// headers and events as the TCP server.
func TestTransportMatchesTCP(t *testing.T) {
	script := func() *Script {
		return &Script{Replies: []Reply{
			{Reasoning: "r", Text: "hello", Chunk: 2, KeepAlive: true, ToolCalls: []ToolCall{{Name: "f", Arguments: json.RawMessage(`{"k":"v"}`)}}, Usage: testUsage},
			{Status: 429, Headers: map[string]string{"Retry-After": "3"}},
			{Fault: FaultCut, Text: "part", Usage: testUsage},
			{Fault: FaultEmptyBody},
			{Fault: FaultContextWindow},
		}}
	}
	for _, wire := range []string{WireOpenAI, WireAnthropic} {
		t.Run(wire, func(t *testing.T) {
			url, _, tcp := startTCP(t, script())
			_, local := inProcess(script())
			for i := range script().Replies {
				r1, b1 := post(t, tcp, url, wire, bodyFor(wire, "x"))
				r2, b2 := post(t, local, inProcessBase, wire, bodyFor(wire, "x"))
				if r1.StatusCode != r2.StatusCode {
					t.Errorf("reply %d: status tcp %d, in-process %d", i, r1.StatusCode, r2.StatusCode)
				}
				for _, h := range []string{"Content-Type", "Retry-After"} {
					if r1.Header.Get(h) != r2.Header.Get(h) {
						t.Errorf("reply %d: %s tcp %q, in-process %q", i, h, r1.Header.Get(h), r2.Header.Get(h))
					}
				}
				if r1.StatusCode != http.StatusOK {
					if string(b1) != string(b2) {
						t.Errorf("reply %d: body tcp %s, in-process %s", i, b1, b2)
					}
					continue
				}
				sum := summarizeOpenAI
				if wire == WireAnthropic {
					sum = summarizeAnthropic
				}
				if d := cmp.Diff(sum(t, parseSSE(t, b1)), sum(t, parseSSE(t, b2))); d != "" {
					t.Errorf("reply %d events (-tcp +in-process):\n%s", i, d)
				}
			}
		})
	}
}

// TestTransportStreams: the first event arrives while the handler is
// still running (it waits an hour before the next one), and cancelling
// the request ends both the read and the handler.
func TestTransportStreams(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	srv, c := inProcess(&Script{Replies: []Reply{{Text: "abcd", Chunk: 1, ChunkDelay: Duration(1 << 62)}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := c.Do(wireReq(ctx, t, inProcessBase, WireOpenAI, openAIBody("x", false)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, `"role":"assistant"`) {
		t.Fatalf("first line %q, %v", line, err)
	}
	if srv.InFlight() != 1 {
		t.Errorf("InFlight %d while streaming", srv.InFlight())
	}
	cancel()
	if _, err := io.ReadAll(br); !errors.Is(err, context.Canceled) {
		t.Errorf("read after cancel: %v, want context.Canceled", err)
	}
	goleak.VerifyNone(t, ignore)
	if srv.InFlight() != 0 {
		t.Errorf("handler still running")
	}
}

// TestTransportBodyCloseEndsHandler: closing the body without cancelling
// hangs up like a client closing its connection.
func TestTransportBodyCloseEndsHandler(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	srv, c := inProcess(&Script{Replies: []Reply{{Fault: FaultStall}}})
	resp, err := c.Do(wireReq(context.Background(), t, inProcessBase, WireAnthropic, anthropicBody("x")))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Errorf("status %d", resp.StatusCode)
	}
	resp.Body.Close()
	goleak.VerifyNone(t, ignore)
	if srv.InFlight() != 0 {
		t.Errorf("handler still running")
	}
}

func TestTransportCancelBeforeHeaders(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	srv, c := inProcess(&Script{Replies: []Reply{{Text: "x", Barrier: 2}}})
	waiting := make(chan struct{}, 1)
	srv.onWait = func() { waiting <- struct{}{} }
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Do(wireReq(ctx, t, inProcessBase, WireOpenAI, openAIBody("x", false)))
		errc <- err
	}()
	<-waiting
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
	goleak.VerifyNone(t, ignore)
}

func TestTransportCutEndsWithEOF(t *testing.T) {
	_, c := inProcess(&Script{Replies: []Reply{{Text: "part", Fault: FaultCut}}})
	resp, body := post(t, c, inProcessBase, WireOpenAI, openAIBody("x", true))
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	got := summarizeOpenAI(t, parseSSE(t, body))
	if d := cmp.Diff([]string{"role", "text:part"}, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

func TestResetFault(t *testing.T) {
	script := &Script{Replies: []Reply{{Fault: FaultReset, Repeat: true}}}
	t.Run("in-process", func(t *testing.T) {
		_, c := inProcess(script)
		_, err := c.Do(wireReq(context.Background(), t, inProcessBase, WireOpenAI, openAIBody("x", false)))
		if !errors.Is(err, syscall.ECONNRESET) || !strings.Contains(err.Error(), "connection reset") {
			t.Errorf("err %v, want a connection reset", err)
		}
	})
	t.Run("tcp", func(t *testing.T) {
		url, srv, c := startTCP(t, script)
		for _, wire := range []string{WireOpenAI, WireAnthropic} {
			resp, err := c.Do(wireReq(context.Background(), t, url, wire, bodyFor(wire, "x")))
			if err == nil {
				resp.Body.Close()
				t.Fatalf("%s: got HTTP %d, want a transport error", wire, resp.StatusCode)
			}
			if !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("%s: err %v, want connection reset", wire, err)
			}
		}
		if srv.Count() != 2 {
			t.Errorf("Count %d", srv.Count())
		}
	})
}

func TestListenAndServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- ListenAndServe(ctx, "", &Script{Replies: []Reply{{Text: "served"}, {Fault: FaultStall}}},
			func(addr string) { addrc <- addr })
	}()
	addr := <-addrc
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" {
		t.Errorf("bound %q, want loopback", addr)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	if got := replyText(t, c, "http://"+addr, openAIBody("x", false)); got != "served" {
		t.Errorf("got %q", got)
	}
	// A stalled stream must not hold up shutdown.
	resp, err := c.Do(wireReq(context.Background(), t, "http://"+addr, WireOpenAI, openAIBody("x", false)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("ListenAndServe: %v", err)
	}
	// Shutdown ended the stalled handler, so the body ends (cleanly or not).
	_, _ = io.ReadAll(resp.Body)
}

func TestListenAndServeBadAddr(t *testing.T) {
	err := ListenAndServe(context.Background(), "256.0.0.1:bad", nil, nil)
	if err == nil {
		t.Fatal("want a listen error")
	}
}
