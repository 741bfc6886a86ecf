package mock

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// parseResponses reads a Responses-API request: instructions and
// system/developer messages are the system prompt; the trailing run of
// user messages and function_call_output items (after the model's last
// item) is what a reply can match. The API always reports usage.
func parseResponses(body []byte) (prompt, error) {
	var req struct {
		Model        string          `json:"model"`
		Instructions string          `json:"instructions"`
		Input        json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return prompt{}, err
	}
	p := prompt{model: req.Model, size: len(body), includeUsage: true}
	sys := []string{}
	if req.Instructions != "" {
		sys = append(sys, req.Instructions)
	}
	var s string
	if json.Unmarshal(req.Input, &s) == nil {
		p.system = strings.Join(sys, "\n")
		p.last = []string{s}
		return p, nil
	}
	var items []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Output  json.RawMessage `json:"output"`
	}
	if len(req.Input) > 0 {
		if err := json.Unmarshal(req.Input, &items); err != nil {
			return prompt{}, err
		}
	}
	for _, it := range items {
		if it.Role == "system" || it.Role == "developer" {
			sys = append(sys, contentText(it.Content))
		}
	}
	p.system = strings.Join(sys, "\n")
	start := len(items)
	for start > 0 {
		it := items[start-1]
		if it.Type != "function_call_output" && !(it.Role == "user" && (it.Type == "" || it.Type == "message")) {
			break
		}
		start--
	}
	for _, it := range items[start:] {
		if it.Type == "function_call_output" {
			p.last = append(p.last, contentText(it.Output))
		} else {
			p.last = append(p.last, contentText(it.Content))
		}
	}
	return p, nil
}

// responsesTerminal maps a scripted finish (any wire's spelling) to the
// Responses terminal event: the event type and, for incomplete, its
// reason; for failed, its error code.
func responsesTerminal(f string) (typ, detail string) {
	switch f {
	case "", "none", "stop", "end_turn", "stop_sequence", "tool_calls", "tool_use", "completed", "STOP":
		return "response.completed", ""
	case "length", "max_tokens", "max_output_tokens", "MAX_TOKENS":
		return "response.incomplete", "max_output_tokens"
	case "content_filter", "refusal", "SAFETY":
		return "response.incomplete", "content_filter"
	case "model_context_window_exceeded", "context_length_exceeded":
		return "response.failed", "context_length_exceeded"
	}
	return "response.incomplete", f
}

