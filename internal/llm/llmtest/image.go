package llmtest

import "github.com/reinsdev/reins/internal/llm"

// ImageRequest is a request whose last message is the result of call c1
// (read) carrying a small PNG: what a wire's image encoding is tested on.
// images is Request.Images.
func ImageRequest(images bool) *llm.Request {
	return &llm.Request{Model: "m", Images: images, Messages: []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "look"}}},
		{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolCall, ID: "c1", Name: "read", Arguments: `{"path":"a.png"}`}}},
		{Role: llm.RoleTool, Content: []llm.Block{{Type: llm.BlockToolResult, CallID: "c1", Content: "a.png: image/png image", Image: &llm.Image{MediaType: "image/png", Data: ImagePNG}}}},
	}}
}

// ImagePNG is ImageRequest's image bytes; its base64 is ImagePNGBase64.
var ImagePNG = []byte("\x89PNG\r\n\x1a\nfake")

// ImagePNGBase64 is base64 of ImagePNG.
const ImagePNGBase64 = "iVBORw0KGgpmYWtl"
