package anthropic

import (
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/sse"
)

// benchBody is a reply of thinking, text and a tool call in many small
// deltas, as Anthropic sends them.
func benchBody() string {
	var sb strings.Builder
	sb.WriteString(msgStart(1000, 0))
	sb.WriteString(startThinking(0))
	for range 500 {
		sb.WriteString(thinkingDelta(0, "considering the next step carefully "))
	}
	sb.WriteString(signatureDelta(0, strings.Repeat("S", 400)))
	sb.WriteString(blockStop(0))
	sb.WriteString(startText(1))
	for range 2000 {
		sb.WriteString(textDelta(1, "Some streamed text, with \"quotes\" and ünïcode. "))
	}
	sb.WriteString(blockStop(1))
	sb.WriteString(startToolUse(2, "toolu_1", "write"))
	for range 500 {
		sb.WriteString(jsonDelta(2, `{"content": "line of file content\n", `))
	}
	sb.WriteString(blockStop(2))
	sb.WriteString(msgDelta("tool_use", 5000))
	sb.WriteString(msgStop())
	return sb.String()
}

// BenchmarkStream measures adapter throughput over real HTTP: a reply of
// thinking, text and a tool call in many small deltas, as Anthropic sends
// them. b.SetBytes reports MB/s of SSE wire bytes.
func BenchmarkStream(b *testing.B) {
	body := benchBody()

	c, _ := newServer(b, sseBody(body))
	req := simpleRequest()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var last llm.Chunk
		n := 0
		for ch := range c.Stream(b.Context(), req) {
			last = ch
			n++
		}
		if last.Finish == nil || last.Finish.Kind != llm.FinishToolCalls || n < 3000 {
			b.Fatalf("unexpected end after %d chunks: %+v", n, last.Finish)
		}
	}
}

// BenchmarkTranslate measures the event-JSON → llm.Chunk translation of
// the same reply without HTTP or SSE framing: MB/s of payload bytes and
// heap allocations per emitted chunk.
func BenchmarkTranslate(b *testing.B) {
	r := sse.NewReader(strings.NewReader(benchBody()), maxEventSize)
	var names []string
	var payloads [][]byte
	var size int64
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		names = append(names, ev.Type)
		payloads = append(payloads, bytes.Clone(ev.Data))
		size += int64(len(ev.Data))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	var chunks int
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for b.Loop() {
		t := newTranslator(nil)
		var fin *llm.Chunk
		for i, p := range payloads {
			fin = t.feed(names[i], p)
			chunks += len(t.out)
			t.out = t.out[:0]
		}
		if fin == nil || fin.Finish.Kind != llm.FinishToolCalls {
			b.Fatalf("finish = %+v", fin)
		}
		chunks++
	}
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(chunks), "allocs/chunk")
}
