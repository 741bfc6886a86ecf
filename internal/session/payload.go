package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/reinsdev/reins/internal/lazy"
	"time"
)

// Every event type of docs/events.md has one payload: a Go struct with json
// tags that says what the event's data holds. An event's data is decoded
// into its payload once, where the event enters reins — Load and Read, a
// Tail's Poll, NewEvent for events received from a child or a peer — and
// handed on in Event.Payload; consumers switch on the payload's type
// (`switch d := e.Payload.(type) { case session.TurnEnd: … }`) and never
// decode the data again. Event.Data keeps the bytes as they were, for those
// that print or forward the log (`reins log --json`, --stream-json): what
// they print is what was written.
//
// Adding an event type takes two things, in the file of its own that says
// what it is for (events_<topic>.go):
//
//	// TypeSkillLoad is … (docs/events.md).
//	const TypeSkillLoad = "skill/load"
//
//	// SkillLoad is the data of skill/load.
//	type SkillLoad struct {
//		Name string `json:"name"`
//	}
//
//	register[SkillLoad](m, TypeSkillLoad) // a line in buildPayloads
//
// The payload is a struct value (not a pointer), so consumers match it by
// its type; writers pass that value to Log.Append.

// payloadKind decodes the data of one event type.
type payloadKind struct {
	// decode unmarshals data into the payload.
	decode func(data []byte) (any, error)
	// live returns a writer's value as the payload when it is one (or a
	// non-nil pointer to one), without encoding/json.
	live func(v any) (any, bool)
}

// payloadTable maps each known event type to its payload; built on first
// use, as reins builds no tables at start-up (internal/importrules).
var payloadTable = lazy.Value[map[string]payloadKind]{New: buildPayloads}

// payloads is the table of known event types.
func payloads() map[string]payloadKind { return payloadTable.Get() }

// register makes T the payload of event type typ in m.
func register[T any](m map[string]payloadKind, typ string) {
	if _, dup := m[typ]; dup {
		panic("session: event type " + typ + " registered twice")
	}
	m[typ] = payloadKind{
		decode: func(data []byte) (any, error) {
			var v T
			if err := json.Unmarshal(data, &v); err != nil {
				return nil, err
			}
			return v, nil
		},
		live: func(v any) (any, bool) {
			switch x := v.(type) {
			case T:
				return v, true // v itself: boxing x again would allocate
			case *T:
				if x != nil {
					return *x, true
				}
			}
			return nil, false
		},
	}
}

// buildPayloads is the table of the payloads of docs/events.md: a new
// event type is one line here.
func buildPayloads() map[string]payloadKind {
	m := make(map[string]payloadKind, 17)
	register[TurnStart](m, TypeTurnStart)
	register[TurnEnd](m, TypeTurnEnd)
	register[StepStart](m, TypeStepStart)
	register[StepEnd](m, TypeStepEnd)
	register[UserMessage](m, TypeUserMessage)
	register[AssistantChunk](m, TypeAssistantChunk)
	register[AssistantMessage](m, TypeAssistantMessage)
	register[ToolCall](m, TypeToolCall)
	register[ToolResult](m, TypeToolResult)
	register[LLMRetry](m, TypeLLMRetry)
	register[LLMRetryStarted](m, TypeLLMRetryStarted)
	register[SubagentStart](m, TypeSubagentStart)
	register[SubagentEnd](m, TypeSubagentEnd)
	register[JobNotice](m, TypeJobNotice)
	register[ContextCompacted](m, TypeContextCompacted)
	register[HookRun](m, TypeHookRun)
	register[SkillLoad](m, TypeSkillLoad)
	return m
}

// Known reports whether typ is an event type this reins has a payload for.
// Events of other types (a newer reins's) are kept and passed through with
// a nil Payload.
func Known(typ string) bool {
	_, ok := payloads()[typ]
	return ok
}

// PayloadError is an event of a known type whose data does not decode as
// that type's payload. It names the event by seq and type (both reins's
// own: the type is a known one); the decoder's error, which may quote the
// data, is kept for errors.As, not shown.
type PayloadError struct {
	Seq  int64
	Type string
	Err  error
}

