package session

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// FileName is the name of the log inside a session directory.
const FileName = defaultSessionLogName

// Log appends events to one session's JSONL file. It is safe for concurrent
// use: parallel tool calls and child runs append through the same Log, and
// seq stays contiguous because numbering and writing happen under one lock.
//
// Appends are buffered; the agent loop flushes at every step end and turn
// end, and Close flushes. A process killed between flushes loses at most the
// events since the last flush, and the loader repairs what it left.
type Log struct {
	mu      sync.Mutex
	f       *os.File
	buf     []byte // appended lines not yet written (see writeLocked)
	werr    error  // the first write error: every later write fails with it
	header  Header
	path    string
	next    int64
	openTrn int // turn currently open, -1 if none
	lastTrn int // highest turn number seen
	closed  bool
	now     func() time.Time
	observe func(Header, Event)
}

// Options configure a new or reopened Log.
type Options struct {
	// Now returns the time stamped on events; time.Now when nil.
	Now func() time.Time
	// Observe, when set, is called with every appended event, under the
	// log's lock and in seq order. It must not block or call back into the Log.
	Observe func(Header, Event)
}

// NewID returns a new session id: a UTC timestamp prefix (so listings sort by
// age) and random hex.
//
// The id only has to be unique, not secret (Create refuses to reuse a
// directory), so it takes its randomness from math/rand/v2, which the
// runtime seeds: crypto/rand's first read sets up its generator, about a
// quarter of a millisecond of every reins run.
func NewID(now time.Time) string {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], rand.Uint32())
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// Create makes the directory root/<h.ID> and starts a new log in it,
// writing the header. h.Type and h.Version are filled in.
func Create(root string, h Header, opts Options) (*Log, error) {
	if h.ID == "" {
		return nil, errors.New("session: header has no id")
	}
	dir := filepath.Join(root, h.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("session: create %s: %w", dir, err)
	}
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("session: create log: %w", err)
	}
	h.Type, h.Version = headerType, FormatVersion
	l := newLog(f, path, h, 0, -1, -1, opts)
	line, err := json.Marshal(h)
	if err != nil {
		f.Close()
		return nil, err
	}
	l.buf = append(append(l.buf, line...), '\n')
	if err := l.flushLocked(); err != nil {
		f.Close()
		return nil, fmt.Errorf("session: write header: %w", err)
	}
	return l, nil
}

func newLog(f *os.File, path string, h Header, next int64, openTurn, lastTurn int, opts Options) *Log {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Log{
		f: f, header: h, path: path,
		next: next, openTrn: openTurn, lastTrn: lastTurn, now: now, observe: opts.Observe,
	}
}

// Reopen loads the log at path for appending more turns (reins run --resume).
// It repairs the file the way Load reports it: an incomplete last line is cut
// off and an unclosed last turn is closed with turn/end {interrupted}; those
// repairs are written so the file on disk agrees with what was loaded. A
// corrupt log (a seq gap, an unparsable line before the last) is refused.
func Reopen(path string, opts Options) (*Log, *Loaded, error) {
	ld, err := Load(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("session: reopen: %w", err)
	}
	if ld.Repair.DroppedBytes > 0 {
		if err := f.Truncate(ld.Repair.ValidSize); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("session: repair: %w", err)
		}
	}
	if _, err := f.Seek(0, 2); err != nil {
		f.Close()
		return nil, nil, err
	}
	// Events to write back: the last event if it lost its newline, and the
	// synthesized turn/end of an unclosed turn.
	var rewrite []Event
	n := len(ld.Events)
	if ld.Repair.ClosedTurn {
		n--
	}
	if ld.Repair.RewriteLast {
		rewrite = append(rewrite, ld.Events[n-1])
	}
	if ld.Repair.ClosedTurn {
		rewrite = append(rewrite, ld.Events[n])
	}
	last := -1
	for _, e := range ld.Events {
		if e.Type == TypeTurnStart {
			var ts TurnStart
			if e.Decode(&ts) == nil && ts.Turn > last {
				last = ts.Turn
			}
		}
	}
	l := newLog(f, path, ld.Header, int64(len(ld.Events)), -1, last, opts)
	for _, e := range rewrite {
		if err := l.writeLocked(e, false); err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	if err := l.Flush(); err != nil {
		f.Close()
		return nil, nil, err
	}
	return l, ld, nil
}

