package responses

import "github.com/reinsdev/reins/internal/llm/wirejson"

// The hot path of feed: an event decoded by hand with wirejson instead of
// encoding/json's reflection, which a short run would otherwise pay to
// build for wireEvent and the types under it before its first delta. It
// yields to encoding/json whenever the payload is anything but plain
// (wirejson.Fallback), so what it accepts and how is exactly what
// json.Unmarshal into wireEvent does (FuzzFastEvent checks).

// fastEvent decodes data into ev, which must be zero.
func (t *translator) fastEvent(data []byte, ev *wireEvent) wirejson.Status {
	r := &t.json
	r.Reset(data)
	var seen wirejson.Seen
	r.Object(func(key []byte) {
		switch string(key) {
		case "type":
			if r.Mark(&seen, 0) {
				ev.Type = r.String(eventType)
			}
		case "output_index":
			if r.Mark(&seen, 1) && !r.Null() {
				i := 0
				r.Int(&i)
				ev.OutputIndex = &i
			}
		case "delta":
			if r.Mark(&seen, 2) {
				ev.Delta = r.String(nil)
			}
		case "arguments":
			if r.Mark(&seen, 3) {
				ev.Arguments = r.String(nil)
			}
		case "item":
			if r.Mark(&seen, 4) && !r.Null() {
				ev.Item = &wireItem{}
				fastItem(r, ev.Item)
			}
		case "response":
			if r.Mark(&seen, 5) && !r.Null() {
				ev.Response = &wireResponse{}
				fastResponse(r, ev.Response)
			}
		case "code":
			if r.Mark(&seen, 6) {
				if raw := r.Raw(); raw != nil {
					ev.Code = append(ev.Code[:0:0], raw...)
				}
			}
		case "message":
			if r.Mark(&seen, 7) {
				ev.Message = r.String(nil)
			}
		default:
			r.Other(key, "type", "output_index", "delta", "arguments", "item", "response", "code", "message")
		}
	})
	r.End()
	return r.Status
}

// eventType shares the strings of the event types the stream repeats.
func eventType(b []byte) (string, bool) {
	for _, s := range [...]string{
		"response.output_text.delta", "response.function_call_arguments.delta",
		"response.reasoning_summary_text.delta", "response.output_item.added", "response.output_item.done",
		"response.content_part.added", "response.content_part.done", "response.output_text.done",
		"response.function_call_arguments.done", "response.created", "response.in_progress", "response.completed",
	} {
		if string(b) == s {
			return s, true
		}
	}
	return "", false
}

func fastItem(r *wirejson.Reader, it *wireItem) {
	var seen wirejson.Seen
	r.Object(func(key []byte) {
		switch string(key) {
		case "type":
			if r.Mark(&seen, 0) {
				it.Type = r.String(nil)
			}
		case "call_id":
			if r.Mark(&seen, 1) {
				it.CallID = r.String(nil)
			}
		case "name":
			if r.Mark(&seen, 2) {
				it.Name = r.String(nil)
			}
		case "arguments":
			if r.Mark(&seen, 3) {
				it.Arguments = r.String(nil)
			}
		case "content":
			if r.Mark(&seen, 4) {
				it.Content = fastParts(r)
			}
		case "summary":
			if r.Mark(&seen, 5) {
				it.Summary = fastParts(r)
			}
		case "encrypted_content":
			if r.Mark(&seen, 6) {
				it.EncryptedContent = r.String(nil)
			}
		default:
			r.Other(key, "type", "call_id", "name", "arguments", "content", "summary", "encrypted_content")
		}
	})
}

// fastParts reads a list of parts (nil for null, as encoding/json leaves
// a nil slice).
func fastParts(r *wirejson.Reader) []wirePart {
	if r.Null() {
		return nil
	}
	ps := []wirePart{}
	r.Array(func() {
		ps = append(ps, wirePart{})
		p := &ps[len(ps)-1]
		r.Strings(partMembers, &p.Type, &p.Text, &p.Refusal)
	})
	return ps
}

func fastResponse(r *wirejson.Reader, resp *wireResponse) {
	var seen wirejson.Seen
	r.Object(func(key []byte) {
		switch string(key) {
		case "status":
			if r.Mark(&seen, 0) {
				resp.Status = r.String(nil)
			}
		case "usage":
			if r.Mark(&seen, 1) && !r.Null() {
				resp.Usage = &wireUsage{}
				fastUsage(r, resp.Usage)
			}
		case "incomplete_details":
			if r.Mark(&seen, 2) && !r.Null() {
				resp.IncompleteDetails = &struct {
					Reason string `json:"reason"`
				}{}
				r.Strings(reasonMembers, &resp.IncompleteDetails.Reason)
			}
		case "error":
			if r.Mark(&seen, 3) && !r.Null() {
				resp.Error = &wireError{}
				r.Strings(errorMembers, &resp.Error.Code, &resp.Error.Message)
			}
		default:
			r.Other(key, "status", "usage", "incomplete_details", "error")
		}
	})
}

func fastUsage(r *wirejson.Reader, u *wireUsage) {
	var seen wirejson.Seen
	r.Object(func(key []byte) {
		switch string(key) {
		case "input_tokens":
			if r.Mark(&seen, 0) {
				r.Int(&u.InputTokens)
			}
		case "output_tokens":
			if r.Mark(&seen, 1) {
				r.Int(&u.OutputTokens)
			}
		case "input_tokens_details":
			if r.Mark(&seen, 2) && !r.Null() {
				u.InputTokensDetails = &struct {
					CachedTokens int `json:"cached_tokens"`
				}{}
				r.Object(func(key []byte) {
					if string(key) == "cached_tokens" {
						r.Int(&u.InputTokensDetails.CachedTokens)
						return
					}
					r.Other(key, "cached_tokens")
				})
			}
		case "output_tokens_details":
			if r.Mark(&seen, 3) && !r.Null() {
				u.OutputTokensDetails = &struct {
					ReasoningTokens int `json:"reasoning_tokens"`
				}{}
				r.Object(func(key []byte) {
					if string(key) == "reasoning_tokens" {
						r.Int(&u.OutputTokensDetails.ReasoningTokens)
						return
					}
					r.Other(key, "reasoning_tokens")
				})
			}
		default:
			r.Other(key, "input_tokens", "output_tokens", "input_tokens_details", "output_tokens_details")
		}
	})
}

// The members of the objects that hold only strings.
var (
	partMembers   = []string{"type", "text", "refusal"}
	reasonMembers = []string{"reason"}
	errorMembers  = []string{"code", "message"}
)
