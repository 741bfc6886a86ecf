package gemini

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
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\",\"thoughtSignature\":\"sig\"}]},\"finishReason\":\"STOP\"}]}\r\n\r\n",
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"f\",\"args\":null}}]},\"finishReason\":\"STOP\"}]}\n\n",
		"data: {\"promptFeedback\":{\"blockReason\":\"SAFETY\"}}\n\n",
		"data: {\"error\":{\"code\":429,\"message\":\"quota\",\"status\":\"RESOURCE_EXHAUSTED\"}}\n\n",
		"<html>502 Bad Gateway</html>",
	} {
		seeds = append(seeds, []byte(s))
	}
	llmtest.FuzzStream(f, wire, fixedMessage, seeds...)
}
