// Package openai is the adapter for the OpenAI chat-completions streaming
// wire, used by the deepseek and openai providers and by any
// OpenAI-compatible server (Ollama, vLLM, llama.cpp server).
//
// It owns small wire structs instead of an SDK so that every wire fact —
// status, SSE bytes, finish reason, a stream that stops early — is seen and
// classified here, once, into the provider-neutral chunks of package llm.
// It makes exactly one HTTP attempt per Stream call: retrying is the retry
// executor's decision, never the adapter's.
package openai

import (
	"context"
	"io"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/enccache"
)

// maxErrorBody bounds how much of a non-200 body is read: enough for the
// classification markers and the host log, not a memory hazard.
const maxErrorBody = 64 << 10

// Client streams chat completions from one OpenAI-compatible endpoint.
// The zero value of the optional fields is usable.
type Client struct {
	// BaseURL is the endpoint prefix; requests go to BaseURL + "/chat/completions".
	BaseURL string
	// APIKey is sent as a bearer token when non-empty (local servers need none).
	APIKey string
	// HTTP is the client to use (nil: http.DefaultTransport). Its redirect
	// policy is overridden: a redirect is answered as a non-200 status, so
	// one Stream call stays one HTTP attempt.
	HTTP *http.Client
	// IdleTimeout is how long the response may send no byte; <= 0 means
	// llm.DefaultIdleTimeout.
	IdleTimeout time.Duration
	// ProgressTimeout is how long the response may send no content (text,
	// reasoning or tool-call arguments): keep-alive comments and empty
	// events reset the idle watchdog but not this one. <= 0 means
	// llm.DefaultProgressTimeout.
	ProgressTimeout time.Duration
	// Provider is "deepseek" or "openai"; it selects wire quirks (DeepSeek
	// needs reasoning_content sent back on assistant messages).
	Provider string
	// Logf receives raw provider error bodies for the host log. Those bodies
	// never reach a finish message. May be nil.
	Logf func(format string, args ...any)
	// ProviderError, if set, receives the provider's own error message of
	// a failed request (llm.ProviderMessage): for the user's terminal,
	// never for the model, a diagnostic or an event.
	ProviderError func(status int, message string)

	// encoded holds each history message's encoding for the next request
	// (Provider must not change once the client is used: it is part of
	// the encoding).
	encoded enccache.Cache[[]byte]
	kept    kept
}

var _ llm.Model = (*Client)(nil)

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// httpClient returns c.HTTP, or a default, with redirects disabled.
func (c *Client) httpClient() *http.Client {
	var hc http.Client
	if c.HTTP != nil {
		hc = *c.HTTP
	}
	hc.CheckRedirect = noRedirect
	return &hc
}

// Stream sends req and yields the response as chunks, always ending with
// exactly one finish chunk. Each iteration of the returned sequence is one
// HTTP attempt. Breaking out of the loop early closes the response body.
func (c *Client) Stream(ctx context.Context, req *llm.Request) iter.Seq[llm.Chunk] {
	return func(yield func(llm.Chunk) bool) {
		enc, err := encodeRequest(req, c.Provider == "deepseek", &c.encoded, &c.kept)
		if err != nil {
			yield(llm.ErrorFinish(llm.CodeInvalidRequest, "request could not be encoded"))
			return
		}

		call := llm.StartCall(ctx, c.IdleTimeout, c.ProgressTimeout)
		defer call.Close()

		url := strings.TrimRight(c.BaseURL, "/") + "/chat/completions"
		hreq, err := http.NewRequestWithContext(call.Context(), http.MethodPost, url, nil)
		if err != nil {
			yield(llm.ErrorFinish(llm.CodeInvalidRequest, "base URL is not valid"))
			return
		}
		body := llm.SetBody(hreq, enc.body)
		defer func() {
			// The next request appends to this one's bytes, once the
			// transport is done with them.
			if body.Sent() {
				c.kept.put(enc)
			}
		}()
		hreq.Header.Set("Content-Type", "application/json")
		hreq.Header.Set("Accept", "text/event-stream")
		if c.APIKey != "" {
			hreq.Header.Set("Authorization", "Bearer "+c.APIKey)
		}

		resp, err := c.httpClient().Do(hreq)
		if err != nil {
			yield(call.Fail(err))
			return
		}
		defer resp.Body.Close()
		defer llm.DrainBody(resp.Body) // first: the connection goes back to the pool
		call.Touch()                   // the status line and headers were bytes

		if resp.StatusCode != http.StatusOK {
			prefix, _ := io.ReadAll(io.LimitReader(call.Body(resp.Body), maxErrorBody))
			c.logf("openai: HTTP %d from provider: %s", resp.StatusCode, prefix)
			if c.ProviderError != nil {
				c.ProviderError(resp.StatusCode, llm.ProviderMessage(prefix))
			}
			if call.Aborted() {
				yield(call.Fail(ctx.Err()))
				return
			}
			yield(llm.StatusFinish(resp.StatusCode, resp.Header, prefix))
			return
		}

		d := &decoder{yield: yield, logf: c.logf, progress: call.Progress}
		d.run(call, resp.Body)
	}
}

func (c *Client) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}
