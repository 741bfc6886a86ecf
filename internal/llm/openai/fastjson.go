package openai

import (
	"github.com/reinsdev/reins/internal/llm/wirejson"
)

// The hot path of payload: a chunk decoded by hand with wirejson instead
// of encoding/json's reflection (several times faster, about one
// allocation per content delta instead of a dozen). It yields to
// encoding/json whenever the payload is anything but plain
// (wirejson.Fallback), so what it accepts and how is exactly what
// json.Unmarshal into wireChunk does (FuzzFastChunk checks).

// fastChunk decodes data into ch, which must be zero.
func (d *decoder) fastChunk(data []byte, ch *wireChunk) wirejson.Status {
	r := &d.json
	r.Reset(data)
	var seen wirejson.Seen
	r.Object(func(key []byte) {
		switch string(key) {
		case "choices":
			if r.Mark(&seen, 0) {
				d.choices = d.choices[:0]
				r.Array(func() {
					d.choices = append(d.choices, wireChoice{})
					fastChoice(r, &d.choices[len(d.choices)-1])
				})
				ch.Choices = d.choices
			}
		case "usage":
			if r.Mark(&seen, 1) && !r.Null() {
				ch.Usage = &wireUsage{}
				fastUsage(r, ch.Usage)
			}
		case "error":
			if r.Mark(&seen, 2) {
				if raw := r.Raw(); raw != nil {
					ch.Error = append(ch.Error[:0:0], raw...)
				}
			}
		default:
			r.Other(key, "choices", "usage", "error")
		}
	})
	r.End()
	return r.Status
}

func fastChoice(r *wirejson.Reader, c *wireChoice) {
	var seen wirejson.Seen
	r.Object(func(key []byte) {
		switch string(key) {
		case "index":
			if r.Mark(&seen, 0) {
				r.Int(&c.Index)
			}
		case "delta":
			if r.Mark(&seen, 1) {
				fastDelta(r, &c.Delta)
			}
		case "finish_reason":
			if r.Mark(&seen, 2) {
				c.FinishReason = r.String(finishReason)
			}
		default:
			r.Other(key, "index", "delta", "finish_reason")
		}
	})
}

// finishReason shares the strings of the common finish reasons.
func finishReason(b []byte) (string, bool) {
	for _, s := range [...]string{"stop", "tool_calls", "length", "content_filter", "function_call"} {
		if string(b) == s {
			return s, true
		}
	}
	return "", false
}

func fastDelta(r *wirejson.Reader, w *wireDelta) {
	var seen wirejson.Seen
	r.Object(func(key []byte) {
		switch string(key) {
		case "content":
			if r.Mark(&seen, 0) {
				w.Content = r.String(nil)
			}
		case "reasoning_content":
			if r.Mark(&seen, 1) {
				w.ReasoningContent = r.String(nil)
			}
		case "reasoning":
			if r.Mark(&seen, 2) {
				w.Reasoning = r.String(nil)
			}
		case "refusal":
			if r.Mark(&seen, 3) {
				w.Refusal = r.String(nil)
			}
		case "tool_calls":
			if r.Mark(&seen, 4) {
				w.ToolCalls = nil
				r.Array(func() {
					w.ToolCalls = append(w.ToolCalls, wireToolCall{})
					fastToolCall(r, &w.ToolCalls[len(w.ToolCalls)-1])
				})
			}
		case "function_call":
			if r.Mark(&seen, 5) && !r.Null() {
				w.FunctionCall = &wireFunction{}
				fastFunction(r, w.FunctionCall)
			}
		default:
			r.Other(key, "content", "reasoning_content", "reasoning", "refusal", "tool_calls", "function_call")
		}
	})
}

func fastToolCall(r *wirejson.Reader, tc *wireToolCall) {
	var seen wirejson.Seen
	r.Object(func(key []byte) {
		switch string(key) {
		case "index":
			if r.Mark(&seen, 0) && !r.Null() {
				i := 0
				r.Int(&i)
				tc.Index = &i
			}
		case "id":
			if r.Mark(&seen, 1) {
				tc.ID = r.String(nil)
			}
		case "function":
			if r.Mark(&seen, 2) {
				fastFunction(r, &tc.Function)
			}
		default:
			r.Other(key, "index", "id", "function")
		}
	})
}

func fastFunction(r *wirejson.Reader, f *wireFunction) {
	var seen wirejson.Seen
	r.Object(func(key []byte) {
		switch string(key) {
		case "name":
			if r.Mark(&seen, 0) {
				f.Name = r.String(nil)
			}
		case "arguments":
			if r.Mark(&seen, 1) {
				f.Arguments = r.String(nil)
			}
		default:
			r.Other(key, "name", "arguments")
		}
	})
}

func fastUsage(r *wirejson.Reader, u *wireUsage) {
	var seen wirejson.Seen
	r.Object(func(key []byte) {
		switch string(key) {
		case "prompt_tokens":
			if r.Mark(&seen, 0) {
				r.Int(&u.PromptTokens)
			}
		case "completion_tokens":
			if r.Mark(&seen, 1) {
				r.Int(&u.CompletionTokens)
			}
		case "prompt_cache_hit_tokens":
			if r.Mark(&seen, 2) {
				r.Int(&u.PromptCacheHitTokens)
			}
		case "prompt_tokens_details":
			if r.Mark(&seen, 3) && !r.Null() {
				u.PromptTokensDetails = &struct {
					CachedTokens int `json:"cached_tokens"`
				}{}
				r.Object(func(key []byte) {
					if string(key) == "cached_tokens" {
						r.Int(&u.PromptTokensDetails.CachedTokens)
						return
					}
					r.Other(key, "cached_tokens")
				})
			}
		case "completion_tokens_details":
			if r.Mark(&seen, 4) && !r.Null() {
				u.CompletionTokensDetails = &struct {
					ReasoningTokens int `json:"reasoning_tokens"`
				}{}
				r.Object(func(key []byte) {
					if string(key) == "reasoning_tokens" {
						r.Int(&u.CompletionTokensDetails.ReasoningTokens)
						return
					}
					r.Other(key, "reasoning_tokens")
				})
			}
		default:
			r.Other(key, "prompt_tokens", "completion_tokens", "prompt_cache_hit_tokens",
				"prompt_tokens_details", "completion_tokens_details")
		}
	})
}
