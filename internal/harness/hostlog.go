package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/reinsdev/reins/internal/private"
)

// Bounds of the host log. A child that prints 200,000 lines of garbage
// must not fill the disk: each line is cut at MaxHostLogLine bytes (its
// start kept, the cut counted at its end), and the file is rotated before
// it would pass MaxHostLogBytes, keeping one older part, reins.log.1. The
// first line of a rotated file counts the bytes of the older part that
// rotation dropped. So the host log never takes more than about
// 2 × MaxHostLogBytes.
const (
	MaxHostLogLine  = 4 << 10
	MaxHostLogBytes = 10 << 20
)

// hostLog is the bounded host log file. Several reins processes may share
// it (a parent and its `reins sdk` children): each appends whole lines
// with O_APPEND and, before each line, checks the file's size and that
// the path still names its file (another process may have rotated it).
// It is not safe for concurrent use; Harness.logMu guards it.
type hostLog struct {
	path string
	f    *os.File
	// failed: the log could not be opened; it stays off.
	failed bool
}

// cutLine caps msg (one log entry) at
// MaxHostLogLine bytes on a UTF-8 boundary, saying how much was cut.
func cutLine(msg string) string {
	if len(msg) <= MaxHostLogLine {
		return msg
	}
	n := MaxHostLogLine
	for n > 0 && !utf8.RuneStart(msg[n]) {
		n--
	}
	return fmt.Sprintf("%s …[%d bytes cut]", msg[:n], len(msg)-n)
}

func (l *hostLog) open() bool {
	if l.f != nil {
		return true
	}
	if l.failed {
		return false
	}
	if err := private.MkdirAll(filepath.Dir(l.path)); err != nil {
		l.failed = true
		return false
	}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, private.FileMode)
	if err != nil {
		l.failed = true
		return false
	}
	// One an older reins made 0644 is tightened (it holds raw provider
	// and child error text).
	if err := private.File(f); err != nil {
		f.Close()
		l.failed = true
		return false
	}
	l.f = f
	return true
}

// write appends one line "stamp msg", cut to its bound, rotating first if
// the line would take the file past MaxHostLogBytes.
func (l *hostLog) write(stamp, msg string) {
	if !l.open() {
		return
	}
	line := stamp + " " + cutLine(msg) + "\n"
	fi, err := l.f.Stat()
	if err != nil {
		return
	}
	if fi.Size()+int64(len(line)) > MaxHostLogBytes {
		l.rotate(stamp, fi)
		if l.f == nil {
			return
		}
	}
	l.f.WriteString(line)
}

// rotate moves the full file to reins.log.1 (dropping the older one) and
// starts a new file whose first line counts what was dropped. When
// another process rotated the file already, it only reopens the path.
func (l *hostLog) rotate(stamp string, mine os.FileInfo) {
	cur, err := os.Stat(l.path)
	rotated := err == nil && os.SameFile(cur, mine)
	note := ""
	if rotated || err != nil {
		var dropped int64
		if old, err := os.Stat(l.path + ".1"); err == nil {
			dropped = old.Size()
		}
		if rotated {
			if err := os.Rename(l.path, l.path+".1"); err != nil {
				return
			}
		}
		note = fmt.Sprintf("%s host log rotated at %d bytes: the previous part is reins.log.1; %d bytes of older log were dropped\n",
			stamp, MaxHostLogBytes, dropped)
	}
	l.f.Close()
	l.f = nil
	if !l.open() {
		return
	}
	if note != "" {
		l.f.WriteString(note)
	}
}

func (l *hostLog) close() error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
