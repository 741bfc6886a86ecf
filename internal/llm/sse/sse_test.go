package sse

import (
	"bufio"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	gosse "github.com/tmaxmax/go-sse"
)

type ev struct{ Type, Data string }

// readAll reads every event, handing the reader at most step bytes per
// Read (0: as much as asked).
func readAll(t *testing.T, in string, step, max int) ([]ev, error) {
	t.Helper()
	r := NewReader(&choppy{s: in, step: step}, max)
	var out []ev
	for {
		e, err := r.Next()
		if err != nil {
			if _, err2 := r.Next(); err2 != err {
				t.Errorf("error not sticky: %v then %v", err, err2)
			}
			return out, err
		}
		out = append(out, ev{e.Type, string(e.Data)})
	}
}

type choppy struct {
	s    string
	step int
	err  error // returned once s is drained (nil: io.EOF)
}

func (c *choppy) Read(p []byte) (int, error) {
	if c.s == "" {
		if c.err != nil {
			return 0, c.err
		}
		return 0, io.EOF
	}
	if c.step > 0 && len(p) > c.step {
		p = p[:c.step]
	}
	n := copy(p, c.s)
	c.s = c.s[n:]
	return n, nil
}

func TestFraming(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []ev
	}{
		{"openai", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []ev{{"", `{"a":1}`}, {"", "[DONE]"}}},
		{"named", "event: ping\ndata: {}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
			[]ev{{"ping", "{}"}, {"message_stop", `{"type":"message_stop"}`}}},
		{"crlf", "data: a\r\n\r\ndata: b\r\rdata: c\n\n", []ev{{"", "a"}, {"", "b"}, {"", "c"}}},
		{"multi-line data", "data: a\ndata:b\ndata:  c\n\n", []ev{{"", "a\nb\n c"}}},
		{"comments and keep-alives", ": keep-alive\n\n:x\ndata: a\n: mid\n\n", []ev{{"", "a"}}},
		{"bom", "\xEF\xBB\xBFdata: a\n\n", []ev{{"", "a"}}},
		{"bom only first", "data: a\n\n\xEF\xBB\xBFdata: b\n\n", []ev{{"", "a"}}},
		{"field without colon", "data\n\n", []ev{{"", ""}}},
		{"named without data", "event: x\n\n", []ev{{"x", ""}}},
		{"id only", "id: 7\n\n", []ev{{"", ""}}},
		{"retry only", "retry: 10\n\n", nil},
		{"unknown field", "foo: bar\n\n", nil},
		{"type resets", "event: a\ndata: 1\n\ndata: 2\n\n", []ev{{"a", "1"}, {"", "2"}}},
		{"pending at eof", "data: a\n\ndata: b\n", []ev{{"", "a"}}},
		{"unterminated line", "data: a\n\ndata: b", []ev{{"", "a"}}},
		{"blank lines", "\n\n\r\n", nil},
		{"empty", "", nil},
	} {
		for _, step := range []int{0, 1, 2, 3, 7} {
			got, err := readAll(t, tc.in, step, 0)
			if err != io.EOF {
				t.Errorf("%s/step %d: err = %v, want io.EOF", tc.name, step, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s/step %d: events (-want +got):\n%s", tc.name, step, diff)
			}
		}
	}
}

func TestReadError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(&choppy{s: "data: a\n\ndata: b\n", step: 3, err: boom}, 0)
	e, err := r.Next()
	if err != nil || string(e.Data) != "a" {
		t.Fatalf("first event = %q, %v", e.Data, err)
	}
	if _, err := r.Next(); err != boom {
		t.Fatalf("err = %v, want the read error", err)
	}
	r = NewReader(&choppy{s: "data: a", err: io.ErrUnexpectedEOF}, 0)
	if _, err := r.Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestTooLong(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tc := range []struct {
		in      string
		max     int
		wantErr error
		n       int
	}{
		{"data: " + long + "\n\n", 200, io.EOF, 1},
		{"data: " + long + "\n\n", 50, bufio.ErrTooLong, 0},
		{"data: " + long, 50, bufio.ErrTooLong, 0}, // an unterminated line is bounded too
		{"data: " + long[:40] + "\ndata: " + long[:40] + "\n\n", 60, bufio.ErrTooLong, 0},
		// The limit is per event: many events under it pass.
		{strings.Repeat("data: "+long[:40]+"\n\n", 50), 60, io.EOF, 50},
	} {
		for _, step := range []int{0, 1, 16} {
			got, err := readAll(t, tc.in, step, tc.max)
			if err != tc.wantErr || len(got) != tc.n {
				t.Errorf("max %d step %d: %d events, err %v; want %d, %v", tc.max, step, len(got), err, tc.n, tc.wantErr)
			}
		}
	}
}

type stuck struct{}

func (stuck) Read([]byte) (int, error) { return 0, nil }

func TestNoProgress(t *testing.T) {
	if _, err := NewReader(stuck{}, 0).Next(); err != io.ErrNoProgress {
		t.Fatalf("err = %v, want io.ErrNoProgress", err)
	}
}

// TestMatchesGoSSE compares the framing with the general-purpose go-sse
// reader the adapters used before, over random streams built from the
// pieces real and hostile servers send.
func TestMatchesGoSSE(t *testing.T) {
	pieces := []string{
		"data: x", "data:y", "data:  z", "data", "data: [DONE]", "event: e", "event:", "event: message_stop",
		": keep-alive", ":", "id: 1", "id", "retry: 5", "retry: x", "foo: bar", "dat", "", "\xEF\xBB\xBF",
		`data: {"a":"b"}`, "data: é ü",
	}
	ends := []string{"\n", "\r", "\r\n", "\n\n", "\r\n\r\n"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
			b.WriteString(ends[rng.IntN(len(ends))])
		}
		if rng.IntN(4) == 0 {
			b.WriteString(pieces[rng.IntN(len(pieces))]) // an unterminated tail
		}
		in := b.String()
		var want []ev
		for e, err := range gosse.Read(strings.NewReader(in), nil) {
			if err != nil {
				t.Fatalf("go-sse: %v", err)
			}
			want = append(want, ev{e.Type, e.Data})
		}
		got, err := readAll(t, in, 1+i%5, 0)
		if err != io.EOF {
			t.Fatalf("%q: err = %v", in, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%q: events differ from go-sse (-go-sse +sse):\n%s", in, diff)
		}
	}
}
