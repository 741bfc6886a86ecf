package gemini

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/reinsdev/reins/internal/llm"
)

// Fixed finish messages: provider text never goes into a message.
const (
	msgEmpty     = "model returned no content"
	msgClosed    = "stream ended before a finishReason"
	msgMalformed = "stream payload is not the expected JSON"
	msgCW        = "provider reported in the stream: prompt exceeds the context window"
	msgError     = "provider reported an error in the stream"
	msgUnknown   = "provider ended with an unrecognised finish reason"
)

// wireResponse is one GenerateContentResponse: only the fields reins reads.
type wireResponse struct {
	Candidates     []wireCandidate `json:"candidates"`
	UsageMetadata  *wireUsage      `json:"usageMetadata"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	Error *wireError `json:"error"`
}

type wireCandidate struct {
	Index   int `json:"index"`
	Content *struct {
		Parts []wirePart `json:"parts"`
	} `json:"content"`
	FinishReason string `json:"finishReason"`
}

type wirePart struct {
	Text             *string `json:"text"`
	Thought          bool    `json:"thought"`
	ThoughtSignature string  `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
}

type wireUsage struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
	ToolUsePromptTokenCount int `json:"toolUsePromptTokenCount"`
}

// usage converts Gemini's counts: thoughts are counted apart from the
// candidates, and llm.Usage's output includes reasoning.
func (u *wireUsage) usage() llm.Usage {
	return llm.Usage{
		InputTokens:     u.PromptTokenCount + u.ToolUsePromptTokenCount,
		OutputTokens:    u.CandidatesTokenCount + u.ThoughtsTokenCount,
		CacheReadTokens: u.CachedContentTokenCount,
		ReasoningTokens: u.ThoughtsTokenCount,
	}
}

type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
}

// translator turns Gemini stream events into chunks. Consecutive text
// parts of the same kind (thought or not) make one block; every
// functionCall part is one whole tool-call block.
type translator struct {
	logf    func(string, ...any)
	out     []llm.Chunk
	cur     int           // the open text or reasoning block, -1: none
	curKind llm.BlockType // its kind
	curSig  string        // a thought signature that came with it
	next    int
	calls   int
	content bool
	usage   *llm.Usage
	resp    wireResponse
}

func newTranslator(logf func(string, ...any)) *translator {
	return &translator{logf: logf, cur: -1}
}

func (t *translator) log(format string, args ...any) {
	if t.logf != nil {
		t.logf(format, args...)
	}
}

// Feed implements llm.Translator.
func (t *translator) Feed(name string, data []byte, out []llm.Chunk) ([]llm.Chunk, *llm.Chunk) {
	t.out = out
	fin := t.feed(data)
	return t.out, fin
}

func (t *translator) feed(data []byte) *llm.Chunk {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil
	}
	r := &t.resp
	*r = wireResponse{}
	if trimmed[0] != '{' || json.Unmarshal(trimmed, r) != nil {
		t.log("gemini: malformed stream payload: %.4096s", data)
		c := llm.ErrorFinish(llm.CodeMalformedResponse, msgMalformed)
		return &c
	}
	if r.Error != nil {
		f := t.streamError(r.Error)
		return &f
	}
	if r.UsageMetadata != nil {
		u := r.UsageMetadata.usage()
		t.usage = &u
	}
	if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" && len(r.Candidates) == 0 {
		// The prompt itself was blocked: no candidate will come.
		t.log("gemini: prompt blocked: %q", r.PromptFeedback.BlockReason)
		f := t.end(llm.Chunk{Type: llm.ChunkFinish, Finish: &llm.Finish{Kind: llm.FinishRefusal}})
		return &f
	}
	for i := range r.Candidates {
		c := &r.Candidates[i]
		if c.Index != 0 {
			continue // reins asks for one candidate
		}
		if c.Content != nil {
			for j := range c.Content.Parts {
				t.part(&c.Content.Parts[j])
			}
		}
		if c.FinishReason != "" {
			f := t.finish(c.FinishReason)
			return &f
		}
	}
	return nil
}

