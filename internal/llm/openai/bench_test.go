package openai

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/enccache"
	"github.com/reinsdev/reins/internal/llm/sse"
)

// recordedStream is a long DeepSeek-shaped response: reasoning, text and a
// tool call whose arguments arrive in many small deltas, as real servers
// send them.
func recordedStream() []byte {
	var p []string
	p = append(p, delta(`"role":"assistant","content":null,"reasoning_content":""`))
	for i := range 2000 {
		p = append(p, delta(fmt.Sprintf(`"content":null,"reasoning_content":"step %d, then "`, i)))
	}
	for i := range 6000 {
		p = append(p, text(fmt.Sprintf("word%d ", i)))
	}
	p = append(p, delta(`"tool_calls":[{"index":0,"id":"call_0","type":"function","function":{"name":"write","arguments":""}}]`))
	for range 2000 {
		p = append(p, delta(`"tool_calls":[{"index":0,"function":{"arguments":"\"lorem ipsum\","}}]`))
	}
	p = append(p, finishWith("tool_calls"),
		`{"choices":[],"usage":{"prompt_tokens":9000,"completion_tokens":10000,"prompt_cache_hit_tokens":8000}}`, done)
	return []byte(events(p...) + ": trailing comment\n\n")
}

// replay answers every request with the same bytes, without a network, so
// the benchmark measures decoding.
type replay []byte

func (r replay) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(r)),
		Request:    req,
	}, nil
}

func BenchmarkStream(b *testing.B) {
	stream := recordedStream()
	c := &Client{BaseURL: "http://replay.invalid", HTTP: &http.Client{Transport: replay(stream)}}
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		var fin *llm.Finish
		n := 0
		for ch := range c.Stream(context.Background(), simpleRequest) {
			n++
			fin = ch.Finish
		}
		if fin == nil || fin.Kind != llm.FinishToolCalls || n < 10000 {
			b.Fatalf("finish %+v after %d chunks", fin, n)
		}
	}
}

// TestRecordedStream keeps the benchmark's input honest: it decodes to the
// blocks it was built from.
func TestRecordedStream(t *testing.T) {
	c := &Client{BaseURL: "http://replay.invalid", HTTP: &http.Client{Transport: replay(recordedStream())}}
	r := collect(t, context.Background(), c, simpleRequest)
	b := r.asm.Blocks()
	if r.fin.Kind != llm.FinishToolCalls || len(b) != 3 {
		t.Fatalf("finish %+v, %d blocks", r.fin, len(b))
	}
	if !strings.HasPrefix(b[0].Text, "step 0, then step 1") || !strings.HasSuffix(b[1].Text, "word5999 ") ||
		b[2].Name != "write" || strings.Count(b[2].Arguments, "lorem") != 2000 {
		t.Errorf("blocks decoded wrongly: %.80q / %.80q / %s", b[0].Text, b[1].Text, b[2].Name)
	}
	if u := r.asm.Usage(); u.CacheReadTokens != 8000 {
		t.Errorf("usage = %+v", u)
	}
}

// framed splits a recorded body into its SSE events with the adapter's
// framer, so BenchmarkTranslate measures the JSON translation alone.
func framed(tb testing.TB, body []byte) (kinds []string, payloads [][]byte) {
	tb.Helper()
	r := sse.NewReader(bytes.NewReader(body), maxEventSize)
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return kinds, payloads
		}
		if err != nil {
			tb.Fatal(err)
		}
		kinds = append(kinds, ev.Type)
		payloads = append(payloads, bytes.Clone(ev.Data))
	}
}

// BenchmarkTranslate measures the wire-JSON → llm.Chunk translation of
// the recorded stream without HTTP or SSE framing: MB/s of payload bytes
// and heap allocations per emitted chunk.
func BenchmarkTranslate(b *testing.B) {
	kinds, payloads := framed(b, recordedStream())
	var size int64
	for _, p := range payloads {
		size += int64(len(p))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	var chunks int
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for b.Loop() {
		n := 0
		d := &decoder{yield: func(llm.Chunk) bool { n++; return true }, logf: func(string, ...any) {}, cur: -1}
		for i, p := range payloads {
			if bytes.Equal(p, doneMarker) {
				d.done()
				break
			}
			if !d.payload(kinds[i], p) {
				b.Fatal("stream ended early")
			}
		}
		chunks += n
	}
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(chunks), "allocs/chunk")
}

// BenchmarkEncodeLongHistory is a step's request late in a tool loop:
// from 1,000 steps on (2,001 messages, about 0.8 MB), each op adds a call
// and its result and encodes the request. fresh encodes every message, as
// every step did before issue 18; cached is a step now: each message
// encoded once, and the previous body, sent whole, extended in place.
func BenchmarkEncodeLongHistory(b *testing.B) {
	turn := func(h []llm.Message, i int) []llm.Message {
		id := fmt.Sprintf("call_%d", i)
		return append(h,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolCall, ID: id, Name: "read", Arguments: `{"path":"loop.txt"}`}}},
			llm.Message{Role: llm.RoleTool, Content: []llm.Block{{Type: llm.BlockToolResult, CallID: id, Content: strings.Repeat("lorem ipsum ", 64)}}})
	}
	for _, bc := range []struct {
		name   string
		cached bool
	}{{"fresh", false}, {"cached", true}} {
		b.Run(bc.name, func(b *testing.B) {
			h := []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "go"}}}}
			for i := range 1000 {
				h = turn(h, i)
			}
			var cache enccache.Cache[[]byte]
			var keep kept
			c, k := &cache, &keep
			if !bc.cached {
				c, k = nil, nil
			}
			b.ReportAllocs()
			i := 1000
			for b.Loop() {
				h = turn(h, i)
				i++
				enc, err := encodeRequest(&llm.Request{Model: "m", System: strings.Repeat("s", 2000), Messages: h}, false, c, k)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(enc.body)))
				if k != nil {
					k.put(enc) // sent whole
				}
			}
		})
	}
}
