package openai

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
)

// A finished stream gives its connection back: the next request reuses it
// instead of dialing again (against a real provider, a TLS handshake per
// step). Fails when the body is closed right after [DONE], unread to its
// end.
func TestStreamReusesConnection(t *testing.T) {
	var dials atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		drain(r)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n")
		w.(http.Flusher).Flush()
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
		w.(http.Flusher).Flush()
		// The body's end (the chunked encoding's last chunk) comes a
		// moment after [DONE], as from a provider behind a proxy.
		time.Sleep(20 * time.Millisecond)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c := &Client{BaseURL: srv.URL, HTTP: srv.Client(), Provider: "openai"}
	for i := range 5 {
		if r := collect(t, t.Context(), c, simpleRequest); r.fin.Kind != llm.FinishStop {
			t.Fatalf("request %d: finish %+v", i, r.fin)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("5 requests dialed %d connections, want 1", n)
	}
}
