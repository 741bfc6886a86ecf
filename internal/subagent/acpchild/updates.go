package acpchild

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	sdk "github.com/coder/acp-go-sdk"
)

// updateFilter sits between the child's stdout and the SDK's reader and
// handles every session/update notification itself, in stream order, before
// it lets the SDK see the lines that follow; everything else (responses,
// the child's requests, other notifications) goes on to the SDK unchanged.
//
// Why not the SDK's own notification path (docs/subagents.md, "ACP
// transport"): coder/acp-go-sdk v0.13.0 queues notifications in a fixed
// channel of 1,024 and closes the connection when a fast child fills it
// (its reader never waits for the handler), and when the connection dies
// the pending prompt returns at once while queued notifications are still
// being delivered, so a crashing child's last streamed text was lost. The
// SDK offers no hook for either from outside. Handling updates here on the
// reading goroutine removes the queue: the kernel pipe is the only buffer
// and a slow parent simply slows the child (back-pressure), a response or
// the end of the stream reaches the SDK only after every update before it
// was folded, and the filter can tell exactly when a dead child's output
// is drained (idle).
type updateFilter struct {
	src    *bufio.Reader
	raw    *trackedReader
	out    *io.PipeWriter // the SDK's input
	handle func(sdk.SessionNotification)
	logf   func(format string, args ...any)
	// progress, when set, is told of every line the child writes: any
	// protocol message shows the child is alive (its stall watch).
	progress func()
	done     chan struct{} // closed when the child's stdout ended (or was closed)
	// handled counts the lines read and handled (folded, or passed to the
	// SDK): whether the child said anything during a wait (quiet).
	handled atomic.Uint64
}

// maxFrame is the SDK's own line limit: a longer frame is dropped (and
// logged) the way the SDK would drop it.
const maxFrame = 10 << 20

func newUpdateFilter(stdout io.Reader, handle func(sdk.SessionNotification), logf func(string, ...any)) (*updateFilter, io.Reader) {
	pr, pw := io.Pipe()
	raw := &trackedReader{r: stdout}
	if f, ok := stdout.(*os.File); ok && pollable {
		if rc, err := f.SyscallConn(); err == nil {
			raw.rc = rc
		}
	}
	f := &updateFilter{
		src: bufio.NewReaderSize(raw, 64<<10), raw: raw, out: pw,
		handle: handle, logf: logf, done: make(chan struct{}),
	}
	return f, pr
}

// stopForwarding makes the filter stop passing lines to the SDK (after
// the SDK's connection ended, nothing reads them); it still drains and
// handles the child's stdout.
func (f *updateFilter) stopForwarding() { f.out.CloseWithError(io.ErrClosedPipe) }

func (f *updateFilter) run() {
	defer close(f.done)
	defer f.out.Close()
	forward := true
	for {
		line, err := f.readLine()
		if len(line) > 0 && f.progress != nil {
			f.progress()
		}
		if len(line) > 0 {
			if !f.intercept(line) && forward {
				if _, werr := f.out.Write(append(line, '\n')); werr != nil {
					forward = false // the SDK's reader is gone; keep draining
				}
			}
			f.handled.Add(1)
		}
		if err != nil {
			return
		}
	}
}

// readLine returns the next line without its newline; a line over
// maxFrame is skipped whole.
func (f *updateFilter) readLine() ([]byte, error) {
	var long []byte
	over := false
	for {
		chunk, err := f.src.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			if !over {
				long = append(long, chunk...)
				if len(long) > maxFrame {
					over, long = true, nil
				}
			}
			continue
		case over:
			f.logf("frame over %d bytes dropped", maxFrame)
			if err != nil {
				return nil, err
			}
			return nil, nil
		}
		if long != nil {
			chunk = append(long, chunk...)
		} else {
			chunk = append([]byte(nil), chunk...)
		}
		return bytes.TrimRight(chunk, "\r\n"), err
	}
}

// intercept handles line if it is a well-formed session/update
// notification; anything else is the SDK's.
func (f *updateFilter) intercept(line []byte) bool {
	if !bytes.Contains(line, []byte("session/update")) && !bytes.Contains(line, []byte(`\`)) {
		return false // exactly equivalent: the method name cannot be written otherwise
	}
	var msg struct {
		ID     *json.RawMessage `json:"id"`
		Method string           `json:"method"`
		Params json.RawMessage  `json:"params"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.ID != nil || msg.Method != sdk.ClientMethodSessionUpdate {
		return false
	}
	var n sdk.SessionNotification
	if json.Unmarshal(msg.Params, &n) != nil || n.Validate() != nil {
		return false // the SDK logs it
	}
	f.handle(n)
	return true
}

// quiet reports whether the child wrote nothing since the filter had
// handled since lines, and all it wrote is handled: its stdout ended, or
// the pipe is empty and the filter waits on it (without a pollable pipe,
// only the count can say).
func (f *updateFilter) quiet(since uint64) bool {
	if f.handled.Load() != since {
		return false
	}
	return f.finished() || f.raw.rc == nil || f.idle()
}

// finished reports whether the child's stdout ended and every line of it
// was handled.
func (f *updateFilter) finished() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

// idle reports whether every byte the pipe held has been read and handled
// and the pipe is empty now. Called after the child's leader exited, it
// means the leader's output is drained even when a grandchild still holds
// the pipe open. Without a pollable pipe it is never idle (the caller's
// bound applies).
func (f *updateFilter) idle() bool { return f.raw.idle() }

// trackedReader reads the child's stdout with non-blocking reads through
// the runtime poller, so that whether the filter is waiting on an empty
// pipe is known exactly, under the same lock as the read itself.
type trackedReader struct {
	r  io.Reader
	rc syscall.RawConn

	mu      sync.Mutex
	waiting bool // the last read found the pipe empty; nothing is in hand
}

func (t *trackedReader) Read(p []byte) (int, error) {
	if t.rc == nil {
		return t.r.Read(p)
	}
	var (
		n    int
		rerr error
	)
	err := t.rc.Read(func(fd uintptr) bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		var again bool
		n, again, rerr = readFD(fd, p)
		if again {
			t.waiting = true
			return false
		}
		t.waiting = false
		return true
	})
	if err != nil {
		return 0, err
	}
	if rerr != nil {
		return 0, rerr
	}
	if n <= 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (t *trackedReader) idle() bool {
	if t.rc == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.waiting {
		return false
	}
	avail := -1
	_ = t.rc.Control(func(fd uintptr) {
		avail = pending(fd)
	})
	return avail == 0
}
