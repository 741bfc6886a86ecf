package session

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/reinsdev/reins/internal/private"
	"github.com/reinsdev/reins/internal/smallfile"
	"io"
	"math"
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
// # Durability
//
// The log is written ahead of what it records, because a crash must never
// leave the world ahead of the log:
//
//   - Append buffers. Whatever is buffered is written out (one write(2) of
//     whole lines, on an O_APPEND descriptor) within CommitDelay of the first
//     buffered event, or as soon as FlushAt bytes are buffered, whichever
//     comes first: streamed chunks are group-committed, never more than
//     about 250 ms or 64 KiB behind the stream.
//   - Flush writes the buffer now. The loop calls it before every model
//     request, so turn/start, user/message, delivered notices and
//     step/start are in the file before the request is sent.
//   - Sync writes the buffer and fsyncs the file. The loop calls it before a
//     tool runs (its effects can outlive a crash, so its tool/call must
//     survive one too) and after turn/end, before the turn's outcome is
//     reported anywhere; Reopen syncs its repair, and Close syncs. Each
//     fsync is skipped when nothing was written since the last, and the
//     first also fsyncs the session directory, so a new file's entry is
//     as durable as its events. Written-but-not-synced events survive a
//     killed process (they are in the page cache); only a power loss or
//     kernel crash can take the events since the last Sync, and the
//     loader repairs what it leaves.
//     fsync is not paid per chunk or per step start: see BENCHMARKS.md for
//     what each costs.
//
// Every write error is kept: the first one fails every later Append, Flush
// and Sync, so a caller cannot go on as if the log held what it does not.
// Before each write the Log also checks that its path still names the file
// it writes (os.SameFile), so a log removed or replaced under a running
// session is reported (ErrVanished) instead of written into the void.
//
// # One writer
//
// A Log holds an exclusive flock(2) on its file for its lifetime. The kernel
// drops the lock when the process dies, so no stale lock can outlive a
// crash; a second Create or Reopen of the same session, from this process or
// another, gets an *InUseError naming the holder's pid. Readers (Load,
// reins log) take no lock: they read whole lines and treat an incomplete
// last line as not written yet.
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
	clock   Clock
	through bool   // Options.WriteThrough
	timer   Timer  // the group commit, made on first use
	armed   bool   // timer is set to fire; a firing that finds it unset does nothing
	wrote   uint64 // writes of the file so far (those that wrote a byte)
	synced  uint64 // the writes the last completed fsync covers
	// bytes written to the file, and those the last completed fsync covers
	written, syncedBytes int64
	dirOK                bool // the directory entry of the file is durable
	fsync                func(*os.File) error
	key                  fileKey       // the open file's identity, which its path must keep naming
	behind               chan struct{} // closed when the fsync SyncBehind started ends; nil when none runs
	// types are the event types this Log wrote; nil for a reopened log,
	// which may hold any (MayHold).
	types map[string]bool
}

// Options configure a new or reopened Log.
type Options struct {
	// Now returns the time stamped on events; time.Now when nil.
	Now func() time.Time
	// Observe, when set, is called with every appended event, under the
	// log's lock and in seq order. It must not block or call back into the Log.
	Observe func(Header, Event)
	// Clock schedules the group commit of buffered events; the real clock
	// when nil. Tests pass a fake to fire it by hand.
	Clock Clock
	// Fsync makes the file durable; (*os.File).Sync when nil. Tests pass
	// one that records what each fsync covered.
	Fsync func(*os.File) error
	// WriteThrough writes every event before Observe sees it, instead of
	// group-committing: for a log whose observer tells another process
	// (reins sdk streaming to a parent), so that what was told is never
	// ahead of the file. It costs a write(2) per event.
	WriteThrough bool
}

