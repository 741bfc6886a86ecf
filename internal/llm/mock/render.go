package mock

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// rendering is one reply resolved for one request: echo applied, tool-call
// ids assigned, usage settled. The wire renderers only format it.
type rendering struct {
	r     *Reply
	seq   int
	model string
	text  string
	calls []call
	usage Usage
	// includeUsage: the OpenAI request asked for a usage chunk.
	includeUsage bool
}

type call struct {
	id   string // scripted ID, or "" for a generated one
	n    int64  // number for a generated id
	name string
	args string
	ns   string // Responses wire: the function_call's namespace
}

func (s *Server) newRendering(r *Reply, p prompt, seq int) *rendering {
	rd := &rendering{r: r, seq: seq, model: p.model, text: r.Text, includeUsage: p.includeUsage}
	if rd.model == "" {
		rd.model = "mock"
	}
	if r.Echo {
		rd.text += p.lastText()
	}
	for _, c := range r.ToolCalls {
		rc := call{id: c.ID, name: c.Name, args: strings.ReplaceAll(c.ArgumentsText(), ChildRef, p.child()), ns: c.Namespace}
		if rc.id == "" {
			rc.n = s.ids.Add(1)
		}
		rd.calls = append(rd.calls, rc)
	}
	if r.Fault == FaultEmpty {
		rd.text, rd.calls = "", nil
	}
	if r.Usage != nil {
		rd.usage = *r.Usage
	} else {
		rd.usage = rd.estimate(p.size)
		if len(p.breakpoints) > 0 {
			s.mu.Lock()
			rd.usage.Input, rd.usage.CacheRead, rd.usage.CacheWrite = s.cache.usage(p.breakpoints, rd.usage.Input)
			s.mu.Unlock()
		}
	}
	return rd
}

// reasoning is the reasoning text sent (none for the empty fault).
func (rd *rendering) reasoning() string {
	if rd.r.Fault == FaultEmpty {
		return ""
	}
	return rd.r.Reasoning
}

// estimate is the usage reported when the script gives none: about four
// bytes a token, so benchmarks see plausible, deterministic numbers.
func (rd *rendering) estimate(requestBytes int) Usage {
	tok := func(n int) int { return (n + 3) / 4 }
	out := len(rd.text) + len(rd.reasoning())
	for _, c := range rd.calls {
		out += len(c.name) + len(c.args)
	}
	return Usage{Input: max(1, tok(requestBytes)), Output: tok(out), Reasoning: tok(len(rd.reasoning()))}
}

// finish is the raw finish reason, "" for none.
func (rd *rendering) finish(toolCalls, stop string) string {
	switch rd.r.Finish {
	case "none":
		return ""
	case "":
		if len(rd.calls) > 0 {
			return toolCalls
		}
		return stop
	}
	return rd.r.Finish
}

