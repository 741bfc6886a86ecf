package anthropic

import (
	"context"
	"encoding/json"
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

// canary is planted in every provider error text; it must reach Logf and
// never a finish message.
const canary = "CANARY-5d1e0c-provider-text"

// SSE builders writing the exact bytes Anthropic sends.

func ev(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func msgStart(input, cacheRead int) string {
	return ev("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":%d,"output_tokens":1}}}`, input, cacheRead))
}

func startText(i int) string {
	return ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, i))
}

func startThinking(i int) string {
	return ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"thinking","thinking":"","signature":""}}`, i))
}

func startRedacted(i int, data string) string {
	return ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"redacted_thinking","data":%s}}`, i, jsonString(data)))
}

func startToolUse(i int, id, name string) string {
	return ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, i, id, name))
}

func textDelta(i int, s string) string {
	return ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, i, jsonString(s)))
}

func thinkingDelta(i int, s string) string {
	return ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"thinking_delta","thinking":%s}}`, i, jsonString(s)))
}

func signatureDelta(i int, s string) string {
	return ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"signature_delta","signature":%s}}`, i, jsonString(s)))
}

func jsonDelta(i int, s string) string {
	return ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, i, jsonString(s)))
}

func blockStop(i int) string {
	return ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
}

// msgDelta sends a stop reason; "" sends null.
func msgDelta(reason string, output int) string {
	r := "null"
	if reason != "" {
		r = jsonString(reason)
	}
	return ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%s,"stop_sequence":null},"usage":{"output_tokens":%d}}`, r, output))
}

func msgStop() string { return ev("message_stop", `{"type":"message_stop"}`) }

func ping() string { return ev("ping", `{"type": "ping"}`) }

func errorEvent(typ, msg string) string {
	return ev("error", fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%s}}`, typ, jsonString(msg)))
}

func errorBody(typ, msg string) string {
	return fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%s}}`, typ, jsonString(msg+" "+canary))
}

// textReply is a complete successful text stream.
func textReply(text string) string {
	return msgStart(10, 0) + startText(0) + textDelta(0, text) + blockStop(0) + msgDelta("end_turn", 5) + msgStop()
}

// sseBody answers 200 with body as an event stream.
func sseBody(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(body))
	}
}

// status answers a non-200 with a JSON error body.
func status(code int, header map[string]string, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}

// stall sends headers (when headers is set) and body, then sends nothing
// more until the client goes away.
func stall(headers bool, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// The server notices a client hang-up only once the request body
		// has been read.
		_, _ = io.Copy(io.Discard, r.Body)
		if headers {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte(body))
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
	}
}

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

// newServer starts srv and returns a client for it; everything is closed
// when the test ends.
func newServer(t testing.TB, h http.Handler) (*Client, *logSink) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	logs := &logSink{}
	return &Client{BaseURL: srv.URL, APIKey: "sk-test", HTTP: srv.Client(), Logf: logs.logf}, logs
}

// collect drains a stream, checking the invariants every stream must keep:
// exactly one finish and it comes last, block indexes open in order from 0,
// and deltas and ends name an opened block.
func collect(t *testing.T, ctx context.Context, c *Client, req *llm.Request, onChunk func(n int)) []llm.Chunk {
	t.Helper()
	var chunks []llm.Chunk
	opened := 0
	for ch := range c.Stream(ctx, req) {
		if n := len(chunks); n > 0 && chunks[n-1].Type == llm.ChunkFinish {
			t.Fatalf("chunk after finish: %+v", ch)
		}
		switch ch.Type {
		case llm.ChunkBlockStart:
			if ch.Index != opened {
				t.Errorf("block-start index %d, want %d (opening order)", ch.Index, opened)
			}
			if ch.Block == nil {
				t.Errorf("block-start without block")
			}
			opened++
		case llm.ChunkTextDelta, llm.ChunkReasoningDelta, llm.ChunkToolCallDelta, llm.ChunkBlockEnd:
			if ch.Index >= opened {
				t.Errorf("%s for unopened index %d", ch.Type, ch.Index)
			}
		case llm.ChunkFinish:
			if ch.Finish == nil {
				t.Fatalf("finish chunk without finish")
			}
		}
		chunks = append(chunks, ch)
		if onChunk != nil {
			onChunk(len(chunks))
		}
	}
	if len(chunks) == 0 || chunks[len(chunks)-1].Type != llm.ChunkFinish {
		t.Fatalf("stream did not end with a finish: %d chunks", len(chunks))
	}
	return chunks
}

func assemble(chunks []llm.Chunk) *llm.Assembler {
	a := &llm.Assembler{}
	for _, c := range chunks {
		a.Push(c)
	}
	return a
}

func simpleRequest() *llm.Request {
	return &llm.Request{
		Model:    "claude-test",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "hi"}}}},
	}
}
