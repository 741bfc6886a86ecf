package openai

import (
	"encoding/json"
	"testing"

	sdk "github.com/openai/openai-go/v3"

	"github.com/reinsdev/reins/internal/llm/llmtest"
)

// TestImageResult: chat completions' tool messages take only text, so a
// tool result's image follows its tool message in a user message naming
// the call, as an image_url data URL; to a model without image input the
// tool message says so in text and nothing follows it.
func TestImageResult(t *testing.T) {
	const note = `{"role":"tool","content":"a.png: image/png image\n[image/png image of 12 bytes not shown: this model takes no image input]","tool_call_id":"c1"}`
	for _, tc := range []struct {
		images bool
		want   []string
	}{
		{true, []string{
			`{"role":"tool","content":"a.png: image/png image","tool_call_id":"c1"}`,
			`{"role":"user","content":[{"type":"text","text":"The image of tool call c1:"},{"type":"image_url","image_url":{"url":"data:image/png;base64,` + llmtest.ImagePNGBase64 + `"}}]}`,
		}},
		{false, []string{note}},
	} {
		enc, err := encodeRequest(llmtest.ImageRequest(tc.images), false, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var req struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(enc.body, &req); err != nil {
			t.Fatal(err)
		}
		// user, assistant, then the tool result's messages
		got := req.Messages[2:]
		if len(got) != len(tc.want) {
			t.Fatalf("images %v: %d messages after the call, want %d: %s", tc.images, len(got), len(tc.want), enc.body)
		}
		for i := range got {
			if string(got[i]) != tc.want[i] {
				t.Errorf("images %v: message %d\n%s\nwant\n%s", tc.images, i+2, got[i], tc.want[i])
			}
		}
	}
}

// TestImageResultSDK: OpenAI's own Go SDK reads the messages as a tool
// message in text, then a user message of a text part and an image_url
// part carrying the data URL.
func TestImageResultSDK(t *testing.T) {
	enc, err := encodeRequest(llmtest.ImageRequest(true), false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var p sdk.ChatCompletionNewParams
	if err := json.Unmarshal(enc.body, &p); err != nil {
		t.Fatal(err)
	}
	ms := p.Messages
	tm, um := ms[len(ms)-2].OfTool, ms[len(ms)-1].OfUser
	if tm == nil || tm.ToolCallID != "c1" || !tm.Content.OfString.Valid() {
		t.Fatalf("message %+v, want the tool message of c1 in text", ms[len(ms)-2])
	}
	if um == nil || len(um.Content.OfArrayOfContentParts) != 2 {
		t.Fatalf("message %+v, want a user message of two parts", ms[len(ms)-1])
	}
	img := um.Content.OfArrayOfContentParts[1].OfImageURL
	if img == nil || img.ImageURL.URL != "data:image/png;base64,"+llmtest.ImagePNGBase64 {
		t.Errorf("second part %+v, want image_url with the data URL", um.Content.OfArrayOfContentParts[1])
	}
}
