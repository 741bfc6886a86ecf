package session

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
)

// ev builds an event of typ with seq and data, as the log would hold it.
func ev(t *testing.T, seq int64, typ string, data any) Event {
	t.Helper()
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEvent(typ, seq, time.Time{}, b)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func userMsg(s string) UserMessage {
	return UserMessage{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: s}}}}
}

func textsOf(h []llm.Message) []string {
	var out []string
	for _, m := range h {
		s := m.Text()
		if IsSummary(m) {
			s = "S:" + s[strings.LastIndex(s, "\n")+1:]
		}
		out = append(out, s)
	}
	return out
}

func TestHistoryHonoursCompaction(t *testing.T) {
	compacted := func(from, to int64, summary string) ContextCompacted {
		return ContextCompacted{Summary: summary, Replaces: SeqRange{from, to}}
	}
	tests := []struct {
		name   string
		events func(t *testing.T) []Event
		want   string
		err    bool
	}{
		{"no compaction", func(t *testing.T) []Event {
			return []Event{ev(t, 1, TypeUserMessage, userMsg("a")), ev(t, 2, TypeUserMessage, userMsg("b"))}
		}, "a b", false},
		{"one compaction, in place", func(t *testing.T) []Event {
			return []Event{
				ev(t, 1, TypeUserMessage, userMsg("first")),
				ev(t, 2, TypeUserMessage, userMsg("old1")),
				ev(t, 3, TypeTurnStart, TurnStart{}),
				ev(t, 4, TypeUserMessage, userMsg("old2")),
				ev(t, 5, TypeUserMessage, userMsg("recent")),
				ev(t, 6, TypeContextCompacted, compacted(2, 4, "one")),
				ev(t, 7, TypeUserMessage, userMsg("after")),
			}
		}, "first S:one recent after", false},
		{"a second compaction replaces the first summary", func(t *testing.T) []Event {
			return []Event{
				ev(t, 1, TypeUserMessage, userMsg("first")),
				ev(t, 2, TypeUserMessage, userMsg("old1")),
				ev(t, 3, TypeUserMessage, userMsg("old2")),
				ev(t, 4, TypeContextCompacted, compacted(2, 2, "one")),
				ev(t, 5, TypeUserMessage, userMsg("mid")),
				ev(t, 6, TypeUserMessage, userMsg("recent")),
				ev(t, 7, TypeContextCompacted, compacted(2, 5, "two")),
			}
		}, "first S:two recent", false},
		{"a range that holds no message changes nothing", func(t *testing.T) []Event {
			return []Event{
				ev(t, 1, TypeUserMessage, userMsg("first")),
				ev(t, 2, TypeTurnStart, TurnStart{}),
				ev(t, 3, TypeContextCompacted, compacted(2, 2, "x")),
			}
		}, "first", false},
		{"a range reaching the event itself is refused", func(t *testing.T) []Event {
			return []Event{ev(t, 1, TypeUserMessage, userMsg("a")), ev(t, 2, TypeContextCompacted, compacted(1, 2, "x"))}
		}, "", true},
		{"a reversed range is refused", func(t *testing.T) []Event {
			return []Event{ev(t, 1, TypeUserMessage, userMsg("a")), ev(t, 3, TypeContextCompacted, compacted(2, 1, "x"))}
		}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := History(tt.events(t))
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if got := strings.Join(textsOf(h), " "); !tt.err && got != tt.want {
				t.Fatalf("history = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCompactedRoundTrip writes a compaction through the real log and
// loads it back, as --resume does.
func TestCompactedRoundTrip(t *testing.T) {
	l := newTestLog(t)
	e1, _ := l.Append(TypeUserMessage, userMsg("first"))
	e2, _ := l.Append(TypeUserMessage, userMsg("old"))
	l.Append(TypeUserMessage, userMsg("recent"))
	l.Append(TypeContextCompacted, ContextCompacted{Turn: 1, Summary: "sum", Replaces: SeqRange{e2.Seq, e2.Seq}, Reason: CompactThreshold})
	l.Close()
	ld, err := Load(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	es, err := HistoryEntries(ld.Events)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(textsOf([]llm.Message{es[0].Message, es[1].Message, es[2].Message}), " "); got != "first S:sum recent" || len(es) != 3 {
		t.Fatalf("history = %q (%d entries)", got, len(es))
	}
	if es[0].Seq != e1.Seq || es[1].Seq != e2.Seq {
		t.Fatalf("positions = %d %d, want %d %d", es[0].Seq, es[1].Seq, e1.Seq, e2.Seq)
	}
}
