package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"

	reinssdk "github.com/reinsdev/reins/sdk"
)

// Why a framing filter: coder/acp-go-sdk v0.13.0 reads its input with a
// bufio.Scanner of at most 10 MiB, and a longer line ends the scan for
// good — the connection closes, unanswered, and `reins acp` exits 0 (the
// host log says "bufio.Scanner: token too long"). The SDK offers no hook
// to change that, so reins puts its own framing in front of it: the same
// sdk.FrameReader `reins sdk` reads with, at the same limit
// (sdk.MaxFrameBytes, chosen so that every frame it passes fits the SDK's
// scanner with its "\n"). A frame within the limit goes on to the SDK
// unchanged (with a bare "\n" line end); an over-long line is consumed and
// answered here with the JSON-RPC parse error `reins sdk` sends (its id
// cannot be known, so it is null), and the connection keeps serving.
//
// answerTooLong writes through out, the writer the SDK also writes
// through: lockedWriter keeps the two from interleaving (the SDK writes
// each message with one Write call).

// tooLongAnswer is the answer to an over-long line.
const tooLongAnswer = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: line too long"}}` + "\n"

// notJSONAnswer is the answer to a line that is not JSON: coder/acp-go-sdk
// logs such a line and drops it without a word, where JSON-RPC 2.0 (and
// `reins sdk`) answer a parse error; the filter answers it here instead.
const notJSONAnswer = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}` + "\n"

// lockedWriter serialises Write calls.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// filterFrames returns the reader the SDK reads: the frames of in within
// the limit; over-long lines are answered on out. Nothing is read before
// start is called (the SDK starts reading in its constructor, before
// reins has set its logger: a frame it logged about then would race with
// SetLogger). stop ends the filter (a read of in still blocked is left to
// the caller, who owns in).
func filterFrames(in io.Reader, out io.Writer) (r io.Reader, start, stop func()) {
	pr, pw := io.Pipe()
	started := make(chan struct{})
	go func() {
		<-started
		fr := reinssdk.NewFrameReader(in)
		for {
			b, err := fr.Next()
			if errors.Is(err, reinssdk.ErrFrameTooLong) {
				if _, werr := io.WriteString(out, tooLongAnswer); werr != nil {
					pw.CloseWithError(werr)
					return
				}
				continue
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				pw.CloseWithError(err) // nil: the SDK sees io.EOF
				return
			}
			if len(bytes.TrimSpace(b)) > 0 && !json.Valid(b) {
				if _, werr := io.WriteString(out, notJSONAnswer); werr != nil {
					pw.CloseWithError(werr)
					return
				}
				continue
			}
			if _, err := pw.Write(append(b, '\n')); err != nil {
				return // the SDK stopped reading
			}
		}
	}()
	var once sync.Once
	return pr, func() { once.Do(func() { close(started) }) }, func() { pr.Close() }
}
