package mock

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// serve sends body to srv in process and returns the response body.
func serve(t *testing.T, srv *Server, wire, body string) string {
	t.Helper()
	path := "/v1/chat/completions"
	if wire == WireAnthropic {
		path = "/v1/messages"
	}
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", w.Code, w.Body)
	}
	return w.Body.String()
}

func TestRequestsRing(t *testing.T) {
	srv := NewServer(&Script{Fallback: &Reply{Text: "x"}})
	const n = KeepRequests + 10
	for i := range n {
		serve(t, srv, WireOpenAI, openAIBody(fmt.Sprintf("q%d", i), false))
	}
	if got := srv.Count(); got != n {
		t.Fatalf("Count = %d, want %d", got, n)
	}
	if got := len(srv.Requests()); got != KeepRequests {
		t.Fatalf("%d requests held, want %d", got, KeepRequests)
	}
	if _, ok := srv.Request(9); ok {
		t.Fatal("request 9 is still held")
	}
	for _, i := range []int{10, n - 1} {
		rec, ok := srv.Request(i)
		if !ok || rec.Last != fmt.Sprintf("q%d", i) {
			t.Fatalf("Request(%d) = %q %v", i, rec.Last, ok)
		}
	}
	if _, ok := srv.Request(n); ok {
		t.Fatal("a request that was never sent")
	}
}

func TestRequestsRingBytes(t *testing.T) {
	srv := NewServer(&Script{Fallback: &Reply{Text: "x"}})
	big := strings.Repeat("b", 1<<20)
	for range 12 {
		serve(t, srv, WireOpenAI, openAIBody(big, false))
	}
	held := 0
	for _, r := range srv.Requests() {
		held += len(r.Body)
	}
	if held > KeepBytes || len(srv.Requests()) == 0 {
		t.Fatalf("%d bytes in %d requests held, bound %d", held, len(srv.Requests()), KeepBytes)
	}
}

var usageRE = regexp.MustCompile(`"cache_creation_input_tokens":(\d+),"cache_read_input_tokens":(\d+),"input_tokens":(\d+)`)

func cacheUsage(t *testing.T, resp string) (write, read, input int) {
	t.Helper()
	m := usageRE.FindStringSubmatch(resp)
	if m == nil {
		t.Fatalf("no usage in %s", resp)
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	return atoi(m[1]), atoi(m[2]), atoi(m[3])
}

// TestSimulatedPromptCache: a prefix up to a cache_control mark is written
// the first time and read when a later request starts with it.
func TestSimulatedPromptCache(t *testing.T) {
	srv := NewServer(&Script{Fallback: &Reply{Text: "x"}})
	sys := strings.Repeat("s", 4000)
	mark := `,"cache_control":{"type":"ephemeral"}`
	msg := func(role, text string, marked bool) string {
		m := ""
		if marked {
			m = mark
		}
		return `{"role":"` + role + `","content":[{"type":"text","text":"` + text + `"` + m + `}]}`
	}
	body := func(msgs ...string) string {
		return `{"model":"m","max_tokens":10,"stream":true,"system":[{"type":"text","text":"` + sys + `"` + mark + `}],"messages":[` + strings.Join(msgs, ",") + `]}`
	}
	first := body(msg("user", strings.Repeat("a", 2000), true))
	w, r, in := cacheUsage(t, serve(t, srv, WireAnthropic, first))
	if r != 0 || w < 1400 {
		t.Fatalf("first request: write %d read %d input %d", w, r, in)
	}
	second := body(msg("user", strings.Repeat("a", 2000), true), msg("assistant", "ok", false), msg("user", "more", true))
	w2, r2, in2 := cacheUsage(t, serve(t, srv, WireAnthropic, second))
	if r2 < w || w2 > 60 {
		t.Fatalf("second request: write %d read %d input %d (first wrote %d)", w2, r2, in2, w)
	}
	// A changed prefix reads only what still matches: the system prompt.
	third := body(msg("user", strings.Repeat("c", 2000), true))
	w3, r3, _ := cacheUsage(t, serve(t, srv, WireAnthropic, third))
	if r3 < 900 || r3 > 1100 || w3 < 400 {
		t.Fatalf("third request: write %d read %d", w3, r3)
	}
	// Without marks there is no cache.
	plain := `{"model":"m","max_tokens":10,"stream":true,"messages":[` + msg("user", "hi", false) + `]}`
	if w, r, _ := cacheUsage(t, serve(t, srv, WireAnthropic, plain)); w != 0 || r != 0 {
		t.Fatalf("unmarked request: write %d read %d", w, r)
	}
}
