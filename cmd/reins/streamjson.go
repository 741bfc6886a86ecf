package main

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/session"
)

// streamLimit bounds the lines --stream-json holds for a slow reader.
const streamLimit = 4096

// eventLine is one line of `reins run --stream-json` (docs/events.md, "Live
// stream"): a session event of the run or of any descendant, placed in the
// tree.
type eventLine struct {
	Type            string          `json:"type"`
	SessionID       string          `json:"sessionId"`
	ParentSessionID string          `json:"parentSessionId"`
	Depth           int             `json:"depth"`
	Agent           string          `json:"agent"`
	Seq             int64           `json:"seq"`
	Time            time.Time       `json:"time"`
	Data            json.RawMessage `json:"data"`
}

// droppedLine says how many event lines a full queue cost: the stream
// never drops silently.
type droppedLine struct {
	Type  string `json:"type"` // "stream/dropped"
	Count int    `json:"count"`
}

// jsonStream writes the live event stream: observers (every session's
// log, every out-of-process child's tap) queue lines without blocking, one
// writer puts them on stdout in the order they were queued, and close
// writes the final --json object last. A full queue drops lines and says
// how many in a stream/dropped line.
type jsonStream struct {
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

func newJSONStream(w io.Writer, rootAgent string) *jsonStream {
	s := &jsonStream{w: w, rootAgent: rootAgent, q: make(chan []byte, streamLimit), done: make(chan struct{}), broken: make(chan struct{})}
	go s.run()
	return s
}

// observe queues one event; it is called under a session log's lock or on
// a child's reader goroutine, and never blocks.
func (s *jsonStream) observe(h session.Header, e session.Event) {
	agent := h.Agent
	if agent == "" && h.ParentSession == "" {
		agent = s.rootAgent
	}
	line, err := encodeLine(eventLine{
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

// encodeLine is v as one line, escaped as --json is (jsonSafe): text
// from models and children cannot drive a terminal.
func encodeLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(jsonSafe{&b})
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (s *jsonStream) run() {
	defer close(s.done)
	for line := range s.q {
		s.flushDropped()
		s.write(line)
	}
}

// flushDropped writes the stream/dropped line for lines lost since the last.
func (s *jsonStream) flushDropped() {
	s.mu.Lock()
	n := s.dropped
	s.dropped = 0
	s.mu.Unlock()
	if n > 0 {
		if line, err := encodeLine(droppedLine{Type: "stream/dropped", Count: n}); err == nil {
			s.write(line)
		}
	}
}

func (s *jsonStream) write(line []byte) {
	if s.err != nil {
		return
	}
	if _, s.err = s.w.Write(line); s.err != nil {
		close(s.broken)
	}
}

// close stops the stream once every queued line is written, then writes
// final — the --json object — as the last line (nil: none, a run that
// did not get that far). Only the first call writes.
func (s *jsonStream) close(final any) error {
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
	line, err := encodeLine(final)
	if err != nil {
		return err
	}
	s.write(line)
	return s.err
}

// runAgentName is the agent the root session runs as in the stream: the
// --agent definition, else "main" (the built-in agent of reins run).
func runAgentName(ag *config.Agent) string {
	if ag == nil {
		return "main"
	}
	return ag.Name
}

// streamResult is the last line of --stream-json (SPEC §12): the --json
// object with "type":"result" first, so a consumer that dispatches on
// type, as on every other line, finds it.
type streamResult struct {
	Type string `json:"type"`
	runResult
}