// Clock schedules the group commit. It is the subset of package time a Log
// needs, so tests can drive the commit without sleeping.
type Clock interface {
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a scheduled group commit. A Log makes one and re-arms it with
// Reset, so the commit costs no allocation per flush.
type Timer interface {
	Stop() bool
	Reset(d time.Duration) bool
}

type realClock struct{}

func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Group commit bounds: buffered events are written out CommitDelay after
// the first of them was appended, or once FlushAt bytes are buffered.
const (
	CommitDelay = 250 * time.Millisecond
	FlushAt     = 64 << 10
)

// ErrVanished reports that the session's path no longer names the file the
// Log writes: the file or its directory was removed, or replaced.
var ErrVanished = errors.New("the session log file was removed or replaced while in use")

// InUseError is returned by Create and Reopen when another Log holds the
// session's lock. PID is the holder's process id, 0 when it could not be
// found out.
type InUseError struct {
	ID  string
	PID int
}

func (e *InUseError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("session %s is in use by another reins process (pid %d)", e.ID, e.PID)
	}
	return fmt.Sprintf("session %s is in use by another reins process", e.ID)
}

// WriteError is a failure to write or sync the log: the file system said
// no, or the file vanished (Err is ErrVanished).
type WriteError struct {
	Path string
	Err  error
}

func (e *WriteError) Error() string { return "session: writing " + e.Path + ": " + e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

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
	// Private (internal/private): a log holds the whole conversation.
	if err := private.MkdirAll(root); err != nil {
		return nil, fmt.Errorf("session: create %s: %w", root, err)
	}
	if err := private.Mkdir(dir); err != nil {
		return nil, fmt.Errorf("session: create %s: %w", dir, err)
	}
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, private.FileMode)
	if err != nil {
		return nil, fmt.Errorf("session: create log: %w", err)
	}
	if err := lock(f, h.ID); err != nil {
		f.Close()
		return nil, err
	}
	key, err := keyOf(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("session: create log: %w", err)
	}
	h.Type, h.Version = headerType, FormatVersion
	l := newLog(f, path, h, 0, -1, -1, opts)
	l.key = key
	l.types = map[string]bool{}
	line, err := h.AppendJSON(make([]byte, 0, 256))
	if err != nil {
		f.Close()
		return nil, err
	}
	l.buf = append(append(l.buf, line...), '\n')
	// Written, not synced: the first Sync makes the header and the new
	// directory entry durable with the events that need it, so a session
	// that never reaches a sync point costs no fsync.
	if err := l.flushLocked(); err != nil {
		f.Close()
		return nil, fmt.Errorf("session: write header: %w", err)
	}
	return l, nil
}

// syncDir fsyncs a directory so a file created in it survives a power
// loss. Best effort: some file systems refuse fsync on a directory, and
// the file's own data is synced either way.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

func newLog(f *os.File, path string, h Header, next int64, openTurn, lastTurn int, opts Options) *Log {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	clock := opts.Clock
	if clock == nil {
		clock = realClock{}
	}
	return &Log{
		f: f, header: h, path: path,
		next: next, openTrn: openTurn, lastTrn: lastTurn, now: now, observe: opts.Observe, clock: clock,
		through: opts.WriteThrough, fsync: opts.Fsync,
	}
}

// Reopen loads the log at path for appending more turns (reins run --resume).
// It repairs the file the way Load reports it: an incomplete last line is cut
// off and an unclosed last turn is closed with turn/end {interrupted}; those
// repairs are written so the file on disk agrees with what was loaded. A
// corrupt log (a seq gap, an unparsable line before the last) is refused.
//
// The session's lock is taken before the file is read, so what is loaded
// is what no other writer can change any more; a session held by another
// Log is refused with an *InUseError.
func Reopen(path string, opts Options) (*Log, *Loaded, error) {
	f, err := smallfile.Open(path, os.O_RDWR|os.O_APPEND)
	if err != nil {
		return nil, nil, fmt.Errorf("session: reopen: %w", err)
	}
	if err := lock(f, filepath.Base(filepath.Dir(path))); err != nil {
		f.Close()
		return nil, nil, err
	}
	// A log an older reins made 0644, in a 0755 folder, is made private
	// now (internal/private); a stat each at open, nothing per write.
	if err := private.File(f); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("session: reopen: %w", err)
	}
	if err := private.Dir(filepath.Dir(path)); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("session: reopen: %w", err)
	}
	ld, err := Read(io.NewSectionReader(f, 0, math.MaxInt64))
	if err != nil {
		f.Close()
		var ce *CorruptError
		if errors.As(err, &ce) {
			ce.Path = path
		}
		return nil, nil, err
	}
	if ld.Repair.DroppedBytes > 0 {
		if err := f.Truncate(ld.Repair.ValidSize); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("session: repair: %w", err)
		}
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
		if ts, ok := e.Payload.(TurnStart); ok && ts.Turn > last {
			last = ts.Turn
		}
	}
	key, err := keyOf(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("session: reopen: %w", err)
	}
	l := newLog(f, path, ld.Header, int64(len(ld.Events)), -1, last, opts)
	l.key = key
	l.dirOK = true // an existing file's entry was made durable when it was created
	if ld.Repair.DroppedBytes > 0 {
		l.wrote = 1 // the cut is not durable yet
	}
	for _, e := range rewrite {
		if err := l.writeLocked(e, false); err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	if err := l.Sync(); err != nil {
		f.Close()
		return nil, nil, err
	}
	return l, ld, nil
}