func (t *translator) part(p *wirePart) {
	if p.FunctionCall != nil {
		t.endCur()
		id := p.FunctionCall.ID
		if id == "" {
			id = generatedPrefix + strconv.Itoa(t.calls)
		}
		t.calls++
		args := string(bytes.TrimSpace(p.FunctionCall.Args))
		if args == "" || args == "null" {
			args = "{}"
		}
		i := t.start(llm.Block{Type: llm.BlockToolCall, ID: id, Name: p.FunctionCall.Name})
		t.out = append(t.out,
			llm.Chunk{Type: llm.ChunkToolCallDelta, Index: i, Delta: args},
			llm.Chunk{Type: llm.ChunkBlockEnd, Index: i, Signature: p.ThoughtSignature})
		return
	}
	if p.Text == nil {
		if p.ThoughtSignature != "" && t.cur >= 0 {
			t.curSig = p.ThoughtSignature
		}
		return // inline data, executable code and future part types
	}
	kind := llm.BlockText
	if p.Thought {
		kind = llm.BlockReasoning
	}
	if *p.Text == "" {
		if p.ThoughtSignature != "" {
			if t.cur < 0 || t.curKind != kind {
				t.endCur()
				t.cur, t.curKind = t.start(llm.Block{Type: kind}), kind
			}
			t.curSig = p.ThoughtSignature
		}
		return
	}
	if t.cur < 0 || t.curKind != kind {
		t.endCur()
		t.cur, t.curKind = t.start(llm.Block{Type: kind}), kind
	}
	if p.ThoughtSignature != "" {
		t.curSig = p.ThoughtSignature
	}
	typ := llm.ChunkTextDelta
	if kind == llm.BlockReasoning {
		typ = llm.ChunkReasoningDelta
	}
	t.out = append(t.out, llm.Chunk{Type: typ, Index: t.cur, Delta: *p.Text})
}

func (t *translator) start(b llm.Block) int {
	i := t.next
	t.next++
	t.content = true
	t.out = append(t.out, llm.Chunk{Type: llm.ChunkBlockStart, Index: i, Block: &b})
	return i
}

func (t *translator) endCur() {
	if t.cur < 0 {
		return
	}
	t.out = append(t.out, llm.Chunk{Type: llm.ChunkBlockEnd, Index: t.cur, Signature: t.curSig})
	t.cur, t.curSig = -1, ""
}

// end closes the open block, reports usage and returns fin.
func (t *translator) end(fin llm.Chunk) llm.Chunk {
	t.endCur()
	if t.usage != nil {
		t.out = append(t.out, llm.Chunk{Type: llm.ChunkUsage, Usage: t.usage})
	}
	return fin
}

// finish maps a finishReason (docs/providers.md): STOP is a stop, or
// tool-calls when the response called functions; MAX_TOKENS is
// max-tokens; the safety family is a refusal; anything else is an error
// with the reason as its code.
func (t *translator) finish(reason string) llm.Chunk {
	done := func(k llm.FinishKind) llm.Chunk {
		return t.end(llm.Chunk{Type: llm.ChunkFinish, Finish: &llm.Finish{Kind: k}})
	}
	switch reason {
	case "STOP":
		if t.calls > 0 {
			return done(llm.FinishToolCalls)
		}
		if !t.content {
			return t.end(llm.ErrorFinish(llm.CodeEmptyResponse, msgEmpty))
		}
		return done(llm.FinishStop)
	case "MAX_TOKENS":
		return done(llm.FinishMaxTokens)
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT":
		return done(llm.FinishRefusal)
	}
	t.log("gemini: finish reason %q", reason)
	return t.end(llm.Chunk{Type: llm.ChunkFinish, Finish: &llm.Finish{Kind: llm.FinishError, Code: llm.ReasonCode(reason), Message: msgUnknown}})
}

// streamError classifies an error object sent in the stream by its
// google.rpc status (and HTTP code); the message goes to the host log and
// is consulted only for the context-window markers.
func (t *translator) streamError(e *wireError) llm.Chunk {
	t.log("gemini: error in stream: %d %s: %.65536s", e.Code, e.Status, e.Message)
	switch {
	case llm.IsContextWindowMessage(e.Message):
		return llm.ErrorFinish(llm.CodeContextWindowExceeded, msgCW)
	case e.Status == "RESOURCE_EXHAUSTED" || e.Code == 429:
		return llm.ErrorFinish(llm.CodeRateLimit, msgError+": rate limit")
	case e.Status == "UNAUTHENTICATED" || e.Status == "PERMISSION_DENIED" || e.Code == 401 || e.Code == 403:
		return llm.ErrorFinish(llm.CodeAuth, msgError+": credentials rejected")
	case e.Status == "INVALID_ARGUMENT" || e.Status == "FAILED_PRECONDITION" || e.Code == 400:
		return llm.ErrorFinish(llm.CodeInvalidRequest, msgError+": the request was rejected")
	}
	return llm.ErrorFinish(llm.CodeServer, msgError)
}

// Unfinished implements llm.Translator: the body ended before a
// finishReason.
func (t *translator) Unfinished() string { return msgClosed }
