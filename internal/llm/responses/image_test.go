package responses

import (
	"encoding/json"
	"testing"

	oresponses "github.com/openai/openai-go/v3/responses"

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
		body, err := encodeRequest(llmtest.ImageRequest(tc.images), "", nil)
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

// TestImageResultSDK: OpenAI's own Go SDK reads the request as a
// function_call_output whose output is the item list, an input_text and an
// input_image carrying the data URL.
func TestImageResultSDK(t *testing.T) {
	body, err := encodeRequest(llmtest.ImageRequest(true), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var p oresponses.ResponseNewParams
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatal(err)
	}
	items := p.Input.OfInputItemList
	out := items[len(items)-1].OfFunctionCallOutput
	if out == nil || out.CallID.Value != "c1" {
		t.Fatalf("last item %+v, want the function_call_output of c1", items[len(items)-1])
	}
	list := out.Output.OfResponseFunctionCallOutputItemArray
	if len(list) != 2 || list[0].OfInputText == nil || list[1].OfInputImage == nil {
		t.Fatalf("output %+v, want input_text then input_image", out.Output)
	}
	if got := list[1].OfInputImage.ImageURL.Value; got != "data:image/png;base64,"+llmtest.ImagePNGBase64 {
		t.Errorf("image_url %q", got)
	}
}