func (e *PayloadError) Error() string {
	if e.Seq < 0 { // refused by Append, before it had a seq
		return fmt.Sprintf("%s data does not decode as %s data", e.Type, e.Type)
	}
	return fmt.Sprintf("event %d (%s): its data does not decode as %s data", e.Seq, e.Type, e.Type)
}

func (e *PayloadError) Unwrap() error { return e.Err }

// decodePayload sets e.Payload from e.Data: nil for an unknown type, a
// *PayloadError when the data does not decode.
func (e *Event) decodePayload() error {
	e.Payload = nil
	k, ok := payloads()[e.Type]
	if !ok {
		return nil
	}
	data := e.Data
	if len(data) == 0 {
		data = []byte("null")
	}
	p, err := k.decode(data)
	if err != nil {
		return &PayloadError{Seq: e.Seq, Type: e.Type, Err: err}
	}
	e.Payload = p
	return nil
}

// errNoPayload is the cause of a PayloadError for an event handed on
// without the payload its type has.
var errNoPayload = errors.New("no payload")

// UnmarshalJSON reads an event and decodes its payload, so an event that
// crosses a wire as JSON (an engine's seed and history, a child's stream)
// arrives as a read one does. A known type's data that does not decode as
// its payload is a *PayloadError.
func (e *Event) UnmarshalJSON(b []byte) error {
	var p plainEvent
	err := json.Unmarshal(b, &p)
	*e = Event(p) // as far as it went, as encoding/json leaves a value
	if err != nil {
		return err
	}
	return e.decodePayload()
}

// plainEvent is Event without its UnmarshalJSON: the log's readers decode
// a line into it and then the payload, which spares encoding/json a scan of
// the line before it calls the method.
type plainEvent Event

// readEvent decodes one log line: a *PayloadError when the line is an
// event whose data does not decode as its type's payload.
func readEvent(line []byte) (Event, error) {
	var p plainEvent
	if err := json.Unmarshal(line, &p); err != nil {
		return Event(p), err
	}
	e := Event(p)
	return e, e.decodePayload()
}

// NewEvent is an event received whole from elsewhere (a child's stream, a
// peer's notification) with its payload decoded; its error is a
// *PayloadError.
func NewEvent(typ string, seq int64, t time.Time, data json.RawMessage) (Event, error) {
	e := Event{Type: typ, Seq: seq, Time: t, Data: data}
	err := e.decodePayload()
	return e, err
}

// MakeEvent is an event of typ made from data, as Log.Append makes one
// (its Data the bytes Append would write, its Payload data itself when it
// says what they say), for a writer that is not a Log: a synthetic
// session's events.
func MakeEvent(typ string, seq int64, t time.Time, data any) (Event, error) {
	raw, err := marshalData(data)
	if err != nil {
		return Event{}, err
	}
	p, err := livePayload(typ, seq, data, raw)
	if err != nil {
		return Event{}, err
	}
	return Event{Type: typ, Seq: seq, Time: t, Data: raw, Payload: p}, nil
}

// escapedFFFD is what encoding/json (and jsonw) write for a string's
// invalid UTF-8.
var escapedFFFD = []byte(`\ufffd`)

// livePayload is the payload of an event Append wrote from data, whose
// encoding is raw: data itself when it is the payload's type and its
// encoding replaced nothing — then decoding raw gives data back, and the
// observers of a live log (the fold of every run) are spared
// encoding/json's decoders (8f47a2c) — and raw decoded otherwise. A string
// that is not valid UTF-8 is written as \ufffd, so data holding one is not
// what the log says and raw is decoded instead; the test is on the
// encoding, which a stray `\ufffd` in a text only makes conservative.
func livePayload(typ string, seq int64, data any, raw []byte) (any, error) {
	k, ok := payloads()[typ]
	if !ok {
		return nil, nil
	}
	if v, ok := k.live(data); ok && !bytes.Contains(raw, escapedFFFD) {
		return v, nil
	}
	v, err := k.decode(raw)
	if err != nil {
		return nil, &PayloadError{Seq: seq, Type: typ, Err: err}
	}
	return v, nil
}
