package mock

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

// replyText sends one OpenAI request and returns the streamed text, or
// "HTTP <status>" for a non-200 answer.
func replyText(t *testing.T, c *http.Client, url, body string) string {
	t.Helper()
	resp, b := post(t, c, url, WireOpenAI, body)
	if resp.StatusCode != http.StatusOK {
		return "HTTP " + http.StatusText(resp.StatusCode)
	}
	var text strings.Builder
	for _, s := range summarizeOpenAI(t, parseSSE(t, b)) {
		if v, ok := strings.CutPrefix(s, "text:"); ok {
			text.WriteString(v)
		}
	}
	return text.String()
}

func TestSelection(t *testing.T) {
	script := &Script{Replies: []Reply{
		{Match: "weather", Text: "sunny"},
		{Text: "first"},
		{Text: "second"},
		{Match: "ping", Text: "pong", Repeat: true},
	}}
	tests := []struct {
		name     string
		fallback *Reply
		prompts  []string
		want     []string
		index    []int
	}{
		{
			name:    "in order, match skips, repeat stays, then 500",
			prompts: []string{"hello", "ping", "what weather?", "ping", "hello", "weather again", "ping", "x"},
			want:    []string{"first", "second", "sunny", "pong", "HTTP Internal Server Error", "HTTP Internal Server Error", "pong", "HTTP Internal Server Error"},
			index:   []int{1, 2, 0, 3, IndexNone, IndexNone, 3, IndexNone},
		},
		{
			name:     "fallback when nothing fits",
			fallback: &Reply{Text: "fb"},
			prompts:  []string{"a", "b", "c", "d"},
			want:     []string{"first", "second", "fb", "fb"},
			index:    []int{1, 2, IndexFallback, IndexFallback},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := *script
			s.Fallback = tt.fallback
			url, srv, c := startTCP(t, &s)
			var got []string
			for _, p := range tt.prompts {
				got = append(got, replyText(t, c, url, openAIBody(p, false)))
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("replies (-want +got):\n%s", d)
			}
			var idx []int
			for _, r := range srv.Requests() {
				idx = append(idx, r.Index)
			}
			if d := cmp.Diff(tt.index, idx); d != "" {
				t.Errorf("indexes (-want +got):\n%s", d)
			}
			if srv.Count() != len(tt.prompts) {
				t.Errorf("Count %d", srv.Count())
			}
		})
	}
}

func TestNoMatchNamesRequest(t *testing.T) {
	url, _, c := startTCP(t, &Script{Replies: []Reply{{Text: "one"}}})
	for _, wire := range []string{WireOpenAI, WireAnthropic} {
		post(t, c, url, wire, bodyFor(wire, "x"))
	}
	for n, wire := range []string{WireOpenAI, WireAnthropic} {
		resp, body := post(t, c, url, wire, bodyFor(wire, "x"))
		if resp.StatusCode != 500 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if typ := errorType(t, wire, body); typ == "" {
			t.Errorf("no error type: %s", body)
		}
		want := []string{"request 3", "request 4"}[n]
		if !strings.Contains(string(body), want) {
			t.Errorf("%s: body %s does not name %q", wire, body, want)
		}
	}
}

