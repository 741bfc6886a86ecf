// Package responses is the adapter for OpenAI's Responses API
// (`POST {base}/responses`, streamed), the wire of the openai provider and
// of Codex. Like the chat and Anthropic adapters it owns the few wire
// structs it reads instead of an SDK, so every wire fact — status, SSE
// bytes, the terminal event, a stream that stops early — is classified
// here into the provider-neutral chunks of package llm, and one Stream
// call is exactly one HTTP attempt.
//
// The request is stateless (`store: false`, no previous_response_id): the
// whole history is sent every step, and reasoning items come back with
// their `encrypted_content`, carried in the reasoning block's Signature so
// the next request can hand the model its own reasoning again.
package responses

import (
	"context"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/enccache"
)

// Client streams responses from one Responses-API endpoint. The zero value
// of the optional fields is usable.
type Client struct {
	// BaseURL is the endpoint prefix (e.g. https://api.openai.com/v1);
	// requests go to BaseURL + "/responses".
	BaseURL string
	// APIKey is sent as a bearer token when non-empty.
	APIKey string
	// HTTP is the client to use (nil: http.DefaultClient); redirects are
	// answered as a non-200 status, so one Stream is one attempt.
	HTTP *http.Client
	// IdleTimeout and ProgressTimeout are llm.StartCall's (<= 0: defaults).
	IdleTimeout, ProgressTimeout time.Duration
	// Effort, when set, is sent as reasoning.effort (low, medium, high);
	// a request's own Effort wins.
	Effort llm.Effort
	// Logf receives raw provider error texts for the host log; may be nil.
	Logf func(format string, args ...any)
	// ProviderError receives the provider's own message of a failed
	// request, for the user's terminal only; may be nil.
	ProviderError func(status int, message string)

	tools enccache.Tools // the last request's tools, encoded
}

var _ llm.Model = (*Client)(nil)

// Stream sends req and yields the response as chunks ending with exactly
// one finish.
func (c *Client) Stream(ctx context.Context, req *llm.Request) iter.Seq[llm.Chunk] {
	effort := c.Effort
	if req.Effort != "" {
		effort = req.Effort
	}
	body, err := encodeRequest(req, effort, &c.tools)
	if err != nil {
		return llm.Unencodable()
	}
	h := llm.SSEHeader()
	if c.APIKey != "" {
		h.Set("Authorization", "Bearer "+c.APIKey)
	}
	a := &llm.SSEAttempt{
		HTTP: c.HTTP, URL: strings.TrimRight(c.BaseURL, "/") + "/responses", Header: h, Body: body,
		IdleTimeout: c.IdleTimeout, ProgressTimeout: c.ProgressTimeout,
		Wire: "responses", Logf: c.Logf, ProviderError: c.ProviderError,
	}
	return a.Stream(ctx, newTranslator(c.Logf))
}
