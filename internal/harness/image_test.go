package harness

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// TestReadImageReachesWire: the model reads a PNG file and the next
// request carries the file's exact bytes (base64) in the shape each public
// API takes an image of a tool result in:
//   - Anthropic: an image block inside the tool_result;
//   - Responses: the function_call_output's output as a list, input_text
//     then input_image with a data URL;
//   - chat completions (whose tool messages take only text): the tool
//     message, then a user message with an image_url data URL;
//   - Gemini: an inlineData part after the functionResponse, same turn.
//
// A model the catalogue lists without image input (o3-mini), or does not
// know (qwen2.5-coder, deepseek-chat), gets a text note and no image bytes.
func TestReadImageReachesWire(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	pic := buf.Bytes()
	b64 := base64.StdEncoding.EncodeToString(pic)
	dataURL := "data:image/png;base64," + b64
	script := `replies:
  - match: LOOK
    toolCalls: [{id: c1, name: read, arguments: {path: pic.png}}]
  - match: "image/png image"
    text: a red dot
`
	const chatWire = "providers:\n  openai:\n    wire: chat\n"
	tests := []struct {
		name, model, config string
		wire                string // mock.Wire* the second request came on
		check               func(t *testing.T, body []byte)
	}{
		{name: "anthropic", model: "anthropic/claude-sonnet-4-5", wire: mock.WireAnthropic, check: func(t *testing.T, body []byte) {
			var req struct {
				Messages []struct {
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
			}
			decode(t, body, &req)
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
			decode(t, last, &blocks)
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
		}},
		{name: "responses", model: "openai/gpt-5", config: openaiResponses, wire: mock.WireResponses, check: func(t *testing.T, body []byte) {
			var req struct {
				Input []struct {
					Type   string          `json:"type"`
					CallID string          `json:"call_id"`
					Output json.RawMessage `json:"output"`
				} `json:"input"`
			}
			decode(t, body, &req)
			last := req.Input[len(req.Input)-1]
			if last.Type != "function_call_output" || last.CallID != "c1" {
				t.Fatalf("last input item %+v, want the function_call_output of c1", last)
			}
			var parts []struct {
				Type     string `json:"type"`
				Text     string `json:"text"`
				ImageURL string `json:"image_url"`
			}
			decode(t, last.Output, &parts)
			if len(parts) != 2 || parts[0].Type != "input_text" || !strings.Contains(parts[0].Text, "image/png image") {
				t.Fatalf("output %s, want input_text then input_image", last.Output)
			}
			if parts[1].Type != "input_image" || parts[1].ImageURL != dataURL {
				t.Errorf("image part %.120s..., want input_image with the file's data URL", last.Output)
			}
		}},
		{name: "chat", model: "openai/gpt-5", config: chatWire, wire: mock.WireOpenAI, check: func(t *testing.T, body []byte) {
			var req struct {
				Messages []struct {
					Role       string          `json:"role"`
					ToolCallID string          `json:"tool_call_id"`
					Content    json.RawMessage `json:"content"`
				} `json:"messages"`
			}
			decode(t, body, &req)
			n := len(req.Messages)
			tm, um := req.Messages[n-2], req.Messages[n-1]
			var text string
			decode(t, tm.Content, &text)
			if tm.Role != "tool" || tm.ToolCallID != "c1" || !strings.Contains(text, "image/png image") {
				t.Fatalf("message %d: %s %s %s, want the tool message of c1 in text", n-2, tm.Role, tm.ToolCallID, tm.Content)
			}
			var parts []struct {
				Type     string `json:"type"`
				Text     string `json:"text"`
				ImageURL struct {
					URL string `json:"url"`
				} `json:"image_url"`
			}
			decode(t, um.Content, &parts)
			if um.Role != "user" || len(parts) != 2 || parts[0].Type != "text" || !strings.Contains(parts[0].Text, "c1") {
				t.Fatalf("last message %s %.200s, want a user message naming c1 and an image_url", um.Role, um.Content)
			}
			if parts[1].Type != "image_url" || parts[1].ImageURL.URL != dataURL {
				t.Errorf("image part %+v, want image_url with the file's data URL", parts[1].Type)
			}
		}},
		{name: "gemini", model: "gemini/gemini-2.5-flash", wire: mock.WireGemini, check: func(t *testing.T, body []byte) {
			var req struct {
				Contents []struct {
					Role  string `json:"role"`
					Parts []struct {
						FunctionResponse *struct {
							Name     string            `json:"name"`
							Response map[string]string `json:"response"`
						} `json:"functionResponse"`
						InlineData *struct {
							MimeType string `json:"mimeType"`
							Data     string `json:"data"`
						} `json:"inlineData"`
					} `json:"parts"`
				} `json:"contents"`
			}
			decode(t, body, &req)
			last := req.Contents[len(req.Contents)-1]
			if last.Role != "user" || len(last.Parts) != 2 {
				t.Fatalf("last content %+v, want a user turn of two parts", last)
			}
			fr, im := last.Parts[0].FunctionResponse, last.Parts[1].InlineData
			if fr == nil || fr.Name != "read" || !strings.Contains(fr.Response["output"], "image/png image") {
				t.Errorf("first part %+v, want the functionResponse of read", last.Parts[0])
			}
			if im == nil || im.MimeType != "image/png" || im.Data != b64 {
				t.Errorf("second part %+v, want inlineData image/png of the file", im)
			}
		}},
		{name: "no image input in the catalogue", model: "openai/o3-mini", config: openaiResponses, wire: mock.WireResponses},
		{name: "unknown model, responses", model: "openai/qwen2.5-coder", config: openaiResponses, wire: mock.WireResponses},
		{name: "unknown model, chat", model: "deepseek/deepseek-chat", wire: mock.WireOpenAI},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := imageFixture(t, script, tc.config, pic)
			m, err := f.h.ResolveModel(tc.model, f.url)
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
			t.Logf("%s: wire %s, second request %d bytes", tc.model, reqs[1].Wire, len(body))
			if reqs[1].Wire != tc.wire {
				t.Fatalf("wire %s, want %s", reqs[1].Wire, tc.wire)
			}
			if tc.check != nil {
				tc.check(t, body)
				return
			}
			if bytes.Contains(body, []byte(b64)) {
				t.Error("image bytes sent to a model that takes no images")
			}
			if !bytes.Contains(body, []byte("image of "+itoa(len(pic))+" bytes not shown")) {
				t.Errorf("no note that the image was not shown in %s", body)
			}
		})
	}
}

// openaiResponses keeps openai on its own wire at the mock's URL (at a base
// URL other than OpenAI's it would speak chat: config.WireFor).
const openaiResponses = "providers: {openai: {wire: responses}}\n"

// imageFixture is newFixture with a config of the test's own (the wire of
// a provider) and pic.png in the workspace.
func imageFixture(t *testing.T, script, config string, pic []byte) *fixture {
	t.Helper()
	sc, err := mock.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	url, srv, stop := mock.StartTest(sc)
	t.Cleanup(stop)
	home, cwd := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(cwd, ".reins"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, ".reins", "config.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, "pic.png"), pic, 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.Trust(t, home, cwd)
	h, err := New(Options{Home: home, Cwd: cwd, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return &fixture{h: h, srv: srv, url: url}
}

func decode(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%.300s: %v", raw, err)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
