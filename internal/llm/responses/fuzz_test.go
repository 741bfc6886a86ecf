package responses

import (
	"testing"

	"github.com/reinsdev/reins/internal/llm/llmtest"
)

// FuzzStream serves arbitrary bytes as the SSE body of a 200 answer, once
// whole and once in small reads: no panic, the chunk protocol holds
// (llmtest.CheckStream), and the split does not change the chunks.
func FuzzStream(f *testing.F) {
	seeds := mockCaptures(f)
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
		seeds = append(seeds, []byte(s))
	}
	llmtest.FuzzStream(f, wire, fixedMessage, seeds...)
}
