package openai

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/mock"
)

// every writes body and flushes it every few milliseconds until the
// client goes away: a live connection that carries nothing.
func every(body string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-t.C:
				if _, err := io.WriteString(w, body); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}
	}
}

// TestProgressTimeout: a stream that keeps the connection alive but sends
// no content ends as TIMEOUT once the no-progress deadline passes, though
// the idle watchdog (an hour here) never fires.
func TestProgressTimeout(t *testing.T) {
	keepAlive := mock.NewServer(&mock.Script{Replies: []mock.Reply{
		{Fault: mock.FaultStall, KeepAlive: true, ChunkDelay: mock.Duration(5 * time.Millisecond)},
	}})
	tests := []struct {
		name   string
		client func(t *testing.T) *Client
	}{
		{"mock keep-alives only", func(t *testing.T) *Client {
			return &Client{BaseURL: "http://mock.invalid", HTTP: &http.Client{Transport: keepAlive.Transport()}}
		}},
		{"empty events only", func(t *testing.T) *Client {
			c, _ := newClient(t, sendThen("", every(events(`{"id":"x","choices":[]}`))))
			return c
		}},
		{"content then keep-alives", func(t *testing.T) *Client {
			c, _ := newClient(t, sendThen(events(text("Hel")), every(": keep-alive\n\n")))
			return c
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.client(t)
			c.IdleTimeout = time.Hour
			c.ProgressTimeout = 100 * time.Millisecond
			done := make(chan *result, 1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { done <- collect(t, ctx, c, simpleRequest) }()
			select {
			case r := <-done:
				if r.fin.Kind != llm.FinishError || r.fin.Code != llm.CodeTimeout {
					t.Errorf("finish %+v, want TIMEOUT", r.fin)
				}
			case <-time.After(20 * time.Second):
				cancel()
				<-done
				t.Fatal("a stream without content did not end")
			}
		})
	}
}

// TestKeepAlivesWithContentComplete: keep-alives between content chunks
// are harmless while content keeps coming.
func TestKeepAlivesWithContentComplete(t *testing.T) {
	srv := mock.NewServer(&mock.Script{Replies: []mock.Reply{{Text: "hello there", Chunk: 2, KeepAlive: true}}})
	c := &Client{BaseURL: "http://mock.invalid", HTTP: &http.Client{Transport: srv.Transport()}, ProgressTimeout: time.Minute}
	r := collect(t, context.Background(), c, simpleRequest)
	if r.fin.Kind != llm.FinishStop {
		t.Errorf("finish %+v, want stop", r.fin)
	}
}