// pieces splits s into parts of at most n bytes without splitting a UTF-8
// sequence; n <= 0 means whole. Empty s has no pieces.
func pieces(s string, n int) []string {
	if s == "" {
		return nil
	}
	if n <= 0 || len(s) <= n {
		return []string{s}
	}
	var out []string
	for len(s) > n {
		end := n
		for end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
		if end == 0 {
			_, end = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// argPieces splits tool-call arguments; with a chunk size set they always
// come in at least two pieces, so clients must assemble them.
func argPieces(s string, n int) []string {
	p := pieces(s, n)
	if n > 0 && len(p) == 1 && utf8.RuneCountInString(s) >= 2 {
		half := len(s) / 2
		for !utf8.RuneStart(s[half]) {
			half--
		}
		if half == 0 {
			_, half = utf8.DecodeRuneInString(s)
		}
		p = []string{s[:half], s[half:]}
	}
	return p
}

// OpenAI chat-completions chunk shapes.
type oaChunk struct {
	ID      string     `json:"id"`
	Object  string     `json:"object"`
	Created int64      `json:"created"`
	Model   string     `json:"model"`
	Choices []oaChoice `json:"choices"`
	Usage   *oaUsage   `json:"usage,omitempty"`
}

type oaChoice struct {
	Index        int     `json:"index"`
	Delta        oaDelta `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type oaDelta struct {
	Role             string       `json:"role,omitempty"`
	Content          *string      `json:"content,omitempty"`
	ReasoningContent *string      `json:"reasoning_content,omitempty"`
	ToolCalls        []oaToolCall `json:"tool_calls,omitempty"`
}

type oaToolCall struct {
	Index    int        `json:"index"`
	ID       string     `json:"id,omitempty"`
	Type     string     `json:"type,omitempty"`
	Function oaFunction `json:"function"`
}

type oaFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type oaUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	// DeepSeek's names for the cache split.
	PromptCacheHitTokens  int `json:"prompt_cache_hit_tokens"`
	PromptCacheMissTokens int `json:"prompt_cache_miss_tokens"`
}

// openAI renders the reply as chat.completion.chunk events: a role delta,
// reasoning_content and content deltas, tool-call deltas (id and name
// first, then argument pieces), the finish chunk, the usage chunk when
// asked for, and [DONE]. Faults cut the sequence short or corrupt it.
func (rd *rendering) openAI(e *emitter) {
	id := fmt.Sprintf("chatcmpl-mock-%d", rd.seq)
	created := time.Now().Unix()
	send := func(d oaDelta, finish *string) bool {
		return e.sendJSON("", oaChunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: rd.model,
			Choices: []oaChoice{{Delta: d, FinishReason: finish}}})
	}
	empty := ""
	if !send(oaDelta{Role: "assistant", Content: &empty}, nil) {
		return
	}
	for _, p := range pieces(rd.reasoning(), rd.r.Chunk) {
		if !send(oaDelta{ReasoningContent: &p}, nil) {
			return
		}
	}
	for _, p := range pieces(rd.text, rd.r.Chunk) {
		if !send(oaDelta{Content: &p}, nil) {
			return
		}
	}
	for i, c := range rd.calls {
		cid := c.id
		if cid == "" {
			cid = fmt.Sprintf("call_%d", c.n)
		}
		head := oaToolCall{Index: i, ID: cid, Type: "function", Function: oaFunction{Name: c.name}}
		if !send(oaDelta{ToolCalls: []oaToolCall{head}}, nil) {
			return
		}
		for _, p := range argPieces(c.args, rd.r.Chunk) {
			if !send(oaDelta{ToolCalls: []oaToolCall{{Index: i, Function: oaFunction{Arguments: p}}}}, nil) {
				return
			}
		}
	}
	switch rd.r.Fault {
	case FaultCut:
		return
	case FaultMalformed:
		if !e.send("", []byte("{not json")) {
			return
		}
	}
	if f := rd.finish("tool_calls", "stop"); f != "" {
		if !send(oaDelta{}, &f) {
			return
		}
	}
	if rd.includeUsage {
		u := &oaUsage{
			PromptTokens:          rd.usage.Input,
			CompletionTokens:      rd.usage.Output,
			TotalTokens:           rd.usage.Input + rd.usage.Output,
			PromptCacheHitTokens:  rd.usage.CacheRead,
			PromptCacheMissTokens: max(0, rd.usage.Input-rd.usage.CacheRead),
		}
		u.PromptTokensDetails.CachedTokens = rd.usage.CacheRead
		u.CompletionTokensDetails.ReasoningTokens = rd.usage.Reasoning
		if !e.sendJSON("", oaChunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: rd.model,
			Choices: []oaChoice{}, Usage: u}) {
			return
		}
	}
	e.send("", []byte("[DONE]"))
}

// anthropic renders the reply as Messages stream events: message_start, a
// ping, one content block per thinking / text / tool_use part, then
// message_delta and message_stop. Faults cut the sequence short, corrupt
// it or end it with an overloaded_error event.
func (rd *rendering) anthropic(e *emitter) {
	fault := rd.r.Fault
	start := map[string]any{
		"type": "message_start",
		"message": map[string]any{
			"id": fmt.Sprintf("msg_mock_%d", rd.seq), "type": "message", "role": "assistant",
			"model": rd.model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]any{
				"input_tokens":                rd.usage.Input,
				"cache_creation_input_tokens": rd.usage.CacheWrite,
				"cache_read_input_tokens":     rd.usage.CacheRead,
				"output_tokens":               min(1, rd.usage.Output),
			},
		},
	}
	if !e.sendJSON("message_start", start) {
		return
	}
	if fault != FaultEmpty && !e.sendJSON("ping", map[string]any{"type": "ping"}) {
		return
	}
	index := 0
	block := func(startBlock map[string]any, deltas []map[string]any) bool {
		if !e.sendJSON("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": startBlock}) {
			return false
		}
		for _, d := range deltas {
			if !e.sendJSON("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": d}) {
				return false
			}
		}
		ok := e.sendJSON("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
		return ok
	}
	if r := rd.reasoning(); r != "" {
		var ds []map[string]any
		for _, p := range pieces(r, rd.r.Chunk) {
			ds = append(ds, map[string]any{"type": "thinking_delta", "thinking": p})
		}
		ds = append(ds, map[string]any{"type": "signature_delta", "signature": fmt.Sprintf("mock-signature-%d", rd.seq)})
		if !block(map[string]any{"type": "thinking", "thinking": "", "signature": ""}, ds) {
			return
		}
	}
	if rd.text != "" {
		var ds []map[string]any
		for _, p := range pieces(rd.text, rd.r.Chunk) {
			ds = append(ds, map[string]any{"type": "text_delta", "text": p})
		}
		if !block(map[string]any{"type": "text", "text": ""}, ds) {
			return
		}
	}
	for _, c := range rd.calls {
		cid := c.id
		if cid == "" {
			cid = fmt.Sprintf("toolu_mock_%d", c.n)
		}
		ds := []map[string]any{{"type": "input_json_delta", "partial_json": ""}}
		for _, p := range argPieces(c.args, rd.r.Chunk) {
			ds = append(ds, map[string]any{"type": "input_json_delta", "partial_json": p})
		}
		if !block(map[string]any{"type": "tool_use", "id": cid, "name": c.name, "input": map[string]any{}}, ds) {
			return
		}
	}
	switch fault {
	case FaultCut:
		return
	case FaultOverloaded:
		e.sendJSON("error", map[string]any{"type": "error",
			"error": map[string]any{"type": "overloaded_error", "message": "Overloaded"}})
		return
	case FaultMalformed:
		if !e.send("content_block_delta", []byte("{not json")) {
			return
		}
	}
	var stop any
	if f := rd.finish("tool_use", "end_turn"); f != "" {
		stop = f
	}
	if !e.sendJSON("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": rd.usage.Output}}) {
		return
	}
	e.sendJSON("message_stop", map[string]any{"type": "message_stop"})
}