// responses renders the reply as Responses-API stream events, the way the
// API sends them: response.created, then one output item per reasoning /
// message / function call (item.added, its deltas, item.done with the
// whole item: a reasoning item's encrypted_content, a message's
// output_text), then the terminal response event with usage. Faults cut
// the sequence short, corrupt it or end it with response.failed.
func (rd *rendering) responses(e *emitter) {
	id := fmt.Sprintf("resp_mock_%d", rd.seq)
	seq := 0
	send := func(ev map[string]any) bool {
		ev["sequence_number"] = seq
		seq++
		return e.sendJSON(ev["type"].(string), ev)
	}
	resp := func(status string, output []any) map[string]any {
		return map[string]any{"id": id, "object": "response", "created_at": time.Now().Unix(),
			"status": status, "model": rd.model, "output": output}
	}
	if !send(map[string]any{"type": "response.created", "response": resp("in_progress", []any{})}) {
		return
	}
	var output []any
	oi := 0
	if r := rd.reasoning(); r != "" {
		rid := fmt.Sprintf("rs_mock_%d", rd.seq)
		if !send(map[string]any{"type": "response.output_item.added", "output_index": oi,
			"item": map[string]any{"id": rid, "type": "reasoning", "summary": []any{}}}) {
			return
		}
		for _, p := range pieces(r, rd.r.Chunk) {
			if !send(map[string]any{"type": "response.reasoning_summary_text.delta", "item_id": rid,
				"output_index": oi, "summary_index": 0, "delta": p}) {
				return
			}
		}
		item := map[string]any{"id": rid, "type": "reasoning",
			"summary":           []any{map[string]any{"type": "summary_text", "text": r}},
			"encrypted_content": fmt.Sprintf("mock-encrypted-%d", rd.seq)}
		if !send(map[string]any{"type": "response.output_item.done", "output_index": oi, "item": item}) {
			return
		}
		output = append(output, item)
		oi++
	}
	if rd.text != "" {
		mid := fmt.Sprintf("msg_mock_%d", rd.seq)
		if !send(map[string]any{"type": "response.output_item.added", "output_index": oi,
			"item": map[string]any{"id": mid, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}}) {
			return
		}
		if !send(map[string]any{"type": "response.content_part.added", "item_id": mid, "output_index": oi, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}}) {
			return
		}
		for _, p := range pieces(rd.text, rd.r.Chunk) {
			if !send(map[string]any{"type": "response.output_text.delta", "item_id": mid, "output_index": oi,
				"content_index": 0, "delta": p}) {
				return
			}
		}
		part := map[string]any{"type": "output_text", "text": rd.text, "annotations": []any{}}
		if !send(map[string]any{"type": "response.output_text.done", "item_id": mid, "output_index": oi, "content_index": 0, "text": rd.text}) ||
			!send(map[string]any{"type": "response.content_part.done", "item_id": mid, "output_index": oi, "content_index": 0, "part": part}) {
			return
		}
		item := map[string]any{"id": mid, "type": "message", "status": "completed", "role": "assistant", "content": []any{part}}
		if !send(map[string]any{"type": "response.output_item.done", "output_index": oi, "item": item}) {
			return
		}
		output = append(output, item)
		oi++
	}
	for _, c := range rd.calls {
		cid := c.id
		if cid == "" {
			cid = fmt.Sprintf("call_%d", c.n)
		}
		fid := fmt.Sprintf("fc_mock_%d_%d", rd.seq, oi)
		added := map[string]any{"id": fid, "type": "function_call", "status": "in_progress", "call_id": cid, "name": c.name, "arguments": ""}
		if c.ns != "" {
			added["namespace"] = c.ns
		}
		if !send(map[string]any{"type": "response.output_item.added", "output_index": oi, "item": added}) {
			return
		}
		for _, p := range argPieces(c.args, rd.r.Chunk) {
			if !send(map[string]any{"type": "response.function_call_arguments.delta", "item_id": fid, "output_index": oi, "delta": p}) {
				return
			}
		}
		if !send(map[string]any{"type": "response.function_call_arguments.done", "item_id": fid, "output_index": oi, "arguments": c.args}) {
			return
		}
		item := map[string]any{"id": fid, "type": "function_call", "status": "completed", "call_id": cid, "name": c.name, "arguments": c.args}
		if c.ns != "" {
			item["namespace"] = c.ns
		}
		if !send(map[string]any{"type": "response.output_item.done", "output_index": oi, "item": item}) {
			return
		}
		output = append(output, item)
		oi++
	}
	if output == nil {
		output = []any{}
	}
	usage := map[string]any{
		"input_tokens":          rd.usage.Input,
		"input_tokens_details":  map[string]any{"cached_tokens": rd.usage.CacheRead},
		"output_tokens":         rd.usage.Output,
		"output_tokens_details": map[string]any{"reasoning_tokens": rd.usage.Reasoning},
		"total_tokens":          rd.usage.Input + rd.usage.Output,
	}
	switch rd.r.Fault {
	case FaultCut:
		return
	case FaultOverloaded:
		r := resp("failed", output)
		r["error"] = map[string]any{"code": "server_error", "message": "The server is overloaded. Please try again later."}
		send(map[string]any{"type": "response.failed", "response": r})
		return
	case FaultMalformed:
		if !e.send("response.output_text.delta", []byte("{not json")) {
			return
		}
	}
	typ, detail := responsesTerminal(rd.r.Finish)
	status := strings.TrimPrefix(typ, "response.")
	r := resp(status, output)
	r["usage"] = usage
	switch typ {
	case "response.incomplete":
		r["incomplete_details"] = map[string]any{"reason": detail}
	case "response.failed":
		r["error"] = map[string]any{"code": detail, "message": "Your input exceeds the context window of this model."}
	}
	send(map[string]any{"type": typ, "response": r})
}
