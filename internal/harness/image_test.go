package harness

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/session"
)

// TestReadImageReachesWire: the model reads a PNG file; on the Anthropic
// wire the next request carries it as an image block inside the
// tool_result (base64 of the file's exact bytes); on the OpenAI wires,
// which take no images in tool results, the result says in text that the
// image was not shown, and no image bytes are sent.
func TestReadImageReachesWire(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	pic := buf.Bytes()
	b64 := base64.StdEncoding.EncodeToString(pic)
	script := `replies:
  - match: LOOK
    toolCalls: [{id: c1, name: read, arguments: {path: pic.png}}]
  - match: "image/png image"
    text: a red dot
`
	for _, model := range []string{"anthropic/claude-sonnet-4-5", "openai/gpt-5", "openai/qwen2.5-coder", "gemini/gemini-2.5-flash"} {
		t.Run(model, func(t *testing.T) {
			f := newFixture(t, script, map[string]string{"pic.png": string(pic)})
			m, err := f.h.ResolveModel(model, f.url)
			if err != nil {
				t.Fatal(err)
			}
			s, err := f.h.NewSession(SessionOptions{Model: m})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if res := s.Run(context.Background(), "LOOK"); res.Reason != session.ReasonCompleted {
				t.Fatalf("turn %+v", res)
			}
			reqs := f.srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			body := reqs[1].Body
			t.Logf("%s: wire %s, second request %d bytes", model, reqs[1].Wire, len(body))
			if !strings.HasPrefix(model, "anthropic/") {
				if bytes.Contains(body, []byte(b64)) {
					t.Error("image bytes sent on a wire that takes no images in tool results")
				}
				if !bytes.Contains(body, []byte("image of "+itoa(len(pic))+" bytes not shown")) {
					t.Errorf("no note that the image was not shown in %s", body)
				}
				return
			}
			var req struct {
				Messages []struct {
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(body, &req); err != nil {
				t.Fatal(err)
			}
			last := req.Messages[len(req.Messages)-1].Content
			var blocks []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				Content   []struct {
					Type   string `json:"type"`
					Text   string `json:"text"`
					Source struct {
						Type      string `json:"type"`
						MediaType string `json:"media_type"`
						Data      string `json:"data"`
					} `json:"source"`
				} `json:"content"`
			}
			if err := json.Unmarshal(last, &blocks); err != nil {
				t.Fatalf("last message content %s: %v", last, err)
			}
			if len(blocks) != 1 || blocks[0].Type != "tool_result" || blocks[0].ToolUseID != "c1" || len(blocks[0].Content) != 2 {
				t.Fatalf("last message %s, want one tool_result with a text and an image block", last)
			}
			txt, im := blocks[0].Content[0], blocks[0].Content[1]
			if txt.Type != "text" || !strings.Contains(txt.Text, "image/png image") {
				t.Errorf("text part %+v", txt)
			}
			if im.Type != "image" || im.Source.Type != "base64" || im.Source.MediaType != "image/png" || im.Source.Data != b64 {
				t.Errorf("image part %+v, want base64 image/png of the file", im)
			}
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
