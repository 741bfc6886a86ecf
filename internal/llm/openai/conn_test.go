package openai

import (
	"testing"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/llmtest"
)

// A finished stream gives its connection back: the next request reuses it
// instead of dialing again (against a real provider, a TLS handshake per
// step). Fails when the body is closed right after [DONE], unread to its
// end.
func TestStreamReusesConnection(t *testing.T) {
	srv, dials := llmtest.LingeringServer(t,
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n"+
			"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"+
			"data: [DONE]\n\n")
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
