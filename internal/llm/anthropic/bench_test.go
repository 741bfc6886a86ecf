package anthropic

import (
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm"
)

// BenchmarkStream measures adapter throughput over real HTTP: a reply of
// thinking, text and a tool call in many small deltas, as Anthropic sends
// them. b.SetBytes reports MB/s of SSE wire bytes.
func BenchmarkStream(b *testing.B) {
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
	body := sb.String()

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
