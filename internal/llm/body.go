package llm

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
)

// Request bodies are recycled: a long session's request carries its whole
// history (close to a megabyte after a thousand steps), and allocating,
// zeroing and collecting one per step would make each step cost more than
// the last. A body is reused only once the transport has read it to its
// end (after which it touches none of its bytes) and the attempt is over;
// a body cut short by a failure is left to the garbage collector.
var bodies sync.Pool // of *[]byte

// maxPooledBody bounds the buffers kept for reuse.
const maxPooledBody = 64 << 20

// BodyBuffer returns an empty buffer for a request body of about size
// bytes, reused when one is free.
func BodyBuffer(size int) []byte {
	if p, ok := bodies.Get().(*[]byte); ok && cap(*p) >= size {
		return (*p)[:0]
	}
	// A session's requests grow: room for the next few.
	return make([]byte, 0, size+size/4)
}

// Body is a request body over a BodyBuffer.
type Body struct {
	r   *bytes.Reader
	buf []byte
	eof atomic.Bool
}

// SetBody makes buf the body of req, ContentLength included. Recycle the
// returned Body when the attempt is over; buf must not be used after.
func SetBody(req *http.Request, buf []byte) *Body {
	b := &Body{r: bytes.NewReader(buf), buf: buf}
	req.Body = io.NopCloser(b)
	req.ContentLength = int64(len(buf))
	req.GetBody = nil
	return b
}

// Read reads the body, noting its end.
func (b *Body) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.eof.Store(true)
	}
	return n, err
}

// WriteTo writes the body in one piece (io.Copy uses it: no copy through
// a small buffer, one write for the whole request).
func (b *Body) WriteTo(w io.Writer) (int64, error) {
	n, err := b.r.WriteTo(w)
	if err == nil {
		b.eof.Store(true)
	}
	return n, err
}

// Sent reports whether the transport read the whole body: after it, the
// transport touches none of its bytes.
func (b *Body) Sent() bool { return b.eof.Load() }

// Recycle hands the buffer back for reuse if the transport read it all.
func (b *Body) Recycle() {
	if b == nil || !b.eof.Load() || cap(b.buf) > maxPooledBody {
		return
	}
	buf := b.buf
	b.buf = nil
	bodies.Put(&buf)
}
