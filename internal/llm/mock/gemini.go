package mock

import (
	"encoding/json"
	"net/http"
	"strings"
)

// geminiModel is the model a Gemini request path names
// (…/models/MODEL:streamGenerateContent), or "" for another path.
func geminiModel(path string) string {
	i := strings.LastIndex(path, "/models/")
	if i < 0 {
		return ""
	}
	model, method, ok := strings.Cut(path[i+len("/models/"):], ":")
	if !ok || model == "" || method != "streamGenerateContent" {
		return ""
	}
	return model
}

// parseGemini reads a generateContent request: systemInstruction is the
// system prompt; the trailing run of user contents (text parts and
// functionResponse parts, after the model's last content) is what a reply
// can match. The model comes from the path (ServeHTTP). Gemini always
// reports usage.
func parseGemini(body []byte) (prompt, error) {
	type part struct {
		Text             *string `json:"text"`
		Thought          bool    `json:"thought"`
		FunctionResponse *struct {
			Name     string          `json:"name"`
			Response json.RawMessage `json:"response"`
		} `json:"functionResponse"`
	}
	type content struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	}
	var req struct {
		SystemInstruction *content  `json:"systemInstruction"`
		Contents          []content `json:"contents"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return prompt{}, err
	}
	text := func(c content) string {
		var out []string
		for _, p := range c.Parts {
			switch {
			case p.Text != nil && !p.Thought:
				out = append(out, *p.Text)
			case p.FunctionResponse != nil:
				var r struct {
					Output *string `json:"output"`
					Error  *string `json:"error"`
				}
				switch {
				case json.Unmarshal(p.FunctionResponse.Response, &r) == nil && r.Output != nil:
					out = append(out, *r.Output)
				case r.Error != nil:
					out = append(out, *r.Error)
				default:
					out = append(out, string(p.FunctionResponse.Response))
				}
			}
		}
		return strings.Join(out, "\n")
	}
	p := prompt{size: len(body), includeUsage: true}
	if req.SystemInstruction != nil {
		p.system = text(*req.SystemInstruction)
	}
	start := len(req.Contents)
	for start > 0 && req.Contents[start-1].Role != "model" {
		start--
	}
	for _, c := range req.Contents[start:] {
		p.last = append(p.last, text(c))
	}
	return p, nil
}

// geminiFinish maps a scripted finish (any wire's spelling) to a Gemini
// finishReason; "" sends none.
func geminiFinish(f string) string {
	switch f {
	case "none":
		return ""
	case "", "stop", "end_turn", "stop_sequence", "tool_calls", "tool_use", "completed":
		return "STOP"
	case "length", "max_tokens", "max_output_tokens":
		return "MAX_TOKENS"
	case "content_filter", "refusal":
		return "SAFETY"
	}
	return f
}

// gemini renders the reply as streamGenerateContent?alt=sse events: one
// GenerateContentResponse per piece (thought parts, then text parts, then
// one functionCall part per call, each whole), the last carrying
// finishReason and usageMetadata. Faults cut the sequence short, corrupt
// it, or end it with an in-stream error object.
func (rd *rendering) gemini(e *emitter) {
	send := func(parts []map[string]any, finish string, usage bool) bool {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		if finish != "" {
			cand["finishReason"] = finish
		}
		ev := map[string]any{"candidates": []any{cand}, "modelVersion": rd.model, "responseId": "mock-" + itoa(rd.seq)}
		if usage {
			ev["usageMetadata"] = map[string]any{
				"promptTokenCount":        rd.usage.Input,
				"candidatesTokenCount":    rd.usage.Output - rd.usage.Reasoning,
				"thoughtsTokenCount":      rd.usage.Reasoning,
				"cachedContentTokenCount": rd.usage.CacheRead,
				"totalTokenCount":         rd.usage.Input + rd.usage.Output,
			}
		}
		return e.sendJSON("", ev)
	}
	for _, p := range pieces(rd.reasoning(), rd.r.Chunk) {
		if !send([]map[string]any{{"text": p, "thought": true}}, "", false) {
			return
		}
	}
	for _, p := range pieces(rd.text, rd.r.Chunk) {
		if !send([]map[string]any{{"text": p}}, "", false) {
			return
		}
	}
	for _, c := range rd.calls {
		var args any = map[string]any{}
		if json.Valid([]byte(c.args)) {
			args = json.RawMessage(c.args)
		}
		fc := map[string]any{"name": c.name, "args": args}
		if c.id != "" {
			fc["id"] = c.id
		}
		if !send([]map[string]any{{"functionCall": fc}}, "", false) {
			return
		}
	}
	switch rd.r.Fault {
	case FaultCut:
		return
	case FaultOverloaded:
		e.sendJSON("", map[string]any{"error": map[string]any{"code": 503,
			"message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}})
		return
	case FaultMalformed:
		if !e.send("", []byte("{not json")) {
			return
		}
	}
	f := geminiFinish(rd.r.Finish)
	if rd.r.Fault == FaultEmpty {
		send([]map[string]any{}, f, true)
		return
	}
	send([]map[string]any{{"text": ""}}, f, true)
}

// geminiStatus is the google.rpc status name Gemini sends with an HTTP
// status.
func geminiStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	if status >= 500 {
		return "INTERNAL"
	}
	return "FAILED_PRECONDITION"
}

const geminiContextWindow = `{"error":{"code":400,"message":"The input token count (1250000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