// Header returns the log's header.
func (l *Log) Header() Header { return l.header }

// Path returns the log file's path.
func (l *Log) Path() string { return l.path }

// Dir returns the session directory.
func (l *Log) Dir() string { return filepath.Dir(l.path) }

// NextTurn returns the number the next turn should carry.
func (l *Log) NextTurn() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastTrn + 1
}

// ErrClosed is returned by appends after Close.
var ErrClosed = errors.New("session: log is closed")

// Append writes one event of type typ with data marshalled to JSON, and
// returns it. It does not flush.
func (l *Log) Append(typ string, data any) (Event, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return Event{}, fmt.Errorf("session: marshal %s: %w", typ, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return Event{}, ErrClosed
	}
	e := Event{Type: typ, Seq: l.next, Time: l.now().UTC(), Data: raw}
	if err := l.writeLocked(e, true); err != nil {
		return Event{}, err
	}
	l.next++
	switch typ {
	case TypeTurnStart:
		ts, ok := data.(TurnStart)
		if !ok {
			_ = json.Unmarshal(raw, &ts)
		}
		l.openTrn = ts.Turn
		if ts.Turn > l.lastTrn {
			l.lastTrn = ts.Turn
		}
	case TypeTurnEnd:
		l.openTrn = -1
	}
	if l.observe != nil {
		l.observe(l.header, e)
	}
	return e, nil
}

// writeLocked appends e as one line to the buffer, writing the buffer out
// once it holds flushAt bytes. The buffer grows with what a step writes
// (a short child session never holds more than a few KiB, where a fixed
// bufio.Writer held 64 KiB each) and is reused, so an append allocates
// nothing here.
//
// fresh says e.Data came from json.Marshal (Append): compact and
// HTML-escaped already, so the line is built by hand instead of by
// json.Marshal(e), which would allocate it and scan e.Data again. The bytes
// are exactly what json.Marshal(e) writes (TestEventLineMatchesMarshal).
func (l *Log) writeLocked(e Event, fresh bool) error {
	if l.werr != nil {
		return fmt.Errorf("session: append: %w", l.werr)
	}
	if fresh {
		var err error
		if l.buf, err = appendEventLine(l.buf, e); err != nil {
			return err
		}
	} else {
		line, err := json.Marshal(e)
		if err != nil {
			return err
		}
		l.buf = append(append(l.buf, line...), '\n')
	}
	if len(l.buf) >= flushAt {
		if err := l.flushLocked(); err != nil {
			return fmt.Errorf("session: append: %w", err)
		}
	}
	return nil
}

// flushAt is how many buffered bytes force a write between flushes.
const flushAt = 64 << 10

// flushLocked writes the buffer to the file. A buffer grown past
// maxKeptBuf by one huge event is released rather than kept for the log's
// lifetime.
func (l *Log) flushLocked() error {
	if l.werr != nil {
		return l.werr
	}
	if len(l.buf) > 0 {
		n, err := l.f.Write(l.buf)
		if err != nil {
			l.werr = err
			l.buf = l.buf[n:]
			return err
		}
	}
	if cap(l.buf) > maxKeptBuf {
		l.buf = nil
	} else {
		l.buf = l.buf[:0]
	}
	return nil
}

// maxKeptBuf bounds the buffer a Log keeps between flushes.
const maxKeptBuf = 128 << 10

// appendEventLine appends e, whose Data is json.Marshal output, as JSON and
// a newline to b.
func appendEventLine(b []byte, e Event) ([]byte, error) {
	if !plainType(e.Type) || e.Time.Year() < 0 || e.Time.Year() > 9999 {
		// Not the shape Append makes: let encoding/json decide.
		line, err := json.Marshal(e)
		return append(append(b, line...), '\n'), err
	}
	b = append(b, `{"type":"`...)
	b = append(b, e.Type...)
	b = append(b, `","seq":`...)
	b = strconv.AppendInt(b, e.Seq, 10)
	b = append(b, `,"time":"`...)
	b = e.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","data":`...)
	if len(e.Data) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, e.Data...)
	}
	return append(b, "}\n"...), nil
}

// plainType reports whether an event type needs no JSON escaping.
func plainType(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '/' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// Flush writes buffered events to the file.
func (l *Log) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	return l.flushLocked()
}

// Close flushes and closes the file. It is idempotent.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	err := l.flushLocked()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}
