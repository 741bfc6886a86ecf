// Package sse frames a text/event-stream body into events for the
// adapters. It exists for speed: it hands out each event's data as a byte
// slice into a reused buffer (zero allocations per event in the steady
// state), where a general SSE client allocates a string per event and a
// token per line. Only what the adapters need is kept: the event name and
// its data; ids and retry fields are read and dropped.
//
// Framing follows the WHATWG event-stream rules, with the choices reins's
// adapters were built on:
//   - a line ends at "\n", "\r" or "\r\n"; a leading UTF-8 BOM is dropped;
//   - a line starting with ":" is a comment (keep-alives) and is ignored;
//   - "field: value" drops one space after the colon; a line without a
//     colon is a field with an empty value;
//   - an event is dispatched at a blank line when any data, event or id
//     field was seen since the last one (so a named event without data is
//     dispatched with empty data, which the adapters judge);
//   - the end of input never dispatches a pending event or an unterminated
//     last line: the stream was cut, and the caller decides what that means.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Event is one dispatched event.
type Event struct {
	// Type is the event field ("" when the event named none).
	Type string
	// Data is the data lines joined by "\n". It aliases the Reader's
	// buffer and is valid only until the next call of Next.
	Data []byte
}

const (
	initialBuf = 4 << 10
	// readChunk is the most a buffer grows to for throughput alone; past
	// it, it grows only to hold one long line.
	readChunk = 64 << 10
)

// Reader reads events from an event stream. It is not safe for concurrent
// use.
type Reader struct {
	r    io.Reader
	max  int
	buf  []byte
	pos  int // start of the unread bytes in buf
	end  int // end of the valid bytes in buf
	err  error
	data []byte

	typ      string
	lastType string // the previous event's type, reused to avoid a copy
	dirty    bool
	size     int  // bytes of the current event's lines so far
	started  bool // the first line (and its BOM) has been seen
	skipLF   bool // the last line ended in "\r": a following "\n" belongs to it
	finished bool
}

// NewReader returns a Reader of r whose events may be at most maxEvent
// bytes (<= 0: no limit). A longer event (its lines, terminators
// included) is bufio.ErrTooLong, so callers written against a
// bufio-based reader keep working.
func NewReader(r io.Reader, maxEvent int) *Reader {
	return &Reader{r: r, max: maxEvent}
}

// Next returns the next event. At the end of the input it returns io.EOF,
// whether or not an event was pending; a read error is returned as it came
// once the events completed before it have been returned; an event over
// the limit is bufio.ErrTooLong. After an error every call returns it again.
func (r *Reader) Next() (Event, error) {
	if r.finished {
		return Event{}, r.err
	}
	for {
		line, ok := r.line()
		if !ok {
			r.finished = true
			return Event{}, r.err
		}
		if len(line) == 0 {
			r.size = 0
			if !r.dirty {
				continue
			}
			ev := Event{Type: r.typ, Data: r.data}
			if n := len(ev.Data); n > 0 {
				ev.Data = ev.Data[:n-1] // the last line's "\n"
			}
			r.data, r.typ, r.dirty = r.data[:0], "", false
			return ev, nil
		}
		r.field(line)
	}
}

// field applies one non-blank line.
func (r *Reader) field(line []byte) {
	if line[0] == ':' {
		return // a comment
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) { // no allocation: the compiler compares in place
	case "data":
		r.data = append(r.data, value...)
		r.data = append(r.data, '\n')
		r.dirty = true
	case "event":
		if string(value) != r.lastType {
			r.lastType = string(value)
		}
		r.typ = r.lastType
		r.dirty = true
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.dirty = true
		}
	}
}

// line returns the next complete line without its terminator; false at the
// end of input or on an error (r.err is set: io.EOF, a read error or
// bufio.ErrTooLong).
func (r *Reader) line() ([]byte, bool) {
	scanned := 0 // bytes of the pending line already searched
	for {
		if r.skipLF && r.pos < r.end {
			if r.buf[r.pos] == '\n' {
				r.pos++
			}
			r.skipLF = false
		}
		if !r.skipLF {
			win := r.buf[r.pos+scanned : r.end]
			if i := lineEnd(win); i >= 0 {
				i += r.pos + scanned
				line := r.buf[r.pos:i]
				if r.buf[i] == '\r' {
					r.skipLF = true
				}
				r.pos = i + 1
				if len(line) > 0 {
					r.size += len(line) + 1
					if r.max > 0 && r.size > r.max {
						r.err = bufio.ErrTooLong
						return nil, false
					}
				}
				if !r.started {
					r.started = true
					line = bytes.TrimPrefix(line, bom)
				}
				return line, true
			}
			scanned = r.end - r.pos
			if r.max > 0 && r.size+scanned > r.max {
				r.err = bufio.ErrTooLong
				return nil, false
			}
		}
		if r.err != nil {
			return nil, false
		}
		r.fill()
	}
}

var bom = []byte("\xEF\xBB\xBF")

// lineEnd is the index of the first "\r" or "\n" in b, or -1: two
// vectorised byte searches, faster than bytes.IndexAny.
func lineEnd(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	lim := b
	if i >= 0 {
		lim = b[:i]
	}
	if j := bytes.IndexByte(lim, '\r'); j >= 0 {
		return j
	}
	return i
}

// fill reads more bytes, moving the unread ones to the front or growing
// the buffer first when it is full.
func (r *Reader) fill() {
	if r.pos > 0 {
		n := copy(r.buf, r.buf[r.pos:r.end])
		r.pos, r.end = 0, n
	}
	if r.end == len(r.buf) {
		size := 2 * len(r.buf)
		if size < initialBuf {
			size = initialBuf
		}
		nb := make([]byte, size)
		copy(nb, r.buf[:r.end])
		r.buf = nb
	}
	for range 100 {
		n, err := r.r.Read(r.buf[r.end:])
		if n < 0 || n > len(r.buf)-r.end {
			r.err = errors.New("sse: reader returned an invalid count")
			return
		}
		r.end += n
		if err != nil {
			r.err = err
			return
		}
		if n > 0 {
			// A reader that filled the buffer has more: let the buffer grow
			// for fewer, larger reads (bounded by readChunk).
			if r.end == len(r.buf) && len(r.buf) < readChunk {
				nb := make([]byte, 2*len(r.buf))
				copy(nb, r.buf[:r.end])
				r.buf = nb
			}
			return
		}
	}
	r.err = io.ErrNoProgress
}
