package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// This file holds the wire facts both HTTP adapters classify the same way:
// HTTP statuses, Retry-After, transport errors, cancellation and the idle
// watchdog. Stream-level facts (terminal signals, payload shapes, finish
// reasons) stay in each adapter, which owns its wire.

// DefaultIdleTimeout is how long a response may send no byte (docs/providers.md).
const DefaultIdleTimeout = 300 * time.Second

// DefaultProgressTimeout is how long a response may send no content while
// still sending bytes (keep-alive comments, pings, empty events): a proxy
// in front of a dead upstream can keep the idle watchdog fed forever.
const DefaultProgressTimeout = 10 * time.Minute

// MaxLineBytes is the longest SSE line an adapter must read (docs/providers.md).
const MaxLineBytes = 16 << 20

var (
	errIdle       = errors.New("llm: no byte within the idle timeout")
	errNoProgress = errors.New("llm: no content within the progress timeout")
)

// Call is one HTTP attempt guarded by two watchdogs: if no byte of the
// response arrives for the idle timeout, or no content for the progress
// timeout, the attempt's context is cancelled and the failure classifies as
// TIMEOUT rather than ABORTED.
type Call struct {
	parent   context.Context
	ctx      context.Context
	cancel   context.CancelCauseFunc
	idle     time.Duration
	progress time.Duration
	mu       sync.Mutex
	timer    *time.Timer
	ptimer   *time.Timer
}

// StartCall begins an attempt under parent. idle <= 0 means
// DefaultIdleTimeout, progress <= 0 DefaultProgressTimeout.
func StartCall(parent context.Context, idle, progress time.Duration) *Call {
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	if progress <= 0 {
		progress = DefaultProgressTimeout
	}
	ctx, cancel := context.WithCancelCause(parent)
	c := &Call{parent: parent, ctx: ctx, cancel: cancel, idle: idle, progress: progress}
	c.timer = time.AfterFunc(idle, func() { cancel(errIdle) })
	c.ptimer = time.AfterFunc(progress, func() { cancel(errNoProgress) })
	return c
}

// Context is the attempt's context, for the HTTP request.
func (c *Call) Context() context.Context { return c.ctx }

// Touch resets the watchdog: a byte arrived.
func (c *Call) Touch() {
	c.mu.Lock()
	c.timer.Reset(c.idle)
	c.mu.Unlock()
}

// Progress resets the no-progress watchdog if ch carries content: a text,
// reasoning or tool-call delta that is not empty. Adapters call it for
// every chunk they yield; keep-alives and empty events yield none.
func (c *Call) Progress(ch Chunk) {
	if !IsProgress(ch) {
		return
	}
	c.mu.Lock()
	c.ptimer.Reset(c.progress)
	c.mu.Unlock()
}

// IsProgress reports whether ch is content: what the no-progress deadline
// waits for.
func IsProgress(ch Chunk) bool {
	switch ch.Type {
	case ChunkTextDelta, ChunkReasoningDelta, ChunkToolCallDelta:
		return ch.Delta != ""
	}
	return false
}

// Body wraps a response body so every read that returns bytes resets the
// watchdog.
func (c *Call) Body(r io.Reader) io.Reader { return &watchedReader{r: r, c: c} }

// Close stops the watchdog and releases the attempt's context.
func (c *Call) Close() {
	c.mu.Lock()
	c.timer.Stop()
	c.ptimer.Stop()
	c.mu.Unlock()
	c.cancel(context.Canceled)
}

type watchedReader struct {
	r io.Reader
	c *Call
}

func (w *watchedReader) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if n > 0 {
		w.c.Touch()
	}
	return n, err
}

// Fail classifies an error from sending the request or reading the body:
// ABORTED when the caller cancelled, TIMEOUT when the watchdog fired,
// TRANSPORT otherwise (refused, reset, DNS, an unexpected EOF mid-body is
// reported by the adapter as STREAM_CLOSED instead).
func (c *Call) Fail(err error) Chunk {
	if c.parent.Err() != nil {
		return Chunk{Type: ChunkFinish, Finish: &Finish{Kind: FinishAborted, Code: CodeAborted, Message: "request cancelled"}}
	}
	switch cause := context.Cause(c.ctx); {
	case errors.Is(cause, errIdle):
		return ErrorFinish(CodeTimeout, fmt.Sprintf("no response byte for %s", c.idle))
	case errors.Is(cause, errNoProgress):
		return ErrorFinish(CodeTimeout, fmt.Sprintf("no content for %s (only keep-alives or empty events)", c.progress))
	}
	return ErrorFinish(CodeTransport, transportMessage(err))
}

