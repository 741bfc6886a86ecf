// Package gemini is the adapter for Gemini's streaming generateContent
// wire (`POST {base}/v1beta/models/MODEL:streamGenerateContent?alt=sse`),
// the gemini provider's and Gemini CLI's. Like the other adapters it owns
// the few wire structs it reads, classifies every wire fact into the
// provider-neutral chunks of package llm, and makes exactly one HTTP
// attempt per Stream call.
//
// Gemini's stream has no end marker of its own: the response that carries
// a candidate's finishReason is the terminal signal, and a body that ends
// without one was cut.
package gemini

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/reinsdev/reins/internal/llm"
)

// DefaultBaseURL is the Gemini API root.
const DefaultBaseURL = "https://generativelanguage.googleapis.com"

// APIVersion is the path segment of the wire structs this adapter follows.
const APIVersion = "v1beta"

// Client streams Gemini responses. The zero value (plus an APIKey) is
// usable.
type Client struct {
	// BaseURL is the API root without the version segment; empty means
	// DefaultBaseURL. A base that already ends in /v1beta or /v1 is used
	// as is.
	BaseURL string
	// APIKey is sent as x-goog-api-key when non-empty.
	APIKey string
	// HTTP is the client to use (nil: http.DefaultClient); redirects are
	// answered as a non-200 status, so one Stream is one attempt.
	HTTP *http.Client
	// IdleTimeout and ProgressTimeout are llm.StartCall's (<= 0: defaults).
	IdleTimeout, ProgressTimeout time.Duration
	// ThinkingBudget, when non-zero, is sent as
	// generationConfig.thinkingConfig.thinkingBudget; a request's Effort
	// wins (llm.Effort.ThinkingBudget, the one table of thinking budgets).
	ThinkingBudget int
	// Logf receives raw provider error texts for the host log; may be nil.
	Logf func(format string, args ...any)
	// ProviderError receives the provider's own message of a failed
	// request, for the user's terminal only; may be nil.
	ProviderError func(status int, message string)
}

var _ llm.Model = (*Client)(nil)

// Stream sends req and yields the response as chunks ending with exactly
// one finish.
func (c *Client) Stream(ctx context.Context, req *llm.Request) iter.Seq[llm.Chunk] {
	budget := c.ThinkingBudget
	if req.Effort != "" {
		budget = req.Effort.ThinkingBudget()
	}
	body, err := encodeRequest(req, budget)
	if err != nil {
		return llm.Unencodable()
	}
	h := llm.SSEHeader()
	if c.APIKey != "" {
		h.Set("X-Goog-Api-Key", c.APIKey)
	}
	a := &llm.SSEAttempt{
		HTTP: c.HTTP, URL: c.url(req.Model), Header: h, Body: body,
		IdleTimeout: c.IdleTimeout, ProgressTimeout: c.ProgressTimeout,
		Wire: "gemini", Logf: c.Logf, ProviderError: c.ProviderError,
	}
	return a.Stream(ctx, newTranslator(c.Logf))
}

func (c *Client) url(model string) string {
	base := strings.TrimRight(c.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	if !strings.HasSuffix(base, "/v1beta") && !strings.HasSuffix(base, "/v1") {
		base += "/" + APIVersion
	}
	model = strings.TrimPrefix(model, "models/")
	return base + "/models/" + url.PathEscape(model) + ":streamGenerateContent?alt=sse"
}
