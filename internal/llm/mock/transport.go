package mock

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"syscall"
)

// Transport returns a RoundTripper that serves requests by calling the
// server's handler in-process, streaming the response through a pipe: the
// `mock` provider is the OpenAI adapter over this transport, so it needs no
// port; the request's host is ignored, so any base URL (e.g.
// "http://mock.invalid") works. Every wire behaviour is the same as over TCP: a cut stream ends with
// EOF, a reset fault fails the round trip with a connection-reset error, and
// cancelling the request's context (or closing the response body) ends the
// handler and unblocks the reader.
func (s *Server) Transport() http.RoundTripper { return transport{s} }

type transport struct{ s *Server }

// ErrConnReset is what a reset fault looks like through Transport: it
// wraps syscall.ECONNRESET, and its text says "connection reset" like the
// network error it stands for.
var ErrConnReset error = connReset{}

// connReset is ErrConnReset: a type, not fmt.Errorf's value, which would
// be built at every reins start (internal/lazy).
type connReset struct{}

func (connReset) Error() string { return "mock: read: " + syscall.ECONNRESET.Error() }
func (connReset) Unwrap() error { return syscall.ECONNRESET }

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	parent := req.Context()
	if err := parent.Err(); err != nil {
		closeBody(req)
		return nil, err
	}
	ctx, cancel := context.WithCancel(parent)
	pr, pw := io.Pipe()
	w := &pipeWriter{header: make(http.Header), ready: make(chan struct{}), pw: pw}
	done := make(chan struct{})

	hreq := req.Clone(ctx)
	if hreq.Body == nil {
		hreq.Body = http.NoBody
	}
	hreq.RemoteAddr = "in-process"
	hreq.RequestURI = req.URL.RequestURI()

	// cancelled is the error a reader sees once the request is cancelled
	// or its body closed.
	cancelled := func() error {
		if err := parent.Err(); err != nil {
			return err
		}
		return context.Canceled
	}
	go func() {
		defer close(done)
		defer closeBody(req)
		t.s.ServeHTTP(w, hreq)
		switch {
		case w.reset:
			_ = pw.CloseWithError(ErrConnReset)
		case ctx.Err() != nil:
			_ = pw.CloseWithError(cancelled())
		default:
			_ = pw.Close()
		}
	}()
	// A cancelled request or a closed body unblocks a handler stuck in a
	// write, and the reader sees the cancellation.
	go func() {
		select {
		case <-ctx.Done():
			_ = pw.CloseWithError(cancelled())
		case <-done:
		}
	}()

	select {
	case <-w.ready:
	case <-done:
		if err := parent.Err(); err != nil && !w.wroteHeader {
			cancel()
			return nil, err
		}
		if w.reset && !w.wroteHeader {
			cancel()
			return nil, ErrConnReset
		}
		if !w.wroteHeader {
			w.WriteHeader(http.StatusOK) // net/http's implicit 200
		}
	case <-parent.Done():
		cancel()
		return nil, parent.Err()
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          &pipeBody{pr: pr, cancel: cancel},
		ContentLength: -1,
		Request:       req,
	}, nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// pipeWriter is the handler's ResponseWriter. Only the handler goroutine
// writes its fields; RoundTrip reads them after ready or done is closed.
type pipeWriter struct {
	header      http.Header
	sent        http.Header
	status      int
	wroteHeader bool
	reset       bool
	ready       chan struct{}
	pw          *io.PipeWriter
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	w.status = code
	w.sent = w.header.Clone()
	close(w.ready)
}

func (w *pipeWriter) Write(p []byte) (int, error) {
	if w.reset {
		return 0, ErrConnReset
	}
	w.WriteHeader(http.StatusOK)
	return w.pw.Write(p)
}

// Flush is a no-op: the pipe hands every write to the reader directly.
func (w *pipeWriter) Flush() {}

func (w *pipeWriter) resetConnection() { w.reset = true }

// pipeBody is the response body; Close cancels the handler like a client
// hanging up.
type pipeBody struct {
	pr     *io.PipeReader
	cancel context.CancelFunc
	once   sync.Once
}

func (b *pipeBody) Read(p []byte) (int, error) { return b.pr.Read(p) }

func (b *pipeBody) Close() error {
	b.once.Do(func() {
		b.cancel()
		_ = b.pr.Close()
	})
	return nil
}
