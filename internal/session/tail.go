package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/reinsdev/reins/internal/smallfile"
	"io"
	"os"
)

// Tail reads a session log that may still be growing (reins view follows a
// running session with it): each Poll adds the events of the complete lines
// written since the last one. Unlike Load it repairs nothing, because a
// live session is not broken: its open turn stays open and a half-written
// last line is simply not read yet. A file that shrank or was replaced is
// read again from the start.
//
// A Tail is not safe for concurrent use.
type Tail struct {
	path   string
	fi     os.FileInfo // the file read so far, to notice a replacement
	off    int64       // bytes of complete lines consumed
	lineNo int

	// Header is the log's header, zero until its line is complete.
	Header Header
	// Events are the events read so far, in seq order, without the
	// assistant/chunk events when SkipChunks was set (they are counted).
	Events []Event
	// Next is the seq the next event must carry.
	Next int64
	// SkipChunks drops assistant/chunk events, the bulk of a log, for
	// readers that show assembled messages only.
	SkipChunks bool
}

// tailChunk bounds what one Poll reads, so a huge log is taken in steps
// and the memory of one read stays bounded.
const tailChunk = 8 << 20

// NewTail returns a Tail of the log at path; nothing is read until Poll.
func NewTail(path string, skipChunks bool) *Tail {
	return &Tail{path: path, SkipChunks: skipChunks}
}

// Path returns the log file's path.
func (t *Tail) Path() string { return t.path }

// Offset is the byte length of the complete lines read so far: it grows
// with every event, so a reader can tell a changed log by it.
func (t *Tail) Offset() int64 { return t.off }

// Poll reads what was appended since the last Poll and reports whether
// anything new (or a restart from scratch) was read. A corrupt line is a
// *CorruptError, as for Load; the events before it are kept.
func (t *Tail) Poll() (changed bool, err error) {
	f, err := smallfile.Open(t.path, os.O_RDONLY)
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if t.fi != nil && (!os.SameFile(t.fi, fi) || fi.Size() < t.off) {
		// Replaced or truncated: what was read no longer describes it.
		*t = Tail{path: t.path, SkipChunks: t.SkipChunks}
		changed = true
	}
	t.fi = fi
	for t.off < fi.Size() {
		left := fi.Size() - t.off
		n := min(left, tailChunk)
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, t.off); err != nil && !errors.Is(err, io.EOF) {
			return changed, err
		}
		end := bytes.LastIndexByte(buf, '\n')
		if end < 0 && n < left {
			// One line longer than a chunk: read up to the longest line
			// a log may hold.
			buf = make([]byte, min(left, maxLineBytes+1))
			if _, err := f.ReadAt(buf, t.off); err != nil && !errors.Is(err, io.EOF) {
				return changed, err
			}
			if end = bytes.IndexByte(buf, '\n'); end < 0 && len(buf) > maxLineBytes {
				return changed, &CorruptError{Path: t.path, Line: t.lineNo + 1, Reason: "line too long"}
			}
		}
		if end < 0 {
			break // the last line is not complete yet
		}
		for _, line := range bytes.SplitAfter(buf[:end+1], []byte{'\n'}) {
			if len(line) == 0 {
				continue
			}
			if err := t.line(bytes.TrimRight(line, "\r\n")); err != nil {
				return changed, err
			}
			t.off += int64(len(line))
			changed = true
		}
	}
	return changed, nil
}

func (t *Tail) line(body []byte) error {
	no := t.lineNo + 1
	if no == 1 {
		var h Header
		if err := json.Unmarshal(body, &h); err != nil || h.Type != headerType {
			return &CorruptError{Path: t.path, Line: 1, Reason: "first line is not a session header"}
		}
		t.Header, t.lineNo = h, no
		return nil
	}
	e, err := readEvent(body)
	if pe := (*PayloadError)(nil); errors.As(err, &pe) {
		return &CorruptError{Path: t.path, Line: no, Reason: pe.Error(), Err: pe}
	}
	if err != nil || e.Type == "" {
		return &CorruptError{Path: t.path, Line: no, Reason: "line is not an event"}
	}
	if e.Seq != t.Next {
		return &CorruptError{Path: t.path, Line: no, Reason: fmt.Sprintf("seq %d where %d was expected (gap)", e.Seq, t.Next)}
	}
	t.lineNo = no
	t.Next++
	if !(t.SkipChunks && e.Type == TypeAssistantChunk) {
		t.Events = append(t.Events, e)
	}
	return nil
}