// transportMessage is a transport failure's message: its class
// (transportKind) and, where the error says which endpoint it was trying,
// that endpoint's host and port — the user's own base URL, so that
// "connection refused" says where (issue 48): "connect 127.0.0.1:9:
// connection refused".
func transportMessage(err error) string {
	kind := transportKind(err)
	addr := endpointOf(err)
	switch {
	case addr == "":
		return "transport failure: " + kind
	case kind == "connection refused" || kind == "connect timeout":
		return "connect " + addr + ": " + kind
	}
	return addr + ": " + kind
}

// endpointOf is the host:port of the request err failed (the port the
// scheme's when the URL names none), or "" when err does not say or the
// host holds anything but the characters of a host name or address.
func endpointOf(err error) string {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return ""
	}
	u, perr := url.Parse(ue.URL)
	if perr != nil || u.Host == "" {
		return ""
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if host == "" || port == "" || len(host) > 255 || strings.ContainsFunc(host, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == ':' || r == '_')
	}) {
		return ""
	}
	return net.JoinHostPort(host, port)
}

// Aborted reports whether the caller cancelled (as opposed to the watchdog).
func (c *Call) Aborted() bool { return c.parent.Err() != nil }

// transportKind names the class of a transport error with a fixed word, so
// no address or OS text leaks into a finish message.
func transportKind(err error) string {
	s := err.Error()
	switch {
	case strings.Contains(s, "connection refused"):
		return "connection refused"
	case strings.Contains(s, "connection reset"):
		return "connection reset"
	case strings.Contains(s, "no such host"), strings.Contains(s, "server misbehaving"):
		return "host lookup failed"
	case strings.Contains(s, "EOF"):
		return "connection closed"
	case strings.Contains(s, "timeout"):
		return "connect timeout"
	}
	return "network error"
}

// StatusFinish classifies a non-200 HTTP answer. body is (a prefix of) the
// response body, consulted only for the documented markers of a too-long
// prompt and an exhausted quota; its text never reaches the message.
func StatusFinish(status int, header http.Header, body []byte) Chunk {
	lower := strings.ToLower(string(body))
	msg := fmt.Sprintf("provider answered HTTP %d", status)
	switch {
	case isContextWindow(lower):
		return ErrorFinish(CodeContextWindowExceeded, msg+": prompt exceeds the context window")
	case status == http.StatusPaymentRequired || isQuota(lower):
		return ErrorFinish(CodeQuota, msg+": quota or balance exhausted")
	case status == http.StatusTooManyRequests:
		c := ErrorFinish(CodeRateLimit, msg)
		c.Finish.RetryAfter = RetryAfter(header, time.Now())
		return c
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return ErrorFinish(CodeAuth, msg)
	case status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge || status == http.StatusUnprocessableEntity:
		return ErrorFinish(CodeInvalidRequest, msg)
	case status >= 500 || strings.Contains(lower, "overloaded_error"):
		c := ErrorFinish(CodeServer, msg)
		c.Finish.RetryAfter = RetryAfter(header, time.Now())
		return c
	}
	return ErrorFinish(CodeInvalidRequest, msg)
}

func isContextWindow(lower string) bool {
	for _, m := range []string{
		"context_length_exceeded", "maximum context length", "prompt is too long",
		"context window", "model_context_window_exceeded", "too many tokens",
		"exceeds the maximum number of tokens", // Gemini
	} {
		if strings.Contains(lower, m) {
			return true
		}
	}
	return false
}

func isQuota(lower string) bool {
	for _, m := range []string{"insufficient_quota", "insufficient balance", "billing_error", "credit balance is too low"} {
		if strings.Contains(lower, m) {
			return true
		}
	}
	return false
}

// IsContextWindowMessage reports whether an in-stream error text is the
// provider saying the prompt is too long.
func IsContextWindowMessage(s string) bool { return isContextWindow(strings.ToLower(s)) }

// RetryAfter parses a Retry-After (seconds or HTTP date) or retry-after-ms
// header; zero when absent or unparsable.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
