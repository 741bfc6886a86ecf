package openai

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/reinsdev/reins/internal/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// canary is planted in every provider error body; it must never reach a
// finish (only the host log).
const canary = "CANARY-5e1f9a"

// events renders payloads as SSE data events, byte for byte as the
// providers send them.
func events(payloads ...string) string {
	var b strings.Builder
	for _, p := range payloads {
		b.WriteString("data: ")
		b.WriteString(p)
		b.WriteString("\n\n")
	}
	return b.String()
}

// delta is a chunk whose only choice carries the given delta fields.
func delta(fields string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{` +
		fields + `},"logprobs":null,"finish_reason":null}],"usage":null}`
}

// finishWith is the chunk carrying a finish reason and an empty delta.
func finishWith(reason string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"` +
		reason + `"}],"usage":null}`
}

const (
	roleDelta = `"role":"assistant","content":""`
	done      = "[DONE]"
)

func text(s string) string { return delta(fmt.Sprintf(`"content":%q`, s)) }

// drain reads the request body so the server never closes a connection
// with unread bytes (which would turn a clean close into a reset).
func drain(r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }

// streamOK answers 200 with body written and flushed as is.
func streamOK(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		drain(r)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, body)
	}
}

// status answers code with headers and body.
func status(code int, body string, kv ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		drain(r)
		for i := 0; i+1 < len(kv); i += 2 {
			w.Header().Set(kv[i], kv[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

// sendThen writes body, flushes it, then runs after (which may stall,
// abort or hijack).
func sendThen(body string, after func(w http.ResponseWriter, r *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		drain(r)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, body)
		w.(http.Flusher).Flush()
		after(w, r)
	}
}

// stall blocks until the client goes away.
func stall(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// logSink collects Logf output.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (l *logSink) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// newClient starts a server for h and returns a client for it.
func newClient(t *testing.T, h http.Handler) (*Client, *logSink) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	logs := &logSink{}
	return &Client{BaseURL: srv.URL, HTTP: srv.Client(), Provider: "openai", Logf: logs.logf}, logs
}

var simpleRequest = &llm.Request{
	Model:    "m",
	Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "hi"}}}},
}

type result struct {
	chunks []llm.Chunk
	asm    llm.Assembler
	fin    llm.Finish
}

// collect runs one Stream to its end and checks the chunk protocol.
func collect(t *testing.T, ctx context.Context, c *Client, req *llm.Request) *result {
	t.Helper()
	r := &result{}
	for ch := range c.Stream(ctx, req) {
		r.chunks = append(r.chunks, ch)
		r.asm.Push(ch)
	}
	checkProtocol(t, r.chunks)
	r.fin = r.asm.Finish()
	return r
}

// checkProtocol verifies the stream contract every consumer relies on:
// exactly one finish, last; blocks opened with indexes 0, 1, 2, ...; deltas
// only into an open block of the matching kind; every block ended once,
// before the finish.
func checkProtocol(t *testing.T, chunks []llm.Chunk) {
	t.Helper()
	if len(chunks) == 0 {
		t.Fatal("no chunks: the stream must end with a finish")
	}
	for i, c := range chunks {
		if (c.Type == llm.ChunkFinish) != (i == len(chunks)-1) {
			t.Fatalf("chunk %d of %d is %q: want exactly one finish, last", i, len(chunks), c.Type)
		}
	}
	if chunks[len(chunks)-1].Finish == nil {
		t.Fatal("finish chunk without a Finish")
	}
	kinds := map[int]llm.BlockType{}
	open := map[int]bool{}
	next := 0
	for i, c := range chunks {
		switch c.Type {
		case llm.ChunkBlockStart:
			if c.Index != next || c.Block == nil {
				t.Fatalf("chunk %d: block-start index %d (block %v), want index %d", i, c.Index, c.Block, next)
			}
			next++
			kinds[c.Index] = c.Block.Type
			open[c.Index] = true
		case llm.ChunkTextDelta, llm.ChunkReasoningDelta, llm.ChunkToolCallDelta:
			want := map[llm.ChunkType]llm.BlockType{
				llm.ChunkTextDelta: llm.BlockText, llm.ChunkReasoningDelta: llm.BlockReasoning, llm.ChunkToolCallDelta: llm.BlockToolCall,
			}[c.Type]
			if !open[c.Index] || kinds[c.Index] != want {
				t.Fatalf("chunk %d: %s into block %d (open %v, kind %q)", i, c.Type, c.Index, open[c.Index], kinds[c.Index])
			}
		case llm.ChunkBlockEnd:
			if !open[c.Index] {
				t.Fatalf("chunk %d: block-end of block %d that is not open", i, c.Index)
			}
			open[c.Index] = false
		}
	}
	for i, o := range open {
		if o {
			t.Fatalf("block %d never ended", i)
		}
	}
}