// MayHold reports whether the log may hold an event of type typ: whether
// this Log wrote one, and always for a log Reopen loaded, whose earlier
// events it does not track. It lets a reader of the log's own file (a
// resumed session's subagent table) skip the read on a new session.
func (l *Log) MayHold(typ string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.types == nil || l.types[typ]
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
// returns it with its Payload. It does not flush. data is the type's
// payload (payload.go), which costs no decoding, or, for a type this reins
// does not know, anything encoding/json encodes. Data of a known type given
// another way (json.RawMessage, a map) is decoded, and refused with a
// *PayloadError, not written, when it does not decode as the payload.
func (l *Log) Append(typ string, data any) (Event, error) {
	raw, err := marshalData(data)
	if err != nil {
		return Event{}, fmt.Errorf("session: marshal %s: %w", typ, err)
	}
	payload, err := livePayload(typ, -1, data, raw)
	if err != nil {
		return Event{}, fmt.Errorf("session: append %s: %w", typ, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return Event{}, ErrClosed
	}
	e := Event{Type: typ, Seq: l.next, Time: l.now().UTC(), Data: raw, Payload: payload}
	if err := l.writeLocked(e, true); err != nil {
		return Event{}, err
	}
	l.next++
	switch typ {
	case TypeTurnStart:
		ts := payload.(TurnStart)
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
// once it holds FlushAt bytes, and arming the group commit otherwise. The buffer grows with what a step writes
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
		return l.werr
	}
	if l.types != nil {
		l.types[e.Type] = true
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
	if len(l.buf) >= FlushAt || l.through {
		return l.flushLocked()
	}
	if !l.armed && !l.closed {
		l.armed = true
		if l.timer == nil {
			l.timer = l.clock.AfterFunc(CommitDelay, l.commit)
		} else {
			l.timer.Reset(CommitDelay)
		}
	}
	return nil
}

// commit is the group commit: the timer armed by the first buffered event
// writes the buffer out. Its error is kept in werr, so the next Append,
// Flush or Sync reports it.
func (l *Log) commit() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.armed || l.closed {
		return // disarmed by a flush after it fired
	}
	_ = l.flushLocked()
}

// flushLocked writes the buffer to the file, after checking that the file
// is still the one at the session's path. A buffer grown past maxKeptBuf
// by one huge event is released rather than kept for the log's lifetime.
func (l *Log) flushLocked() error {
	if l.armed {
		l.timer.Stop()
		l.armed = false
	}
	if l.werr != nil {
		return l.werr
	}
	if len(l.buf) == 0 {
		return nil
	}
	if err := l.checkLocked(); err != nil {
		return l.fail(err)
	}
	n, err := l.f.Write(l.buf)
	if n > 0 {
		l.wrote++
		l.written += int64(n)
	}
	if err != nil {
		l.buf = l.buf[n:]
		return l.fail(err)
	}
	if cap(l.buf) > maxKeptBuf {
		l.buf = nil
	} else {
		l.buf = l.buf[:0]
	}
	return nil
}

// checkLocked reports ErrVanished when the session's path no longer names
// the open file: the directory was removed, or the file was replaced.
// Writing on would put events where nobody can read them.
//
// It is paid once per write: a stat(2) of the path (fileKey).
func (l *Log) checkLocked() error {
	if !l.key.named(l.path) {
		return ErrVanished
	}
	return nil
}

// fail keeps the first write error; every later write returns it.
func (l *Log) fail(err error) error {
	if l.werr == nil {
		l.werr = &WriteError{Path: l.path, Err: err}
	}
	return l.werr
}

// syncLocked writes the buffer and fsyncs the file — only when something
// was written since the last fsync — and, the first time, its directory,
// so a new session's file survives a power loss along with its events.
// It releases l.mu while it waits for a background fsync.
func (l *Log) syncLocked() error {
	// A background fsync (SyncBehind) must end first, and its outcome be
	// this one's: after a failed writeback Linux reports the error to one
	// fsync of the descriptor only, so a second, concurrent fsync could
	// report success for bytes that were lost.
	l.waitBehindLocked()
	if l.closed {
		return ErrClosed
	}
	if err := l.flushLocked(); err != nil {
		return err
	}
	if err := l.checkLocked(); err != nil {
		return l.fail(err)
	}
	if l.wrote != l.synced {
		if err := l.fsyncFile(); err != nil {
			return l.fail(err)
		}
		l.synced, l.syncedBytes = l.wrote, l.written
	}
	if !l.dirOK {
		// The file's entry in the session directory. (On ext4, which
		// commits its journal on fsync, this and the sessions root's
		// entry are durable already; elsewhere POSIX asks for it.)
		syncDir(filepath.Dir(l.path))
		l.dirOK = true
	}
	return nil
}

// SyncBehind writes buffered events and starts an fsync of the file in
// the background (and, the first time, of its directory), returning at
// once: a caller about to wait — for the model — makes what it wrote
// durable meanwhile, so the Sync that must come before its next act
// (running a tool, reporting the turn's end) finds little left to commit;
// for a new session that is the file's creation, most of an fsync's
// cost. Once the file's creation is durable, it starts one only when
// BehindMin bytes or more are not: below that an fsync costs about the
// same whatever it carries, so the Sync to come would pay as much again
// and the background one would be spent for nothing. One runs at a time.
// Its failure is kept like a write's: the next write or Sync returns it.
// Close waits for it.
func (l *Log) SyncBehind() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if err := l.flushLocked(); err != nil {
		return err
	}
	if l.behind != nil || l.dirOK && l.written-l.syncedBytes < BehindMin {
		return nil
	}
	gen, bytes, dirOK, done := l.wrote, l.written, l.dirOK, make(chan struct{})
	l.behind = done
	go func() {
		defer close(done)
		err := l.fsyncFile()
		if err == nil && !dirOK {
			syncDir(filepath.Dir(l.path))
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.behind = nil
		if err != nil {
			l.fail(err)
			return
		}
		l.synced, l.syncedBytes = max(l.synced, gen), max(l.syncedBytes, bytes)
		l.dirOK = true
	}()
	return nil
}

// waitBehindLocked waits, with l.mu released meanwhile, until no
// background fsync runs.
func (l *Log) waitBehindLocked() {
	for l.behind != nil {
		done := l.behind
		l.mu.Unlock()
		<-done
		l.mu.Lock()
	}
}

// fsyncFile fsyncs the file; l.mu need not be held.
func (l *Log) fsyncFile() error {
	if l.fsync != nil {
		return l.fsync(l.f)
	}
	return l.f.Sync()
}

// BehindMin is how much of the file must be unsynced for SyncBehind to
// start an fsync once the file's creation is durable.
const BehindMin = 64 << 10

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

// Flush writes buffered events to the file: after it returns nil they
// survive the process being killed. After Close it returns ErrClosed.
func (l *Log) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	return l.flushLocked()
}

// Sync writes buffered events and fsyncs the file: after it returns nil
// they survive a power loss too. It also reports a vanished file when
// nothing was buffered. After Close it returns ErrClosed.
func (l *Log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	return l.syncLocked()
}

// Err returns the first write error, nil while every write succeeded.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.werr
}

// Close syncs and closes the file, which releases the session's lock. It
// returns the first write error the Log met, if any. It is idempotent.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waitBehindLocked() // the background fsync must end before the file closes
	if l.closed {
		return nil
	}
	err := l.syncLocked()
	l.closed = true
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}
