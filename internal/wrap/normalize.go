package wrap

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/reinsdev/reins/internal/llm"
)

// Canonical stop reasons of a pi assistant message (docs/wrap.md). The empty
// string means "no canonical reason": the raw value is kept beside it and
// the message is never terminal.
const (
	StopStop    = "stop"
	StopLength  = "length"
	StopToolUse = "toolUse"
	StopAborted = "aborted"
	StopError   = "error"
)

// NormalizeStopReason maps a raw stop reason, trimmed and compared
// case-insensitively, to its canonical form. raw is the trimmed input; an
// unknown value comes back with canonical "" and raw kept, so a provider
// that invents a new spelling is recorded faithfully but never ends a run.
func NormalizeStopReason(value string) (canonical, raw string) {
	raw = strings.TrimSpace(value)
	switch strings.ToLower(raw) {
	case "stop", "end_turn", "endturn":
		return StopStop, raw
	case "length", "max_tokens":
		return StopLength, raw
	case "tooluse", "tool_use":
		return StopToolUse, raw
	case "aborted":
		return StopAborted, raw
	case "error":
		return StopError, raw
	}
	return "", raw
}

// IsTerminal reports whether a canonical stop reason ends the child's
// run: stop, length, aborted and error do; toolUse (the model asked for a
// tool and the loop goes on) and an unknown reason do not.
func IsTerminal(canonical string) bool {
	switch canonical {
	case StopStop, StopLength, StopAborted, StopError:
		return true
	}
	return false
}

// Normalized event types, as appended to events.jsonl.
const (
	EventToolCall      = "tool_call"
	EventToolResult    = "tool_result"
	EventAssistantText = "assistant_text"
)

// Event is one normalized pi event. Only the fields of its Type are
// written to events.jsonl (see MarshalJSON); Content and ErrorMessage are
// for the wrapper's own use.
type Event struct {
	Type string

	// tool_call and tool_result.
	ToolName string
	Args     json.RawMessage // tool_call; {} when pi sent none
	IsError  bool            // tool_result

	// assistant_text.
	Text          string // the message's text parts, joined by "\n" and trimmed
	Model         string
	StopReason    string // canonical, "" when unknown
	RawStopReason string
	Usage         json.RawMessage // pi's usage object, as sent

	// Content is the assistant message's content as reins blocks (text,
	// reasoning, tool calls), for the one output fold.
	Content []llm.Block
	// ErrorMessage is the child's own error text on a failed message. It
	// may carry anything the provider said and goes to result.json only.
	ErrorMessage string
}

// MarshalJSON writes the docs/wrap.md shape of the event's type.
func (e Event) MarshalJSON() ([]byte, error) {
	switch e.Type {
	case EventToolCall:
		args := e.Args
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		return json.Marshal(struct {
			Type     string          `json:"type"`
			ToolName string          `json:"toolName"`
			Args     json.RawMessage `json:"args"`
		}{e.Type, e.ToolName, args})
	case EventToolResult:
		return json.Marshal(struct {
			Type     string `json:"type"`
			ToolName string `json:"toolName"`
			IsError  bool   `json:"isError"`
		}{e.Type, e.ToolName, e.IsError})
	case EventAssistantText:
		return json.Marshal(struct {
			Type          string          `json:"type"`
			Text          string          `json:"text"`
			Model         string          `json:"model,omitempty"`
			StopReason    string          `json:"stopReason,omitempty"`
			RawStopReason string          `json:"rawStopReason,omitempty"`
			Usage         json.RawMessage `json:"usage,omitempty"`
		}{e.Type, e.Text, e.Model, e.StopReason, e.RawStopReason, e.Usage})
	}
	return nil, errors.New("wrap: unknown event type " + e.Type)
}

// ErrNotJSON is a stdout line that is not a JSON object: a protocol
// violation of `pi --mode json`.
var ErrNotJSON = errors.New("wrap: stdout line is not a JSON object")

// NormalizeEvent normalizes one stdout line of `pi --mode json`. ok is
// false for the many event types the wrapper does not record (session
// header, message_start, message_update, turn and agent lifecycle, user
// and tool-result messages).
func NormalizeEvent(line []byte) (ev Event, ok bool, err error) {
	p, err := parseLine(line)
	if err != nil || p.event == nil {
		return Event{}, false, err
	}
	return *p.event, true, nil
}

