// Package anthropic is the adapter for the Anthropic Messages streaming API
// (provider `anthropic`, docs/providers.md). It owns the few wire structs it
// needs, so no SDK retries or reshapes anything behind the retry executor:
// one Stream call is exactly one HTTP attempt, and every wire fact ends as
// provider-neutral llm chunks with exactly one finish.
package anthropic

import (
	"bufio"
	"context"
	"errors"
	"io"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/enccache"
	"github.com/reinsdev/reins/internal/llm/sse"
)

// DefaultBaseURL is used when Client.BaseURL is empty.
const DefaultBaseURL = "https://api.anthropic.com"

// APIVersion is the anthropic-version header this adapter's wire structs follow.
const APIVersion = "2023-06-01"

// maxErrorBody bounds how much of a non-200 answer is read: enough for the
// provider's JSON error, which is only logged and matched for markers.
const maxErrorBody = 64 << 10

// maxEventSize lets one SSE event hold a line of llm.MaxLineBytes plus its
// field names and the event line.
const maxEventSize = llm.MaxLineBytes + 1<<20

// Client streams Anthropic Messages responses. The zero value (plus an
// APIKey) is usable.
type Client struct {
	// BaseURL is the API root without /v1; empty means DefaultBaseURL.
	BaseURL string
	APIKey  string
	// HTTP sends the request; nil means http.DefaultClient. Its Timeout
	// must be zero (or longer than any response): a stream is bounded by
	// the idle watchdog, not by a total deadline.
	HTTP *http.Client
	// IdleTimeout is how long the response may send no byte; zero means
	// llm.DefaultIdleTimeout.
	IdleTimeout time.Duration
	// ProgressTimeout is how long the response may send no content (text,
	// reasoning or tool-call arguments): keep-alive comments and empty
	// events reset the idle watchdog but not this one. <= 0 means
	// llm.DefaultProgressTimeout.
	ProgressTimeout time.Duration
	// Logf, if set, receives diagnostics, including provider error texts
	// that are deliberately kept out of finish messages.
	Logf func(format string, args ...any)
	// ProviderError, if set, receives the provider's own error message of
	// a failed request (llm.ProviderMessage): for the user's terminal,
	// never for the model, a diagnostic or an event.
	ProviderError func(status int, message string)

	// encoded holds each history message's encoding for the next request.
	encoded enccache.Cache[encodedMessage]
}

var _ llm.Model = (*Client)(nil)

// Stream sends req and yields the response as llm chunks ending with exactly
// one finish. Failures are finishes with a code (docs/providers.md). Breaking out of
// the sequence closes the response body.
func (c *Client) Stream(ctx context.Context, req *llm.Request) iter.Seq[llm.Chunk] {
	return func(yield func(llm.Chunk) bool) {
		if fin, ok := c.stream(ctx, req, yield); ok {
			yield(fin)
		}
	}
}

// stream runs the attempt, yielding every chunk but the finish, which it
// returns; ok is false when the consumer stopped early and must not be
// yielded to again.
func (c *Client) stream(ctx context.Context, req *llm.Request, yield func(llm.Chunk) bool) (fin llm.Chunk, ok bool) {
	body, err := encodeRequest(req, &c.encoded)
	if err != nil {
		c.logf("anthropic: encoding request: %v", err)
		return llm.ErrorFinish(llm.CodeInvalidRequest, "request could not be encoded"), true
	}
	call := llm.StartCall(ctx, c.IdleTimeout, c.ProgressTimeout)
	defer call.Close()

	base := strings.TrimRight(c.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	hreq, err := http.NewRequestWithContext(call.Context(), http.MethodPost, base+"/v1/messages", nil)
	if err != nil {
		c.logf("anthropic: building request: %v", err)
		return llm.ErrorFinish(llm.CodeInvalidRequest, "invalid base URL"), true
	}
	defer llm.SetBody(hreq, body).Recycle()
	if c.APIKey != "" {
		hreq.Header.Set("X-Api-Key", c.APIKey)
	}
	hreq.Header.Set("Anthropic-Version", APIVersion)
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")

	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(hreq)
	if err != nil {
		c.logf("anthropic: request failed: %v", err)
		return call.Fail(err), true
	}
	defer resp.Body.Close()
	defer llm.DrainBody(resp.Body) // first: the connection goes back to the pool
	call.Touch()

	if resp.StatusCode/100 != 2 {
		msg, err := io.ReadAll(io.LimitReader(call.Body(resp.Body), maxErrorBody))
		if err != nil && call.Aborted() {
			return call.Fail(err), true
		}
		c.logf("anthropic: HTTP %d: %s", resp.StatusCode, msg)
		if c.ProviderError != nil {
			c.ProviderError(resp.StatusCode, llm.ProviderMessage(msg))
		}
		return llm.StatusFinish(resp.StatusCode, resp.Header, msg), true
	}

	cr := &llm.CountingReader{R: call.Body(resp.Body)}
	t := newTranslator(c.Logf)
	events := sse.NewReader(cr, maxEventSize)
	for {
		ev, err := events.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return c.readFail(call, err), true
		}
		fin := t.feed(ev.Type, ev.Data)
		for _, ch := range t.out {
			call.Progress(ch)
			if !yield(ch) {
				return llm.Chunk{}, false
			}
		}
		t.out = t.out[:0]
		if fin != nil {
			return *fin, true
		}
	}
	// The reader ends quietly at EOF, clean or cut mid-line.
	if call.Context().Err() != nil {
		return call.Fail(context.Cause(call.Context())), true
	}
	if cr.N == 0 {
		return llm.ErrorFinish(llm.CodeEmptyResponse, "provider sent an empty response body"), true
	}
	return llm.ErrorFinish(llm.CodeStreamClosed, "stream ended before message_stop"), true
}

// readFail classifies an error reading the body. Cancellation and the idle
// watchdog come first: they are why a read fails after the context ends.
func (c *Client) readFail(call *llm.Call, err error) llm.Chunk {
	c.logf("anthropic: reading stream: %v", err)
	switch {
	case call.Context().Err() != nil:
		return call.Fail(err)
	case errors.Is(err, bufio.ErrTooLong):
		return llm.ErrorFinish(llm.CodeMalformedResponse, "stream event exceeds the size limit")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return llm.ErrorFinish(llm.CodeStreamClosed, "stream ended before message_stop")
	}
	return call.Fail(err)
}

func (c *Client) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}
