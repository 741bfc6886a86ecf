package mock

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sseEvent is one parsed SSE event, or a comment line (comment set).
type sseEvent struct {
	name    string
	data    string
	comment string
}

// parseSSE splits a whole body into events. It splits on bytes, with no
// line-length limit, so 16 MiB lines parse.
func parseSSE(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	var have bool
	lines := bytes.Split(body, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for _, l := range lines {
		switch {
		case len(l) == 0:
			if have {
				out = append(out, cur)
			}
			cur, have = sseEvent{}, false
		case l[0] == ':':
			out = append(out, sseEvent{comment: strings.TrimSpace(string(l[1:]))})
		case bytes.HasPrefix(l, []byte("event: ")):
			cur.name, have = string(l[len("event: "):]), true
		case bytes.HasPrefix(l, []byte("data: ")):
			if cur.data != "" {
				t.Fatalf("multi-line data event")
			}
			cur.data, have = string(l[len("data: "):]), true
		default:
			t.Fatalf("unexpected SSE line %.80q", l)
		}
	}
	if have {
		t.Fatalf("stream ends inside an event: %+v", cur)
	}
	return out
}

// summarizeOpenAI turns OpenAI-wire events into short strings, checking
// the chunk envelope on the way.
func summarizeOpenAI(t *testing.T, evs []sseEvent) []string {
	t.Helper()
	var out []string
	id := ""
	for _, ev := range evs {
		if ev.comment != "" {
			out = append(out, ":"+ev.comment)
			continue
		}
		if ev.name != "" {
			t.Errorf("OpenAI wire sent a named event %q", ev.name)
		}
		if ev.data == "[DONE]" {
			out = append(out, "[DONE]")
			continue
		}
		var c struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			Model   string `json:"model"`
			Choices []struct {
				Index        int                        `json:"index"`
				Delta        map[string]json.RawMessage `json:"delta"`
				FinishReason *string                    `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				Prompt     int `json:"prompt_tokens"`
				Completion int `json:"completion_tokens"`
				Total      int `json:"total_tokens"`
				PDetails   struct {
					Cached int `json:"cached_tokens"`
				} `json:"prompt_tokens_details"`
				CDetails struct {
					Reasoning int `json:"reasoning_tokens"`
				} `json:"completion_tokens_details"`
				Hit  int `json:"prompt_cache_hit_tokens"`
				Miss int `json:"prompt_cache_miss_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(ev.data), &c); err != nil {
			out = append(out, "bad:"+ev.data)
			continue
		}
		if c.Object != "chat.completion.chunk" || c.ID == "" || c.Model != "test-model" {
			t.Errorf("chunk envelope: %s", ev.data)
		}
		if id == "" {
			id = c.ID
		} else if c.ID != id {
			t.Errorf("chunk id changed: %s then %s", id, c.ID)
		}
		if c.Usage != nil {
			u := c.Usage
			if len(c.Choices) != 0 || u.Total != u.Prompt+u.Completion || u.Miss != u.Prompt-u.Hit {
				t.Errorf("usage chunk: %s", ev.data)
			}
			out = append(out, fmt.Sprintf("usage:%d/%d/cached=%d/hit=%d/reasoning=%d",
				u.Prompt, u.Completion, u.PDetails.Cached, u.Hit, u.CDetails.Reasoning))
			continue
		}
		if len(c.Choices) != 1 || c.Choices[0].Index != 0 {
			t.Fatalf("want one choice: %s", ev.data)
		}
		ch := c.Choices[0]
		if ch.FinishReason != nil {
			if len(ch.Delta) != 0 {
				t.Errorf("finish chunk with a delta: %s", ev.data)
			}
			out = append(out, "finish:"+*ch.FinishReason)
			continue
		}
		var parts []string
		str := func(k string) (string, bool) {
			raw, ok := ch.Delta[k]
			if !ok {
				return "", false
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatalf("delta %s: %s", k, raw)
			}
			return s, true
		}
		if role, ok := str("role"); ok {
			if role != "assistant" {
				t.Errorf("role %q", role)
			}
			if s, _ := str("content"); s != "" {
				t.Errorf("role delta carries content %q", s)
			}
			parts = append(parts, "role")
		} else if s, ok := str("content"); ok {
			parts = append(parts, "text:"+s)
		}
		if s, ok := str("reasoning_content"); ok {
			parts = append(parts, "reasoning:"+s)
		}
		if raw, ok := ch.Delta["tool_calls"]; ok {
			var tcs []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			}
			if err := json.Unmarshal(raw, &tcs); err != nil {
				t.Fatalf("tool_calls: %s", raw)
			}
			for _, tc := range tcs {
				if tc.ID != "" {
					if tc.Function.Arguments != "" {
						t.Errorf("tool call head carries arguments: %s", raw)
					}
					parts = append(parts, fmt.Sprintf("tool:%d:%s:%s:%s", tc.Index, tc.ID, tc.Type, tc.Function.Name))
				} else {
					parts = append(parts, fmt.Sprintf("args:%d:%s", tc.Index, tc.Function.Arguments))
				}
			}
		}
		out = append(out, strings.Join(parts, "+"))
	}
	return out
}

