package anthropic

import (
	"testing"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/llmtest"
)

// A finished stream gives its connection back: the next request reuses it
// instead of dialing again (a TLS handshake per step against the real
// API). Fails when the body is closed right after message_stop, unread to
// its end.
func TestStreamReusesConnection(t *testing.T) {
	srv, dials := llmtest.LingeringServer(t, msgStart(10, 0)+startText(0)+textDelta(0, "hi")+blockStop(0)+msgDelta("end_turn", 2)+msgStop())
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
