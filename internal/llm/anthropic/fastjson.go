package anthropic

import (
	"github.com/reinsdev/reins/internal/llm/wirejson"
)

// The hot path of feed: an event decoded by hand with wirejson instead of
// encoding/json's reflection. Pointers of the frequent fields point into
// the translator's reused storage (an event is used only while it is fed),
// so a text delta costs one allocation, its text. Anything not plain falls
// back to encoding/json (wirejson.Fallback), so what is accepted and how
// is exactly json.Unmarshal into wireEvent (FuzzFastEvent checks).

// fastScratch is the reused storage behind a fast-decoded event.
type fastScratch struct {
	r     wirejson.Reader
	index int
	block wireBlock
	delta wireDelta
}

// fastEvent decodes data into ev, which must be zero.
func (t *translator) fastEvent(data []byte, ev *wireEvent) wirejson.Status {
	s := &t.scratch
	r := &s.r
	r.Reset(data)
	var seen wirejson.Seen
	r.Object(func(key []byte) {
		switch string(key) {
		case "type":
			if r.Mark(&seen, 0) {
				ev.Type = r.String(known)
			}
		case "message":
			if r.Mark(&seen, 1) && !r.Null() {
				ev.Message = &struct {
					Usage *wireUsage `json:"usage"`
				}{}
				var seenU wirejson.Seen
				r.Object(func(key []byte) {
					if string(key) == "usage" {
						if r.Mark(&seenU, 0) && !r.Null() {
							ev.Message.Usage = &wireUsage{}
							fastUsage(r, ev.Message.Usage)
						}
						return
					}
					r.Other(key, "usage")
				})
			}
		case "index":
			if r.Mark(&seen, 2) && !r.Null() {
				s.index = 0
				r.Int(&s.index)
				ev.Index = &s.index
			}
		case "content_block":
			if r.Mark(&seen, 3) && !r.Null() {
				s.block = wireBlock{}
				fastBlock(r, &s.block)
				ev.ContentBlock = &s.block
			}
		case "delta":
			if r.Mark(&seen, 4) && !r.Null() {
				s.delta = wireDelta{}
				fastDelta(r, &s.delta)
				ev.Delta = &s.delta
			}
		case "usage":
			if r.Mark(&seen, 5) && !r.Null() {
				ev.Usage = &wireUsage{}
				fastUsage(r, ev.Usage)
			}
		case "error":
			if r.Mark(&seen, 6) && !r.Null() {
				ev.Error = &wireErrBody{}
				r.Strings(errorMembers, &ev.Error.Type, &ev.Error.Message)
			}
		default:
			r.Other(key, "type", "message", "index", "content_block", "delta", "usage", "error")
		}
	})
	r.End()
	return r.Status
}

// known shares the strings of the wire's frequent type names.
func known(b []byte) (string, bool) {
	for _, s := range [...]string{
		"content_block_delta", "text_delta", "thinking_delta", "input_json_delta", "signature_delta",
		"content_block_start", "content_block_stop", "message_start", "message_delta", "message_stop",
		"text", "thinking", "tool_use", "redacted_thinking", "end_turn", "max_tokens", "stop_sequence", "ping",
	} {
		if string(b) == s {
			return s, true
		}
	}
	return "", false
}

func fastBlock(r *wirejson.Reader, b *wireBlock) {
	var seen wirejson.Seen
	r.Object(func(key []byte) {
		switch string(key) {
		case "type":
			if r.Mark(&seen, 0) {
				b.Type = r.String(known)
			}
		case "text":
			if r.Mark(&seen, 1) {
				b.Text = r.String(nil)
			}
		case "thinking":
			if r.Mark(&seen, 2) {
				b.Thinking = r.String(nil)
			}
		case "data":
			if r.Mark(&seen, 3) {
				b.Data = r.String(nil)
			}
		case "id":
			if r.Mark(&seen, 4) {
				b.ID = r.String(nil)
			}
		case "name":
			if r.Mark(&seen, 5) {
				b.Name = r.String(nil)
			}
		case "input":
			if r.Mark(&seen, 6) {
				if raw := r.Raw(); raw != nil {
					b.Input = append(b.Input[:0:0], raw...)
				}
			}
		default:
			r.Other(key, "type", "text", "thinking", "data", "id", "name", "input")
		}
	})
}

func fastDelta(r *wirejson.Reader, d *wireDelta) {
	var seen wirejson.Seen
	r.Object(func(key []byte) {
		switch string(key) {
		case "type":
			if r.Mark(&seen, 0) {
				d.Type = r.String(known)
			}
		case "text":
			if r.Mark(&seen, 1) {
				d.Text = r.String(nil)
			}
		case "thinking":
			if r.Mark(&seen, 2) {
				d.Thinking = r.String(nil)
			}
		case "signature":
			if r.Mark(&seen, 3) {
				d.Signature = r.String(nil)
			}
		case "partial_json":
			if r.Mark(&seen, 4) {
				d.PartialJSON = r.String(nil)
			}
		case "stop_reason":
			if r.Mark(&seen, 5) {
				d.StopReason = r.String(known)
			}
		default:
			r.Other(key, "type", "text", "thinking", "signature", "partial_json", "stop_reason")
		}
	})
}

func fastUsage(r *wirejson.Reader, u *wireUsage) {
	var seen wirejson.Seen
	count := func(i int, dst **int) {
		if r.Mark(&seen, i) && !r.Null() {
			n := 0
			r.Int(&n)
			*dst = &n
		}
	}
	r.Object(func(key []byte) {
		switch string(key) {
		case "input_tokens":
			count(0, &u.InputTokens)
		case "output_tokens":
			count(1, &u.OutputTokens)
		case "cache_read_input_tokens":
			count(2, &u.CacheReadInputTokens)
		case "cache_creation_input_tokens":
			count(3, &u.CacheCreationInputTokens)
		default:
			r.Other(key, "input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
		}
	})
}

var errorMembers = []string{"type", "message"}
