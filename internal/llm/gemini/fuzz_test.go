package gemini

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinsdev/reins/internal/llm/llmtest"
)

// FuzzStream serves arbitrary bytes as the SSE body of a 200 answer, once
// whole and once in small reads: no panic, the chunk protocol holds
// (llmtest.CheckStream), and the split does not change the chunks.
func FuzzStream(f *testing.F) {
	for _, b := range mockCaptures(f) {
		f.Add(b, uint8(0))
		f.Add(b, uint8(2))
	}
	for _, s := range []string{
		"",
		": keep-alive\n\n",
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\",\"thoughtSignature\":\"sig\"}]},\"finishReason\":\"STOP\"}]}\r\n\r\n",
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"f\",\"args\":null}}]},\"finishReason\":\"STOP\"}]}\n\n",
		"data: {\"promptFeedback\":{\"blockReason\":\"SAFETY\"}}\n\n",
		"data: {\"error\":{\"code\":429,\"message\":\"quota\",\"status\":\"RESOURCE_EXHAUSTED\"}}\n\n",
		"<html>502 Bad Gateway</html>",
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, body []byte, split uint8) {
		whole := collect(t, body, 0)
		llmtest.CheckStream(t, whole, fixedMessage)
		step := 1 + int(split%8)
		if chopped := collect(t, body, step); !cmp.Equal(whole, chopped) {
			t.Fatalf("reads of %d bytes change the stream (-whole +chopped):\n%s", step, cmp.Diff(whole, chopped))
		}
		_ = assemble(whole).Blocks()
	})
}
