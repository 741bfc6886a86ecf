package anthropic

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
// instead of dialing again (a TLS handshake per step against the real
// API). Fails when the body is closed right after message_stop, unread to
// its end.
func TestStreamReusesConnection(t *testing.T) {
	var dials atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, msgStart(10, 0)+startText(0)+textDelta(0, "hi")+blockStop(0)+msgDelta("end_turn", 2)+msgStop())
		w.(http.Flusher).Flush()
		// The body's end comes a moment after message_stop.
		time.Sleep(20 * time.Millisecond)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c := &Client{BaseURL: srv.URL, APIKey: "k", HTTP: srv.Client()}
	for i := range 5 {
		chunks := collect(t, t.Context(), c, simpleRequest(), nil)
		if f := chunks[len(chunks)-1].Finish; f == nil || f.Kind != llm.FinishStop {
			t.Fatalf("request %d: last chunk %+v", i, chunks[len(chunks)-1])
		}
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("5 requests dialed %d connections, want 1", n)
	}
}
