package session

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
)

// TestLoadPayloads: every event of a stored log reaches its reader with its
// type's payload, an unknown type with none and its data as written.
func TestLoadPayloads(t *testing.T) {
	ld, err := Load(filepath.Join(ReplayRoot, replayParent, FileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ld.Events {
		if !Known(e.Type) {
			if e.Payload != nil || !strings.Contains(string(e.Data), "does not know") {
				t.Errorf("unknown %s: payload %v, data %s", e.Type, e.Payload, e.Data)
			}
			continue
		}
		want, _ := payloads()[e.Type].decode(e.Data)
		if e.Payload == nil || reflect.TypeOf(e.Payload) != reflect.TypeOf(want) || reflect.TypeOf(e.Payload).Kind() != reflect.Struct {
			t.Errorf("seq %d %s: payload %T", e.Seq, e.Type, e.Payload)
		}
	}
	if _, ok := ld.Events[3].Payload.(StepStart); !ok {
		t.Errorf("seq 3: %T", ld.Events[3].Payload)
	}
	var ends int
	for _, e := range ld.Events {
		if _, ok := e.Payload.(StepEnd); ok {
			ends++
		}
	}
	if ends != 2 {
		t.Errorf("%d step/end payloads, want 2 (step/start's must not match)", ends)
	}
}

// TestLoadBadPayload: a whole event of a known type whose data is not its
// type's is corrupt, named by line, seq and type, wherever it is — last,
// without its newline, or mid-file; never skipped or repaired.
func TestLoadBadPayload(t *testing.T) {
	const header = `{"type":"session","version":1,"id":"s","createdAt":"2026-12-01T10:00:00Z","cwd":"/","delegationDepth":0}` + "\n"
	const good = `{"type":"turn/start","seq":0,"time":"2026-12-01T10:00:00Z","data":{"turn":0}}` + "\n"
	bad := `{"type":"turn/end","seq":1,"time":"2026-12-01T10:00:01Z","data":{"turn":"zero","reason":"completed"}}`
	for name, body := range map[string]string{
		"last":      header + good + bad + "\n",
		"unended":   header + good + bad,
		"mid-file":  header + good + bad + "\n" + `{"type":"turn/start","seq":2,"time":"2026-12-01T10:00:02Z","data":{"turn":1}}` + "\n",
		"not-array": header + good + `{"type":"turn/end","seq":1,"time":"2026-12-01T10:00:01Z","data":[1]}` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			var ce *CorruptError
			var pe *PayloadError
			if !errors.As(err, &ce) || !errors.As(err, &pe) {
				t.Fatalf("Load: %v, want a *CorruptError with a *PayloadError", err)
			}
			if ce.Line != 3 || pe.Seq != 1 || pe.Type != TypeTurnEnd {
				t.Errorf("line %d seq %d type %q", ce.Line, pe.Seq, pe.Type)
			}
			if msg := err.Error(); !strings.Contains(msg, "event 1 (turn/end)") || strings.Contains(msg, "zero") {
				t.Errorf("message %q: want seq and type, none of the data", msg)
			}
			if name == "unended" {
				return // a Tail does not read a line before its newline
			}
			tail := NewTail(path, true)
			if _, err := tail.Poll(); !errors.As(err, &pe) || pe.Seq != 1 {
				t.Errorf("Tail.Poll: %v, want the *PayloadError", err)
			}
			if len(tail.Events) != 1 {
				t.Errorf("tail kept %d events, want the one before", len(tail.Events))
			}
		})
	}
}

// TestAppendRefusesBadPayload: raw data of a known type that does not decode
// as its payload is refused, and nothing is written.
func TestAppendRefusesBadPayload(t *testing.T) {
	l, err := Create(t.TempDir(), Header{ID: "s"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var pe *PayloadError
	if _, err := l.Append(TypeTurnStart, map[string]any{"turn": "zero"}); !errors.As(err, &pe) || pe.Type != TypeTurnStart {
		t.Fatalf("Append: %v, want a *PayloadError", err)
	}
	e, err := l.Append(TypeTurnStart, []byte(`{"turn":3}`))
	if err == nil {
		t.Fatalf("Append of []byte (a base64 string): %+v, want an error", e)
	}
	if e, err = l.Append(TypeTurnStart, map[string]any{"turn": 3}); err != nil || e.Seq != 0 || e.Payload != (TurnStart{Turn: 3}) {
		t.Fatalf("Append: %+v, %v", e, err)
	}
	if e, err = l.Append("x/new", map[string]any{"a": 1}); err != nil || e.Payload != nil {
		t.Fatalf("Append of an unknown type: %+v, %v", e, err)
	}
}

// TestLivePayload: the writer's value is the payload when its encoding
// replaced nothing (no decoding), and the decoded data otherwise, so an
// observer sees what a reader of the log sees.
func TestLivePayload(t *testing.T) {
	ok := AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Delta: "héllo"}}
	bad := AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Delta: "h\xffllo"}}
	for _, tc := range []struct {
		name string
		data any
		want any
	}{
		{"value", ok, ok},
		{"pointer", &ok, ok},
		{"invalid UTF-8", bad, AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Delta: "h\ufffdllo"}}},
		{"step/end", StepEnd{Turn: 1, Step: 2}, StepEnd{Turn: 1, Step: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typ := TypeAssistantChunk
			if _, isEnd := tc.data.(StepEnd); isEnd {
				typ = TypeStepEnd
			}
			raw, err := marshalData(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			got, err := livePayload(typ, 0, tc.data, raw)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("livePayload = %#v, %v; want %#v", got, err, tc.want)
			}
			read, err := NewEvent(typ, 0, time.Time{}, raw)
			if err != nil || !reflect.DeepEqual(read.Payload, got) {
				t.Fatalf("read back %#v, %v; live %#v", read.Payload, err, got)
			}
		})
	}
}

// TestEventUnmarshalJSON: an event that crosses a wire as JSON (an engine's
// seed, a child's stream) arrives with its payload, and one whose data is
// not its type's is refused with a *PayloadError naming it.
func TestEventUnmarshalJSON(t *testing.T) {
	var evs []Event
	err := json.Unmarshal([]byte(`[{"type":"tool/call","seq":4,"time":"2026-12-01T10:00:00Z","data":{"callId":"c","name":"read"}},{"type":"x/new","seq":5,"time":"2026-12-01T10:00:00Z","data":[1]}]`), &evs)
	if err != nil {
		t.Fatal(err)
	}
	if evs[0].Payload != (ToolCall{CallID: "c", Name: "read"}) || evs[1].Payload != nil || string(evs[1].Data) != "[1]" {
		t.Errorf("events %+v", evs)
	}
	var e Event
	var pe *PayloadError
	if err := json.Unmarshal([]byte(`{"type":"tool/call","seq":9,"data":{"callId":7}}`), &e); !errors.As(err, &pe) || pe.Seq != 9 || pe.Type != TypeToolCall {
		t.Errorf("Unmarshal: %v, want a *PayloadError for seq 9", err)
	}
}
