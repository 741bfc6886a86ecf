package jsonstream

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/session"
)

// gateWriter blocks every Write until open is closed: a reader that does
// not read.
type gateWriter struct {
	open chan struct{}
	mu   sync.Mutex
	buf  bytes.Buffer
}

func (g *gateWriter) Write(p []byte) (int, error) {
	<-g.open
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.Write(p)
}

// A reader that stops reading never blocks the run: lines beyond the bound
// are dropped and a stream/dropped line says how many; none is lost
// silently, and the final object is still the last line.
func TestStreamDropsLoudly(t *testing.T) {
	w := &gateWriter{open: make(chan struct{})}
	s := New(w, "main")
	const n = Limit + 500
	h := session.Header{ID: "root"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			s.Observe(h, session.Event{Type: "assistant/chunk", Seq: int64(i), Time: time.Unix(0, 0), Data: json.RawMessage(`{}`)})
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("observe blocked on a reader that does not read")
	}
	close(w.open)
	if err := s.Close(map[string]string{"sessionId": "root", "stopReason": "completed"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(w.buf.String(), "\n"), "\n")
	events, dropped := 0, 0
	for _, l := range lines[:len(lines)-1] {
		var d Dropped
		json.Unmarshal([]byte(l), &d)
		if d.Type == "stream/dropped" {
			dropped += d.Count
		} else {
			events++
		}
	}
	t.Logf("%d events written, %d dropped and said so", events, dropped)
	if dropped == 0 || events+dropped != n {
		t.Errorf("%d written + %d said dropped, want %d in all", events, dropped, n)
	}
	if !strings.Contains(lines[len(lines)-1], `"stopReason":"completed"`) {
		t.Errorf("last line %s", lines[len(lines)-1])
	}
}

// Model and child text cannot drive the terminal: control characters are
// escaped in every line.
func TestStreamEscapes(t *testing.T) {
	var b bytes.Buffer
	s := New(&b, "main\x1b[31m")
	data, _ := json.Marshal(map[string]string{"delta": "\x1b]0;pwned\x07 \u009b2J"})
	s.Observe(session.Header{ID: "x\x1by", Agent: "a\x1b"}, session.Event{Type: "assistant/chunk", Data: data})
	s.Close(map[string]string{"output": "\x1b[2J"})
	if bytes.ContainsAny(b.Bytes(), "\x1b\x07\u009b") {
		t.Errorf("raw control bytes in the stream: %q", b.String())
	}
}
