// Package llmtest holds what the adapters' tests share: an HTTP transport
// that serves fixed bytes in arbitrary pieces, one that records the bytes
// a real server sent, and the closed set of failure codes a finish may
// carry. It is imported only by tests.
package llmtest

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
)

// BodyTransport answers every request with HTTP 200 and Body as an event
// stream, handing out at most Step bytes per Read (0: all at once), so an
// adapter's SSE reader sees the bytes split at arbitrary places.
type BodyTransport struct {
	Body []byte
	Step int
}

// RoundTrip implements http.RoundTripper.
func (bt BodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(&choppyReader{b: bt.Body, step: bt.Step}),
		Request:    r,
	}, nil
}

type choppyReader struct {
	b    []byte
	step int
}

func (c *choppyReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	if c.step > 0 && len(p) > c.step {
		p = p[:c.step]
	}
	n := copy(p, c.b)
	c.b = c.b[n:]
	return n, nil
}

// Recorder passes requests to RT and appends the response bodies it read
// to Body: how tests capture the exact bytes of the mock server.
type Recorder struct {
	RT   http.RoundTripper
	Body *bytes.Buffer
}

// RoundTrip implements http.RoundTripper.
func (r Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.RT.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, r.Body), resp.Body}
	return resp, nil
}

var knownCodes = map[string]bool{
	llm.CodeEmptyResponse: true, llm.CodeContextWindowExceeded: true, llm.CodeStreamClosed: true,
	llm.CodeMalformedResponse: true, llm.CodeRateLimit: true, llm.CodeServer: true, llm.CodeAuth: true,
	llm.CodeInvalidRequest: true, llm.CodeTimeout: true, llm.CodeTransport: true, llm.CodeAborted: true,
	llm.CodeQuota: true,
}

var reasonCodeRE = regexp.MustCompile(`^[A-Z0-9_]{1,64}$`)

// ValidCode reports whether an error finish's code is one of docs/providers.md's or
// an upper-cased, sanitised unknown finish reason ([A-Z0-9_], ≤ 64 bytes).
func ValidCode(code string) bool { return knownCodes[code] || reasonCodeRE.MatchString(code) }

// LingeringServer starts a server that answers every request with the
// event stream body and then waits a moment before ending it (the chunked
// encoding's last chunk comes after the stream's end marker, as from a
// provider behind a proxy). It counts the connections clients opened: a
// client that drops a finished stream's connection dials once per request.
func LingeringServer(t testing.TB, body string) (*httptest.Server, *atomic.Int32) {
	var dials atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
		w.(http.Flusher).Flush()
		time.Sleep(20 * time.Millisecond)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &dials
}
