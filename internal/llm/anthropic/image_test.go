package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/reinsdev/reins/internal/llm/llmtest"
)

// TestImageResult: a tool result's image is an image block (base64
// source) inside the tool_result after its text; to a model without image
// input the tool_result is text with a note and no image bytes.
func TestImageResult(t *testing.T) {
	for _, tc := range []struct {
		images bool
		want   string
	}{
		{true, `{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"a.png: image/png image"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + llmtest.ImagePNGBase64 + `"}}],"is_error":false,"cache_control":{"type":"ephemeral"}}`},
		{false, `{"type":"tool_result","tool_use_id":"c1","content":"a.png: image/png image\n[image/png image of 12 bytes not shown: this model takes no image input]","is_error":false,"cache_control":{"type":"ephemeral"}}`},
	} {
		body, err := encodeRequest(llmtest.ImageRequest(tc.images), nil)
		if err != nil {
			t.Fatal(err)
		}
		var req struct {
			Messages []struct {
				Content []json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
		last := req.Messages[len(req.Messages)-1].Content
		if got := string(last[len(last)-1]); got != tc.want {
			t.Errorf("images %v: last block\n%s\nwant\n%s", tc.images, got, tc.want)
		}
	}
}
