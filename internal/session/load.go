package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/reinsdev/reins/internal/smallfile"
)

// Loaded is a session log as read, after repair.
type Loaded struct {
	Header Header
	Events []Event
	Repair Repair
}

// Repair says what the loader had to mend. Nothing complete is ever dropped:
// only an incomplete last line, which a crash mid-write leaves behind.
type Repair struct {
	// DroppedBytes is the size of an incomplete last line that was dropped.
	DroppedBytes int64
	// ValidSize is the byte length of the file up to the dropped line.
	ValidSize int64
	// RewriteLast is true when the last complete event had lost only its
	// newline; it is kept, and counted in DroppedBytes so Reopen rewrites it.
	RewriteLast bool
	// ClosedTurn is true when the last turn had no turn/end and one with
	// reason interrupted was appended (as the last of Events).
	ClosedTurn bool
}

// Repaired reports whether anything was mended.
func (r Repair) Repaired() bool { return r.DroppedBytes > 0 || r.ClosedTurn }

// CorruptError reports damage the loader must not repair silently: a line
// that is not an event before the end of the file, a seq gap, or an event
// of a known type whose data does not decode as its payload.
type CorruptError struct {
	Path   string
	Line   int // 1-based
	Reason string
	// Err is the cause when there is one: a *PayloadError for an event
	// whose data does not decode as its type's payload.
	Err error
}

func (e *CorruptError) Unwrap() error { return e.Err }

func (e *CorruptError) Error() string {
	p := e.Path
	if p == "" {
		p = "session log"
	}
	return fmt.Sprintf("%s:%d: corrupt session log: %s", p, e.Line, e.Reason)
}

// Load reads and repairs the log at path. The file is not modified.
//
// Only a regular file is read (a log symlinked to /dev/zero or a FIFO is
// refused by name, not read until memory runs out), and no line may be
// longer than 64 MiB: a longer one is a *CorruptError ("line too long"),
// found with at most that much of it in memory.
func Load(path string) (*Loaded, error) {
	f, err := smallfile.Open(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ld, err := Read(f)
	var ce *CorruptError
	if errors.As(err, &ce) {
		ce.Path = path
	}
	return ld, err
}

// Read reads and repairs a log from r.
func Read(r io.Reader) (*Loaded, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	ld := &Loaded{}
	var (
		offset   int64
		lineNo   int
		openTurn = -1
	)
	for {
		line, long, err := readLine(br, maxLineBytes)
		if err != nil && err != io.EOF {
			return nil, err
		}
		if len(line) == 0 && long == 0 {
			break
		}
		lineNo++
		if long > 0 {
			if err == io.EOF {
				// A crash tail can be long too: dropped like a short one.
				ld.Repair.DroppedBytes = long
				break
			}
			return nil, &CorruptError{Line: lineNo, Reason: "line too long"}
		}
		complete := line[len(line)-1] == '\n'
		body := bytes.TrimRight(line, "\r\n")
		if lineNo == 1 {
			// A header without its newline is incomplete even when it
			// parses: appending after it would glue the first event to it.
			if !complete {
				return nil, &CorruptError{Line: 1, Reason: "incomplete header"}
			}
			if err := json.Unmarshal(body, &ld.Header); err != nil || ld.Header.Type != headerType {
				return nil, &CorruptError{Line: 1, Reason: "first line is not a session header"}
			}
			offset += int64(len(line))
			continue
		}
		e, jerr := readEvent(body)
		if pe := (*PayloadError)(nil); errors.As(jerr, &pe) {
			// A whole event whose data is not its type's: damage, not a
			// crash's cut (which leaves no whole event), so not repaired.
			return nil, &CorruptError{Line: lineNo, Reason: pe.Error(), Err: pe}
		}
		if jerr != nil || e.Type == "" {
			if !complete {
				// A crash mid-write: the tail that never got its newline.
				ld.Repair.DroppedBytes = int64(len(line))
				break
			}
			return nil, &CorruptError{Line: lineNo, Reason: "line is not an event"}
		}
		if want := int64(len(ld.Events)); e.Seq != want {
			return nil, &CorruptError{Line: lineNo, Reason: fmt.Sprintf("seq %d where %d was expected (gap)", e.Seq, want)}
		}
		offset += int64(len(line))
		ld.Events = append(ld.Events, e)
		switch d := e.Payload.(type) {
		case TurnStart:
			openTurn = d.Turn
		case TurnEnd:
			openTurn = -1
		}
		if !complete {
			// A complete event that lost only its newline: keep it; Reopen
			// rewrites it whole so the next append starts on a fresh line.
			ld.Repair.ValidSize = offset - int64(len(line))
			ld.Repair.DroppedBytes = int64(len(line))
			ld.Repair.RewriteLast = true
			closeTurn(ld, openTurn)
			return ld, nil
		}
		if err == io.EOF {
			break
		}
	}
	if lineNo == 0 {
		return nil, &CorruptError{Line: 1, Reason: "empty file"}
	}
	ld.Repair.ValidSize = offset
	closeTurn(ld, openTurn)
	return ld, nil
}

// readLine reads one line with its '\n' (none at the end of the input).
// A line longer than limit is not kept: it is read through to its end and
// only its length is returned (long > 0), so memory stays within max
// whatever the file holds.
func readLine(br *bufio.Reader, limit int) (line []byte, long int64, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		if long > 0 {
			long += int64(len(frag))
		} else if len(line)+len(frag) > limit {
			long = int64(len(line) + len(frag))
			line = nil
		} else {
			if need := len(line) + len(frag); need > cap(line) {
				// Doubling, not append's gentler growth past 256 bytes:
				// a line near the limit costs about twice the limit in
				// all, not four times.
				grown := make([]byte, len(line), min(limit, max(need, 2*cap(line))))
				copy(grown, line)
				line = grown
			}
			line = append(line, frag...)
		}
		if err != bufio.ErrBufferFull {
			return line, long, err
		}
	}
}

// closeTurn appends the synthesized turn/end of an unclosed last turn.
func closeTurn(ld *Loaded, openTurn int) {
	if openTurn < 0 {
		return
	}
	end := TurnEnd{Turn: openTurn, Reason: ReasonInterrupted}
	raw, _ := json.Marshal(end)
	var t time.Time
	if n := len(ld.Events); n > 0 {
		t = ld.Events[n-1].Time
	}
	ld.Events = append(ld.Events, Event{Type: TypeTurnEnd, Seq: int64(len(ld.Events)), Time: t, Data: raw, Payload: end})
	ld.Repair.ClosedTurn = true
}