// summarizeAnthropic turns Anthropic-wire events into short strings,
// checking that each event's name matches its data's type.
func summarizeAnthropic(t *testing.T, evs []sseEvent) []string {
	t.Helper()
	var out []string
	for _, ev := range evs {
		if ev.comment != "" {
			out = append(out, ":"+ev.comment)
			continue
		}
		var d struct {
			Type    string `json:"type"`
			Index   int    `json:"index"`
			Message *struct {
				Role  string `json:"role"`
				Model string `json:"model"`
				Usage struct {
					Input     int `json:"input_tokens"`
					CacheRead int `json:"cache_read_input_tokens"`
				} `json:"usage"`
			} `json:"message"`
			ContentBlock *struct {
				Type string `json:"type"`
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"content_block"`
			Delta *struct {
				Type        string  `json:"type"`
				Text        string  `json:"text"`
				Thinking    string  `json:"thinking"`
				Signature   string  `json:"signature"`
				PartialJSON string  `json:"partial_json"`
				StopReason  *string `json:"stop_reason"`
			} `json:"delta"`
			Usage *struct {
				Output int `json:"output_tokens"`
			} `json:"usage"`
			Error *struct {
				Type string `json:"type"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(ev.data), &d); err != nil {
			out = append(out, "bad:"+ev.name+":"+ev.data)
			continue
		}
		if d.Type != ev.name {
			t.Errorf("event %q carries type %q", ev.name, d.Type)
		}
		switch d.Type {
		case "message_start":
			m := d.Message
			if m == nil || m.Role != "assistant" || m.Model != "test-model" {
				t.Fatalf("message_start: %s", ev.data)
			}
			out = append(out, fmt.Sprintf("message_start:in=%d:cache=%d", m.Usage.Input, m.Usage.CacheRead))
		case "ping", "message_stop":
			out = append(out, d.Type)
		case "content_block_start":
			b := d.ContentBlock
			s := fmt.Sprintf("start:%d:%s", d.Index, b.Type)
			if b.Type == "tool_use" {
				s += ":" + b.ID + ":" + b.Name
			}
			out = append(out, s)
		case "content_block_delta":
			switch x := d.Delta; x.Type {
			case "text_delta":
				out = append(out, "text:"+x.Text)
			case "thinking_delta":
				out = append(out, "thinking:"+x.Thinking)
			case "signature_delta":
				if x.Signature == "" {
					t.Errorf("empty signature")
				}
				out = append(out, "signature")
			case "input_json_delta":
				out = append(out, "json:"+x.PartialJSON)
			default:
				t.Errorf("delta type %q", x.Type)
			}
		case "content_block_stop":
			out = append(out, fmt.Sprintf("stop:%d", d.Index))
		case "message_delta":
			sr := "null"
			if d.Delta.StopReason != nil {
				sr = *d.Delta.StopReason
			}
			out = append(out, fmt.Sprintf("delta:%s:out=%d", sr, d.Usage.Output))
		case "error":
			out = append(out, "error:"+d.Error.Type)
		default:
			t.Errorf("unknown event type %q", d.Type)
		}
	}
	return out
}

func openAIBody(user string, includeUsage bool) string {
	b, _ := json.Marshal(map[string]any{
		"model":          "test-model",
		"stream":         true,
		"stream_options": map[string]any{"include_usage": includeUsage},
		"messages": []any{
			map[string]any{"role": "system", "content": "be terse"},
			map[string]any{"role": "user", "content": user},
		},
	})
	return string(b)
}

func anthropicBody(user string) string {
	b, _ := json.Marshal(map[string]any{
		"model":      "test-model",
		"stream":     true,
		"max_tokens": 1024,
		"system":     "be terse",
		"messages":   []any{map[string]any{"role": "user", "content": user}},
	})
	return string(b)
}

// wireReq builds a request for the wire against base.
func wireReq(ctx context.Context, t *testing.T, base, wire, body string) *http.Request {
	t.Helper()
	path := "/chat/completions"
	if wire == WireAnthropic {
		path = "/v1/messages"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}

func bodyFor(wire, user string) string {
	if wire == WireAnthropic {
		return anthropicBody(user)
	}
	return openAIBody(user, true)
}

// startTCP starts s on httptest and returns its URL, the server and a
// client whose idle connections are closed at cleanup.
func startTCP(t *testing.T, s *Script) (string, *Server, *http.Client) {
	t.Helper()
	url, srv, stop := StartTest(s)
	tr := &http.Transport{}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		stop()
	})
	return url, srv, &http.Client{Transport: tr}
}

// post sends one request and reads the whole answer.
func post(t *testing.T, c *http.Client, base, wire, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := c.Do(wireReq(context.Background(), t, base, wire, body))
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, b
}
