package llm

import (
	"bufio"
	"context"
	"errors"
	"io"
	"iter"
	"net/http"
	"time"

	"github.com/reinsdev/reins/internal/llm/sse"
)

// maxAttemptErrorBody bounds how much of a non-200 body an SSEAttempt reads:
// enough for the classification markers and the host log.
const maxAttemptErrorBody = 64 << 10

// maxAttemptEvent lets one SSE event hold a line of MaxLineBytes plus its
// field names and the JSON around it.
const maxAttemptEvent = MaxLineBytes + 1<<20

// Translator turns one wire's SSE events into chunks. The Responses and
// Gemini adapters each have one; SSEAttempt runs it over the HTTP attempt
// so the status, watchdog, cancellation and end-of-body rules are written
// once for both.
type Translator interface {
	// Feed handles one event (data is valid only during the call). It
	// appends the chunks it produced to out and returns them, with a
	// finish when the event ends the stream.
	Feed(name string, data []byte, out []Chunk) ([]Chunk, *Chunk)
	// Unfinished is the message of the finish of a body that carried
	// bytes but ended before the wire's terminal signal.
	Unfinished() string
}

// SSEAttempt is one HTTP attempt of a streaming wire: a POST whose 200
// answer is an event stream.
type SSEAttempt struct {
	HTTP *http.Client // nil: http.DefaultClient (redirects are never followed)
	URL  string
	// Header is sent as is (auth, content type, accept).
	Header http.Header
	Body   []byte
	// IdleTimeout and ProgressTimeout are StartCall's.
	IdleTimeout, ProgressTimeout time.Duration
	// Wire names the adapter in host-log lines.
	Wire string
	// Logf receives provider error bodies for the host log; may be nil.
	Logf func(format string, args ...any)
	// ProviderError receives the provider's own message of an error
	// answer (ProviderMessage), for the user's terminal only; may be nil.
	ProviderError func(status int, message string)
}

// SSEHeader is the header of an SSEAttempt's request: a JSON body, an
// event stream asked for; the adapter adds its auth.
func SSEHeader() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	return h
}

// Unencodable is the stream of a request that could not be encoded: its
// one finish.
func Unencodable() iter.Seq[Chunk] {
	return func(yield func(Chunk) bool) {
		yield(ErrorFinish(CodeInvalidRequest, "request could not be encoded"))
	}
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Stream makes the attempt and yields t's chunks, ending with exactly one
// finish whatever happens: an error status is StatusFinish, a transport
// failure, cancellation or watchdog is Call.Fail, an event stream that
// ends early is t.Ended, one event over the size limit is
// MALFORMED_RESPONSE. Breaking out of the sequence closes the body.
func (a *SSEAttempt) Stream(ctx context.Context, t Translator) iter.Seq[Chunk] {
	return func(yield func(Chunk) bool) {
		if fin, ok := a.run(ctx, t, yield); ok {
			yield(fin)
		}
	}
}

func (a *SSEAttempt) logf(format string, args ...any) {
	if a.Logf != nil {
		a.Logf(format, args...)
	}
}

func (a *SSEAttempt) run(ctx context.Context, t Translator, yield func(Chunk) bool) (Chunk, bool) {
	call := StartCall(ctx, a.IdleTimeout, a.ProgressTimeout)
	defer call.Close()
	hreq, err := http.NewRequestWithContext(call.Context(), http.MethodPost, a.URL, nil)
	if err != nil {
		return ErrorFinish(CodeInvalidRequest, "base URL is not valid"), true
	}
	defer SetBody(hreq, a.Body).Recycle()
	for k, v := range a.Header {
		hreq.Header[k] = v
	}
	var hc http.Client
	if a.HTTP != nil {
		hc = *a.HTTP
	}
	hc.CheckRedirect = noRedirect
	resp, err := hc.Do(hreq)
	if err != nil {
		a.logf("%s: request failed: %v", a.Wire, err)
		return call.Fail(err), true
	}
	defer resp.Body.Close()
	defer DrainBody(resp.Body) // first: the connection goes back to the pool
	call.Touch()               // the status line and headers were bytes

	if resp.StatusCode != http.StatusOK {
		prefix, err := io.ReadAll(io.LimitReader(call.Body(resp.Body), maxAttemptErrorBody))
		if err != nil && call.Aborted() {
			return call.Fail(err), true
		}
		a.logf("%s: HTTP %d from provider: %s", a.Wire, resp.StatusCode, prefix)
		if a.ProviderError != nil {
			a.ProviderError(resp.StatusCode, ProviderMessage(prefix))
		}
		return StatusFinish(resp.StatusCode, resp.Header, prefix), true
	}

	n := &CountingReader{R: call.Body(resp.Body)}
	events := sse.NewReader(n, maxAttemptEvent)
	var out []Chunk
	for {
		ev, err := events.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			a.logf("%s: reading stream: %v", a.Wire, err)
			switch {
			case call.Context().Err() != nil:
				return call.Fail(err), true
			case errors.Is(err, bufio.ErrTooLong):
				return ErrorFinish(CodeMalformedResponse, "stream event exceeds the size limit"), true
			case errors.Is(err, io.ErrUnexpectedEOF):
				return ended(t, false), true
			}
			return call.Fail(err), true
		}
		if call.Context().Err() != nil {
			// Cancelled or a watchdog fired while events were buffered.
			return call.Fail(context.Cause(call.Context())), true
		}
		var fin *Chunk
		out, fin = t.Feed(ev.Type, ev.Data, out[:0])
		for _, ch := range out {
			call.Progress(ch)
			if !yield(ch) {
				return Chunk{}, false
			}
		}
		if fin != nil {
			return *fin, true
		}
	}
	// The reader ends quietly at EOF, clean or cut mid-line.
	if call.Context().Err() != nil {
		return call.Fail(context.Cause(call.Context())), true
	}
	return ended(t, n.N == 0), true
}

// ended is the finish of a body that ended before t's terminal signal;
// empty reports that it carried no byte at all.
func ended(t Translator, empty bool) Chunk {
	if empty {
		return ErrorFinish(CodeEmptyResponse, "provider returned an empty body")
	}
	return ErrorFinish(CodeStreamClosed, t.Unfinished())
}

// CountingReader counts the bytes read from R: a stream's reader tells an
// empty body (EMPTY_RESPONSE) from a cut stream by it.
type CountingReader struct {
	R io.Reader
	N int64
}

func (r *CountingReader) Read(p []byte) (int, error) {
	n, err := r.R.Read(p)
	r.N += int64(n)
	return n, err
}

// WithHeaders is c (nil: http.DefaultClient) sending header on every
// request, each replacing a same-named header the adapter set: a
// provider's configured extra headers (providers.NAME.headers), added at
// one place for every wire. Their values are never logged.
func WithHeaders(c *http.Client, header http.Header) *http.Client {
	if len(header) == 0 {
		return c
	}
	var out http.Client
	if c != nil {
		out = *c
	}
	base := out.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out.Transport = headerTransport{base: base, header: header.Clone()}
	return &out
}

type headerTransport struct {
	base   http.RoundTripper
	header http.Header
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	for k, v := range t.header {
		r.Header[k] = v
	}
	return t.base.RoundTrip(r)
}
