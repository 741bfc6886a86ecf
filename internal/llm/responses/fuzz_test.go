package responses

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
		"data: [DONE]\n\n",
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n",
		"data: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"bare\"}\n\ndata: {\"type\":\"response.completed\",\"response\":{}}\n\n",
		"data: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"reasoning\",\"encrypted_content\":\"e\"}}\n\ndata: {\"type\":\"response.completed\",\"response\":{}}\n\n",
		"data: {\"type\":\"error\",\"code\":\"context_length_exceeded\",\"message\":\"x\"}\n\n",
		"data: {\"type\":\"response.failed\",\"response\":{\"error\":{\"code\":\"rate_limit_exceeded\"}}}\n\n",
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
