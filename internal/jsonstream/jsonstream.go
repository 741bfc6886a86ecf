// Package jsonstream is the live event stream of `reins run
// --stream-json` (docs/events.md, "Live stream"): every session event of
// the run and of its descendants as one JSON line placed in the tree, then
// the --json object last. Observers never block: a reader that stops
// reading costs lines, and a stream/dropped line says how many.
package jsonstream

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/termsafe"
)

// Limit bounds the lines a Stream holds for a slow reader.
const Limit = 4096

// Line is one line of `reins run --stream-json` (docs/events.md, "Live
// stream"): a session event of the run or of any descendant, placed in the
// tree.
type Line struct {
	Type            string          `json:"type"`
	SessionID       string          `json:"sessionId"`
	ParentSessionID string          `json:"parentSessionId"`
	Depth           int             `json:"depth"`
	Agent           string          `json:"agent"`
	Seq             int64           `json:"seq"`
	Time            time.Time       `json:"time"`
	Data            json.RawMessage `json:"data"`
}

// Dropped is the line that says how many event lines a full queue cost:
// the stream never drops silently.
type Dropped struct {
	Type  string `json:"type"` // "stream/dropped"
	Count int    `json:"count"`
}

// Stream writes the live event stream: observers (every session's log,
// every out-of-process child's tap) queue lines without blocking, one
// writer puts them on stdout in the order they were queued, and Close
// writes the final --json object last. A full queue drops lines and says
// how many in a stream/dropped line.
type Stream struct {
	w         io.Writer
	rootAgent string
	q         chan []byte
	done      chan struct{}
	// broken is closed at the first failed write: the reader went away
	// (`| head -1`), and the run it streams ends as an abort.
	broken chan struct{}

	mu      sync.Mutex
	closed  bool
	dropped int
	err     error
}

// New starts the stream's writer on w; rootAgent names the agent of the
// root session, whose header names none. Close ends the writer.
func New(w io.Writer, rootAgent string) *Stream {
	s := &Stream{w: w, rootAgent: rootAgent, q: make(chan []byte, Limit), done: make(chan struct{}), broken: make(chan struct{})}
	go s.run()
	return s
}

// Broken is closed at the first failed write: the reader went away.
func (s *Stream) Broken() <-chan struct{} { return s.broken }

// Observe queues one event; it is called under a session log's lock or on
// a child's reader goroutine, and never blocks.
func (s *Stream) Observe(h session.Header, e session.Event) {
	agent := h.Agent
	if agent == "" && h.ParentSession == "" {
		agent = s.rootAgent
	}
	line, err := Encode(Line{
		Type: e.Type, SessionID: h.ID, ParentSessionID: h.ParentSession, Depth: h.DelegationDepth,
		Agent: agent, Seq: e.Seq, Time: e.Time, Data: e.Data,
	})
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	select {
	case s.q <- line:
	default:
		s.dropped++
	}
}

// Encode is v as one line, escaped as --json is (termsafe.JSONWriter):
// text from models and children cannot drive a terminal.
func Encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(termsafe.JSONWriter{W: &b})
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (s *Stream) run() {
	defer close(s.done)
	for line := range s.q {
		s.flushDropped()
		s.write(line)
	}
}

// flushDropped writes the stream/dropped line for lines lost since the last.
func (s *Stream) flushDropped() {
	s.mu.Lock()
	n := s.dropped
	s.dropped = 0
	s.mu.Unlock()
	if n > 0 {
		if line, err := Encode(Dropped{Type: "stream/dropped", Count: n}); err == nil {
			s.write(line)
		}
	}
}

func (s *Stream) write(line []byte) {
	if s.err != nil {
		return
	}
	if _, s.err = s.w.Write(line); s.err != nil {
		close(s.broken)
	}
}

// Close stops the stream once every queued line is written, then writes
// final — the --json object — as the last line (nil: none, a run that
// did not get that far). Only the first call writes.
func (s *Stream) Close(final any) error {
	s.mu.Lock()
	first := !s.closed
	if first {
		s.closed = true
		close(s.q)
	}
	s.mu.Unlock()
	<-s.done
	if !first {
		return nil
	}
	s.flushDropped()
	if final == nil {
		return s.err
	}
	line, err := Encode(final)
	if err != nil {
		return err
	}
	s.write(line)
	return s.err
}
