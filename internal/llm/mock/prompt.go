package mock

import (
	"encoding/json"
	"strings"
)

// prompt is the little the engine reads from a request: enough to match
// replies, echo the prompt, name the model and honour include_usage.
type prompt struct {
	model        string
	system       string
	last         []string // the trailing user/tool messages' texts, oldest first
	includeUsage bool
	size         int // request body bytes, for the default usage estimate
	// breakpoints are the prefixes of an Anthropic request's cache_control
	// marks, for the simulated prompt cache (cache.go).
	breakpoints []prefix
}

// matches reports whether m occurs in the system prompt or one of the last
// user/tool messages; an empty m matches every request.
func (p prompt) matches(m string) bool {
	if m == "" || strings.Contains(p.system, m) {
		return true
	}
	for _, t := range p.last {
		if strings.Contains(t, m) {
			return true
		}
	}
	return false
}

// lastText is the text of the very last user or tool message.
func (p prompt) lastText() string {
	if len(p.last) == 0 {
		return ""
	}
	return p.last[len(p.last)-1]
}

// ChildRef in a scripted tool call's arguments is replaced by the child id
// that the last "child: <id>" line of the trailing user/tool messages
// names: a scripted parent continues the child a subagent result named,
// whose id it cannot know in advance.
const ChildRef = "$CHILD"

// child is the id of the last "child: <id>" line in the trailing messages.
func (p prompt) child() string {
	for i := len(p.last) - 1; i >= 0; i-- {
		if j := strings.LastIndex(p.last[i], "\nchild: "); j >= 0 {
			id, _, _ := strings.Cut(p.last[i][j+len("\nchild: "):], "\n")
			return strings.TrimSpace(id)
		}
	}
	return ""
}

func parsePrompt(wire string, body []byte) (prompt, error) {
	switch wire {
	case WireAnthropic:
		return parseAnthropic(body)
	case WireResponses:
		return parseResponses(body)
	case WireGemini:
		return parseGemini(body)
	}
	return parseOpenAI(body)
}

// parseOpenAI reads a chat-completions request. The trailing run of user
// and tool messages (after the last assistant turn) is what a reply can
// match, so a reply can key on any of several parallel tool results.
func parseOpenAI(body []byte) (prompt, error) {
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return prompt{}, err
	}
	p := prompt{model: req.Model, size: len(body)}
	p.includeUsage = req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	var sys []string
	for _, m := range req.Messages {
		if m.Role == "system" || m.Role == "developer" {
			sys = append(sys, contentText(m.Content))
		}
	}
	p.system = strings.Join(sys, "\n")
	start := len(req.Messages)
	for start > 0 {
		if r := req.Messages[start-1].Role; r != "user" && r != "tool" {
			break
		}
		start--
	}
	for _, m := range req.Messages[start:] {
		p.last = append(p.last, contentText(m.Content))
	}
	return p, nil
}

// parseAnthropic reads a Messages request: top-level system (string or
// blocks) and the last user message, whose blocks may be text or
// tool_result.
func parseAnthropic(body []byte) (prompt, error) {
	var req struct {
		Model    string          `json:"model"`
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return prompt{}, err
	}
	// The Messages API always reports usage; include_usage is OpenAI's.
	p := prompt{model: req.Model, size: len(body), system: contentText(req.System), breakpoints: breakpoints(body)}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			p.last = []string{contentText(req.Messages[i].Content)}
			break
		}
		if req.Messages[i].Role == "assistant" {
			break
		}
	}
	return p, nil
}

// contentText flattens a content value of either wire: a string, or an
// array of parts whose "text" fields are taken and whose nested "content"
// (an Anthropic tool_result) is flattened the same way.
func contentText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text    *string         `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var out []string
	for _, pt := range parts {
		if pt.Text != nil {
			out = append(out, *pt.Text)
		}
		if len(pt.Content) > 0 {
			out = append(out, contentText(pt.Content))
		}
	}
	return strings.Join(out, "\n")
}
