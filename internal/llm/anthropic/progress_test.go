package anthropic

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/mock"
)

// TestProgressTimeout: keep-alive comments and ping events feed the idle
// watchdog but are not content: the attempt ends as TIMEOUT once the
// no-progress deadline passes.
func TestProgressTimeout(t *testing.T) {
	keepAlive := mock.NewServer(&mock.Script{Replies: []mock.Reply{
		{Fault: mock.FaultStall, KeepAlive: true, ChunkDelay: mock.Duration(5 * time.Millisecond)},
	}})
	pings := func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for {
			if _, err := io.WriteString(w, "event: ping\ndata: {\"type\":\"ping\"}\n\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	tests := []struct {
		name   string
		client func(t *testing.T) *Client
	}{
		{"mock keep-alives only", func(t *testing.T) *Client {
			return &Client{BaseURL: "http://mock.invalid", HTTP: &http.Client{Transport: keepAlive.Transport()}}
		}},
		{"pings only", func(t *testing.T) *Client {
			c, _ := newServer(t, http.HandlerFunc(pings))
			return c
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.client(t)
			c.IdleTimeout = time.Hour
			c.ProgressTimeout = 100 * time.Millisecond
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan []llm.Chunk, 1)
			go func() { done <- collect(t, ctx, c, simpleRequest(), nil) }()
			select {
			case chunks := <-done:
				fin := chunks[len(chunks)-1].Finish
				if fin.Kind != llm.FinishError || fin.Code != llm.CodeTimeout {
					t.Errorf("finish %+v, want TIMEOUT", fin)
				}
			case <-time.After(20 * time.Second):
				cancel()
				<-done
				t.Fatal("a stream without content did not end")
			}
		})
	}
}
