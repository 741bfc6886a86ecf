package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTail(t *testing.T) {
	const (
		header = `{"type":"session","version":1,"id":"s","createdAt":"2026-01-01T00:00:00Z","cwd":"/w","delegationDepth":0}` + "\n"
		ev0    = `{"type":"turn/start","seq":0,"time":"2026-01-01T00:00:01Z","data":{"turn":0}}` + "\n"
		chunk1 = `{"type":"assistant/chunk","seq":1,"time":"2026-01-01T00:00:02Z","data":{}}` + "\n"
		ev2    = `{"type":"step/start","seq":2,"time":"2026-01-01T00:00:03Z","data":{"turn":0,"step":0}}` + "\n"
		gap    = `{"type":"step/start","seq":7,"time":"2026-01-01T00:00:03Z","data":{}}` + "\n"
	)
	type step struct {
		write   string // appended to the file before the poll
		replace bool   // the file is replaced by write instead
		changed bool
		events  int // kept
		next    int64
		corrupt bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"grows line by line", []step{
			{write: header[:20]},
			{write: header[20:], changed: true},
			{write: ev0[:10]},
			{write: ev0[10:], changed: true, events: 1, next: 1},
			{write: chunk1 + ev2, changed: true, events: 2, next: 3},
			{events: 2, next: 3},
		}},
		{"replaced", []step{
			{write: header + ev0 + chunk1, changed: true, events: 1, next: 2},
			{write: header, replace: true, changed: true, events: 0, next: 0},
			{write: ev0, changed: true, events: 1, next: 1},
		}},
		{"corrupt line keeps what came before", []step{
			{write: header + ev0 + "not json\n" + chunk1, changed: true, events: 1, next: 1, corrupt: true},
			{corrupt: true, events: 1, next: 1},
		}},
		{"seq gap", []step{
			{write: header + gap, changed: true, corrupt: true},
		}},
		{"not a header", []step{
			{write: ev0, corrupt: true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), FileName)
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			tl := NewTail(p, true)
			for i, s := range tt.steps {
				if s.replace {
					tmp := p + ".new"
					if err := os.WriteFile(tmp, []byte(s.write), 0o644); err != nil {
						t.Fatal(err)
					}
					if err := os.Rename(tmp, p); err != nil {
						t.Fatal(err)
					}
				} else if s.write != "" {
					f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
					if err != nil {
						t.Fatal(err)
					}
					f.WriteString(s.write)
					f.Close()
				}
				changed, err := tl.Poll()
				var ce *CorruptError
				if s.corrupt != errors.As(err, &ce) {
					t.Fatalf("step %d: err %v, corrupt %v", i, err, s.corrupt)
				}
				if changed != s.changed || len(tl.Events) != s.events || tl.Next != s.next {
					t.Fatalf("step %d: changed %v events %d next %d, want %v %d %d", i, changed, len(tl.Events), tl.Next, s.changed, s.events, s.next)
				}
			}
		})
	}
}

// TestTailLongLine: a line longer than one read chunk is read whole.
func TestTailLongLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), FileName)
	big := strings.Repeat("x", tailChunk+10)
	body := `{"type":"session","version":1,"id":"s","createdAt":"2026-01-01T00:00:00Z","cwd":"/w","delegationDepth":0}` + "\n" +
		`{"type":"tool/result","seq":0,"time":"2026-01-01T00:00:01Z","data":{"content":"` + big + `"}}` + "\n" +
		`{"type":"turn/end","seq":1,"time":"2026-01-01T00:00:01Z","data":{}}` + "\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	tl := NewTail(p, false)
	if _, err := tl.Poll(); err != nil || len(tl.Events) != 2 {
		t.Fatalf("%v, %d events", err, len(tl.Events))
	}
}
