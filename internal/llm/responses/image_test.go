package responses

import (
	"encoding/json"
	"testing"

	"github.com/reinsdev/reins/internal/llm/llmtest"
)

// TestImageResult: a tool result's image goes in the function_call_output
// as the list output the Responses API takes (input_text, then
// input_image with a data URL); to a model without image input the output
// stays text, with a note and no image bytes.
func TestImageResult(t *testing.T) {
	for _, tc := range []struct {
		images bool
		want   string
	}{
		{true, `{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"a.png: image/png image"},{"type":"input_image","image_url":"data:image/png;base64,` + llmtest.ImagePNGBase64 + `","detail":"auto"}]}`},
		{false, `{"type":"function_call_output","call_id":"c1","output":"a.png: image/png image\n[image/png image of 12 bytes not shown: this model takes no image input]"}`},
	} {
		body, err := encodeRequest(llmtest.ImageRequest(tc.images), "")
		if err != nil {
			t.Fatal(err)
		}
		var req struct {
			Input []json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
		if got := string(req.Input[len(req.Input)-1]); got != tc.want {
			t.Errorf("images %v: last item\n%s\nwant\n%s", tc.images, got, tc.want)
		}
	}
}