// TestMatchSources: Match looks at the system prompt and the trailing
// user/tool messages, in every content shape of both wires.
func TestMatchSources(t *testing.T) {
	oa := func(msgs ...any) string {
		b, _ := json.Marshal(map[string]any{"model": "test-model", "messages": msgs})
		return string(b)
	}
	an := func(system any, msgs ...any) string {
		m := map[string]any{"model": "test-model", "messages": msgs}
		if system != nil {
			m["system"] = system
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	msg := func(role string, content any) map[string]any { return map[string]any{"role": role, "content": content} }
	parts := func(texts ...string) []any {
		var out []any
		for _, s := range texts {
			out = append(out, map[string]any{"type": "text", "text": s})
		}
		return out
	}
	tests := []struct {
		name  string
		wire  string
		body  string
		match bool
		last  string
	}{
		{"openai user string", WireOpenAI, oa(msg("user", "the NEEDLE here")), true, "the NEEDLE here"},
		{"openai user parts", WireOpenAI, oa(msg("user", parts("a", "NEEDLE"))), true, "a\nNEEDLE"},
		{"openai system", WireOpenAI, oa(msg("system", "NEEDLE sys"), msg("user", "hi")), true, "hi"},
		{"openai developer parts", WireOpenAI, oa(msg("developer", parts("NEEDLE")), msg("user", "hi")), true, "hi"},
		{"openai one of parallel tool results", WireOpenAI, oa(msg("user", "go"),
			map[string]any{"role": "assistant", "tool_calls": []any{}},
			map[string]any{"role": "tool", "tool_call_id": "a", "content": "NEEDLE out"},
			map[string]any{"role": "tool", "tool_call_id": "b", "content": "other"}), true, "other"},
		{"openai earlier user turn does not match", WireOpenAI, oa(msg("user", "NEEDLE"), msg("assistant", "ok"), msg("user", "next")), false, "next"},
		{"anthropic system string", WireAnthropic, an("NEEDLE", msg("user", "hi")), true, "hi"},
		{"anthropic system blocks", WireAnthropic, an(parts("x", "NEEDLE"), msg("user", "hi")), true, "hi"},
		{"anthropic user blocks", WireAnthropic, an(nil, msg("user", parts("NEEDLE"))), true, "NEEDLE"},
		{"anthropic tool_result string", WireAnthropic, an(nil, msg("user", []any{
			map[string]any{"type": "tool_result", "tool_use_id": "t", "content": "NEEDLE"}})), true, "NEEDLE"},
		{"anthropic tool_result blocks", WireAnthropic, an(nil, msg("user", []any{
			map[string]any{"type": "tool_result", "tool_use_id": "t", "content": parts("NEEDLE")}})), true, "NEEDLE"},
		{"anthropic earlier turn does not match", WireAnthropic, an(nil, msg("user", "NEEDLE"), msg("assistant", "ok"), msg("user", "no")), false, "no"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, srv, c := startTCP(t, &Script{Replies: []Reply{{Match: "NEEDLE", Text: "hit"}}})
			resp, _ := post(t, c, url, tt.wire, tt.body)
			if got := resp.StatusCode == http.StatusOK; got != tt.match {
				t.Errorf("matched = %v (status %d), want %v", got, resp.StatusCode, tt.match)
			}
			rec := srv.Requests()[0]
			if rec.Last != tt.last || rec.Model != "test-model" || rec.Wire != tt.wire {
				t.Errorf("recorded last %q model %q wire %q", rec.Last, rec.Model, rec.Wire)
			}
		})
	}
}

func TestRecorded(t *testing.T) {
	url, srv, c := startTCP(t, &Script{Fallback: &Reply{Text: "x"}})
	req := wireReq(context.Background(), t, url, WireAnthropic, anthropicBody("hello"))
	req.Header.Set("X-Api-Key", "k1")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	post(t, c, url, WireOpenAI, openAIBody("again", false))
	// The /v1 prefix of an OpenAI base URL is routed too.
	req = wireReq(context.Background(), t, url+"/v1", WireOpenAI, openAIBody("v1", false))
	if resp, err = c.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	recs := srv.Requests()
	if len(recs) != 3 {
		t.Fatalf("%d recorded", len(recs))
	}
	got := []string{recs[0].Wire, recs[0].Path, recs[0].Header.Get("X-Api-Key"), recs[0].Last, recs[0].System,
		recs[1].Wire, recs[1].Path, recs[1].Last, recs[2].Path}
	want := []string{WireAnthropic, "/v1/messages", "k1", "hello", "be terse",
		WireOpenAI, "/chat/completions", "again", "/v1/chat/completions"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("recorded (-want +got):\n%s", d)
	}
	if string(recs[1].Body) != openAIBody("again", false) {
		t.Errorf("body %s", recs[1].Body)
	}
}

func TestBadRequests(t *testing.T) {
	url, srv, c := startTCP(t, &Script{Fallback: &Reply{Text: "x"}})
	tests := []struct {
		method, path, body string
		status             int
	}{
		{http.MethodPost, "/nowhere", "{}", 404},
		{http.MethodGet, "/chat/completions", "", 405},
		{http.MethodPost, "/chat/completions", "{not json", 400},
		{http.MethodPost, "/v1/messages", `{"messages": 3}`, 400},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, url+tt.path, strings.NewReader(tt.body))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s %s %q: status %d, want %d", tt.method, tt.path, tt.body, resp.StatusCode, tt.status)
		}
	}
	for _, r := range srv.Requests() {
		if r.Index != IndexNone {
			t.Errorf("invalid request served by reply %d", r.Index)
		}
	}
}

