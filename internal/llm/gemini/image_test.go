package gemini

import (
	"encoding/json"
	"testing"

	"github.com/reinsdev/reins/internal/llm/llmtest"
)

// TestImageResult: a tool result's image goes as an inlineData part after
// the functionResponse, in the same user turn; to a model without image
// input the response says so in text and no image bytes are sent.
func TestImageResult(t *testing.T) {
	for _, tc := range []struct {
		images bool
		want   string
	}{
		{true, `{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"read","response":{"output":"a.png: image/png image"}}},{"inlineData":{"mimeType":"image/png","data":"` + llmtest.ImagePNGBase64 + `"}}]}`},
		{false, `{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"read","response":{"output":"a.png: image/png image\n[image/png image of 12 bytes not shown: this model takes no image input]"}}}]}`},
	} {
		body, err := encodeRequest(llmtest.ImageRequest(tc.images), 0)
		if err != nil {
			t.Fatal(err)
		}
		var req struct {
			Contents []json.RawMessage `json:"contents"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
		if got := string(req.Contents[len(req.Contents)-1]); got != tc.want {
			t.Errorf("images %v: last content\n%s\nwant\n%s", tc.images, got, tc.want)
		}
	}
}
