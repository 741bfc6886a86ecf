package gemini

import (
	"bytes"
	"encoding/json"

	"github.com/reinsdev/reins/internal/jsonw"
	"github.com/reinsdev/reins/internal/llm"
)

// Request wire structs: only the fields reins sends.

type request struct {
	SystemInstruction *content         `json:"systemInstruction,omitempty"`
	Contents          []content        `json:"contents"`
	Tools             []toolSet        `json:"tools,omitempty"`
	GenerationConfig  generationConfig `json:"generationConfig"`
}

type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

type part struct {
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
	InlineData       *blob             `json:"inlineData,omitempty"`
}

// blob is inline media: a tool result's image, base64 in JSON.
type blob struct {
	MimeType string `json:"mimeType"`
	Data     []byte `json:"data"`
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type functionResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
}

type toolSet struct {
	FunctionDeclarations []functionDecl `json:"functionDeclarations"`
}

type functionDecl struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type generationConfig struct {
	MaxOutputTokens int            `json:"maxOutputTokens,omitempty"`
	ThinkingConfig  thinkingConfig `json:"thinkingConfig"`
}

type thinkingConfig struct {
	IncludeThoughts bool `json:"includeThoughts"`
	ThinkingBudget  int  `json:"thinkingBudget,omitempty"`
}

// encodeRequest renders req as a generateContent body. Assistant turns
// are role "model"; tool results are functionResponse parts of a user
// turn, named by the call they answer (Gemini keys a response by the
// function's name, and by the call's id when the model gave one).
// Reasoning text is not sent back (Gemini keeps no use for it); its
// thought signatures are, on the part they came with.
func encodeRequest(req *llm.Request, budget int) ([]byte, error) {
	r := request{GenerationConfig: generationConfig{
		MaxOutputTokens: req.MaxTokens,
		ThinkingConfig:  thinkingConfig{IncludeThoughts: true, ThinkingBudget: budget},
	}}
	if req.System != "" {
		r.SystemInstruction = &content{Parts: []part{{Text: req.System}}}
	}
	names := map[string]string{} // call id -> function name
	for _, m := range req.Messages {
		c := content{Role: "user"}
		if m.Role == llm.RoleAssistant {
			c.Role = "model"
		}
		// images are the inlineData parts of this message's tool results,
		// sent after its functionResponse parts: Gemini counts function
		// responses against the calls of the turn before, so they stay
		// together, and the images follow in the same user turn.
		var images []part
		for _, b := range m.Content {
			switch b.Type {
			case llm.BlockText:
				if b.Text != "" || b.Signature != "" {
					c.Parts = append(c.Parts, part{Text: b.Text, ThoughtSignature: b.Signature})
				}
			case llm.BlockReasoning:
				if m.Role == llm.RoleAssistant && b.Signature != "" {
					c.Parts = append(c.Parts, part{Text: b.Text, Thought: true, ThoughtSignature: b.Signature})
				}
			case llm.BlockToolCall:
				names[b.ID] = b.Name
				args := json.RawMessage(b.Arguments)
				if !isObject(args) {
					// Gemini wants an object; a model that produced
					// something else gets its text back under a key.
					raw, _ := json.Marshal(map[string]string{"arguments": b.Arguments})
					if len(bytes.TrimSpace(args)) == 0 {
						raw = []byte("{}")
					}
					args = raw
				}
				id := b.ID
				if isGenerated(id) {
					id = ""
				}
				c.Parts = append(c.Parts, part{FunctionCall: &functionCall{ID: id, Name: b.Name, Args: args}, ThoughtSignature: b.Signature})
			case llm.BlockToolResult:
				text, img := llm.ResultParts(req, b)
				resp := map[string]any{"output": text}
				if b.IsError {
					resp = map[string]any{"error": text}
				}
				if img != nil {
					images = append(images, part{InlineData: &blob{MimeType: img.MediaType, Data: img.Data}})
				}
				id := b.CallID
				if isGenerated(id) {
					id = ""
				}
				c.Parts = append(c.Parts, part{FunctionResponse: &functionResponse{ID: id, Name: names[b.CallID], Response: resp}})
			}
		}
		c.Parts = append(c.Parts, images...)
		if len(c.Parts) == 0 {
			continue
		}
		// Gemini wants user and model turns to alternate: a tool turn
		// followed by a user message is one user turn.
		if n := len(r.Contents); n > 0 && r.Contents[n-1].Role == c.Role {
			r.Contents[n-1].Parts = append(r.Contents[n-1].Parts, c.Parts...)
			continue
		}
		r.Contents = append(r.Contents, c)
	}
	if len(req.Tools) > 0 {
		ts := toolSet{}
		for _, t := range req.Tools {
			ts.FunctionDeclarations = append(ts.FunctionDeclarations, functionDecl{Name: t.Name, Description: t.Description, Parameters: t.Schema()})
		}
		r.Tools = []toolSet{ts}
	}
	return jsonw.MarshalNoHTML(r)
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}

// generatedPrefix marks the ids this adapter makes up for calls Gemini
// sent without one; they are never sent back.
const generatedPrefix = "gemini-call-"

func isGenerated(id string) bool {
	return len(id) > len(generatedPrefix) && id[:len(generatedPrefix)] == generatedPrefix
}