func TestDefaultScriptEchoes(t *testing.T) {
	url, _, c := startTCP(t, nil)
	for _, p := range []string{"hello", "world"} {
		if got := replyText(t, c, url, openAIBody(p, false)); got != "mock: "+p {
			t.Errorf("got %q", got)
		}
	}
}

// TestBarrier: four requests to a Barrier-4 reply are all held until the
// fourth arrives, then all complete.
func TestBarrier(t *testing.T) {
	url, srv, c := startTCP(t, &Script{Replies: []Reply{{Text: "go", Barrier: 4, Repeat: true}}})
	waiting := make(chan struct{}, 4)
	srv.onWait = func() { waiting <- struct{}{} }

	results := make(chan string, 4)
	var wg sync.WaitGroup
	send := func() {
		wg.Go(func() { results <- replyText(t, c, url, openAIBody("x", false)) })
	}
	for range 3 {
		send()
	}
	for range 3 {
		<-waiting
	}
	select {
	case r := <-results:
		t.Fatalf("a request finished before the barrier filled: %q", r)
	default:
	}
	if srv.InFlight() != 3 {
		t.Errorf("InFlight %d, want 3", srv.InFlight())
	}
	send()
	wg.Wait()
	close(results)
	n := 0
	for r := range results {
		if r != "go" {
			t.Errorf("reply %q", r)
		}
		n++
	}
	if n != 4 {
		t.Errorf("%d replies", n)
	}
}

// TestBarrierReleasedOnDisconnect: a request waiting at a barrier ends
// when its client goes away; nothing leaks.
func TestBarrierReleasedOnDisconnect(t *testing.T) {
	url, srv, c := startTCP(t, &Script{Replies: []Reply{{Text: "go", Barrier: 2}}})
	ignore := goleak.IgnoreCurrent()
	waiting := make(chan struct{}, 1)
	srv.onWait = func() { waiting <- struct{}{} }
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		resp, err := c.Do(wireReq(ctx, t, url, WireOpenAI, openAIBody("x", false)))
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-waiting
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
	c.CloseIdleConnections()
	goleak.VerifyNone(t, ignore)
}

// TestStallEndsOnCancel: a stalled stream sends headers, then nothing; the
// handler ends when the client cancels.
func TestStallEndsOnCancel(t *testing.T) {
	for _, wire := range []string{WireOpenAI, WireAnthropic} {
		t.Run(wire, func(t *testing.T) {
			url, srv, c := startTCP(t, &Script{Replies: []Reply{{Text: "never", Fault: FaultStall}}})
			ignore := goleak.IgnoreCurrent()
			ctx, cancel := context.WithCancel(context.Background())
			resp, err := c.Do(wireReq(ctx, t, url, wire, bodyFor(wire, "x")))
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Errorf("status %d content-type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			read := make(chan error, 1)
			go func() {
				b, err := io.ReadAll(resp.Body)
				if len(b) != 0 {
					err = errors.New("stall sent bytes: " + string(b))
				}
				read <- err
			}()
			cancel()
			if err := <-read; !errors.Is(err, context.Canceled) {
				t.Errorf("read: %v, want context.Canceled", err)
			}
			resp.Body.Close()
			c.CloseIdleConnections()
			// The handler must end on its own, before the server stops.
			goleak.VerifyNone(t, ignore)
			if n := srv.InFlight(); n != 0 {
				t.Errorf("InFlight %d after the stall ended", n)
			}
		})
	}
}

func TestDelayCancellable(t *testing.T) {
	url, srv, c := startTCP(t, &Script{Replies: []Reply{{Text: "late", Delay: Duration(1 << 62)}}})
	ignore := goleak.IgnoreCurrent()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Do(wireReq(ctx, t, url, WireOpenAI, openAIBody("x", false)))
		errc <- err
	}()
	for srv.Count() == 0 {
		// The request is recorded before the delay; yield until it is.
		select {
		case err := <-errc:
			t.Fatalf("request ended early: %v", err)
		default:
		}
		runtime.Gosched()
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("err %v", err)
	}
	c.CloseIdleConnections()
	goleak.VerifyNone(t, ignore)
}