// retry is what a line says about a pending automatic retry.
type retry int

const (
	retryUnchanged retry = iota
	retryPending         // auto_retry_start, or agent_end with willRetry
	retryResolved        // auto_retry_end: retrying is over, either way
)

// parsed is everything one line means to the wrapper.
type parsed struct {
	event *Event
	retry retry
	// delta is streamed assistant text (message_update text_delta), the
	// output fold's fallback when no message ever completes.
	delta string
}

type piLine struct {
	Type      string          `json:"type"`
	ToolName  string          `json:"toolName"`
	Args      json.RawMessage `json:"args"`
	IsError   bool            `json:"isError"`
	Message   *piMessage      `json:"message"`
	WillRetry bool            `json:"willRetry"`
	Update    *struct {
		Type  string `json:"type"`
		Delta string `json:"delta"`
	} `json:"assistantMessageEvent"`
}

type piMessage struct {
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content"`
	Model        string          `json:"model"`
	StopReason   json.RawMessage `json:"stopReason"`
	Usage        json.RawMessage `json:"usage"`
	ErrorMessage string          `json:"errorMessage"`
}

type piPart struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

func parseLine(line []byte) (parsed, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return parsed{}, ErrNotJSON
	}
	var l piLine
	if err := json.Unmarshal(line, &l); err != nil {
		return parsed{}, ErrNotJSON
	}
	switch l.Type {
	case "tool_execution_start":
		args := l.Args
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		return parsed{event: &Event{Type: EventToolCall, ToolName: l.ToolName, Args: args}}, nil
	case "tool_execution_end":
		return parsed{event: &Event{Type: EventToolResult, ToolName: l.ToolName, IsError: l.IsError}}, nil
	case "message_end":
		if l.Message == nil || l.Message.Role != "assistant" {
			return parsed{}, nil
		}
		return parsed{event: assistantEvent(l.Message)}, nil
	case "message_update":
		if l.Update != nil && l.Update.Type == "text_delta" && l.Message != nil && l.Message.Role == "assistant" {
			return parsed{delta: l.Update.Delta}, nil
		}
	case "auto_retry_start":
		return parsed{retry: retryPending}, nil
	case "auto_retry_end":
		return parsed{retry: retryResolved}, nil
	case "agent_end":
		if l.WillRetry {
			return parsed{retry: retryPending}, nil
		}
	}
	return parsed{}, nil
}

func assistantEvent(m *piMessage) *Event {
	var raw string
	// A stop reason that is not a string is no stop reason at all.
	if len(m.StopReason) > 0 && m.StopReason[0] == '"' {
		_ = json.Unmarshal(m.StopReason, &raw)
	}
	canonical, raw := NormalizeStopReason(raw)
	e := &Event{
		Type: EventAssistantText, Model: m.Model, StopReason: canonical, RawStopReason: raw,
		ErrorMessage: m.ErrorMessage,
	}
	if len(m.Usage) > 0 && string(m.Usage) != "null" {
		e.Usage = m.Usage
	}
	var texts []string
	for _, p := range contentParts(m.Content) {
		switch p.Type {
		case "text":
			texts = append(texts, p.Text)
			e.Content = append(e.Content, llm.Block{Type: llm.BlockText, Text: p.Text})
		case "thinking":
			e.Content = append(e.Content, llm.Block{Type: llm.BlockReasoning, Text: p.Thinking})
		case "toolCall":
			args := "{}"
			if len(p.Arguments) > 0 && string(p.Arguments) != "null" {
				args = string(p.Arguments)
			}
			e.Content = append(e.Content, llm.Block{Type: llm.BlockToolCall, ID: p.ID, Name: p.Name, Arguments: args})
		}
	}
	e.Text = strings.TrimSpace(strings.Join(texts, "\n"))
	return e
}

// contentParts reads a message's content: an array of parts, or a plain
// string (one text part).
func contentParts(raw json.RawMessage) []piPart {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		return []piPart{{Type: "text", Text: s}}
	}
	var parts []piPart
	if json.Unmarshal(raw, &parts) != nil {
		return nil
	}
	return parts
}
