package mock

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reinsdev/reins/internal/jsonw"
)

// Wire names, as recorded in Recorded.Wire.
const (
	WireOpenAI    = "openai"
	WireAnthropic = "anthropic"
	// WireResponses is OpenAI's Responses API (POST /v1/responses).
	WireResponses = "responses"
	// WireGemini is Gemini's streamGenerateContent?alt=sse.
	WireGemini = "gemini"
)

// Recorded.Index values for requests that no script reply answered.
const (
	IndexFallback = -1 // Script.Fallback answered
	IndexNone     = -2 // no reply fitted (HTTP 500) or the request was invalid
)

// Recorded is one request as the server saw it.
type Recorded struct {
	Wire   string // WireOpenAI, WireAnthropic, WireResponses or WireGemini
	Path   string
	Header http.Header
	Body   []byte // the raw request JSON
	// Index is the position in Script.Replies of the reply that answered,
	// IndexFallback or IndexNone.
	Index int
	// Model, System and Last are what the engine read from Body: the model,
	// the system prompt and the last user or tool message text.
	Model  string
	System string
	Last   string
}

// Server is the mock engine: it picks a scripted reply per request and
// renders it on the wire the request came in on. It is an http.Handler and
// safe for concurrent use.
type Server struct {
	script *Script

	mu   sync.Mutex
	used []bool
	// reqs are the most recent requests (at most KeepRequests, and
	// KeepBytes of bodies); total counts them all.
	reqs     []Recorded
	reqBytes int
	total    int
	cache    promptCache
	held     int // requests holding a Barrier reply
	waiters  []*barrierWaiter

	inFlight atomic.Int64
	ids      atomic.Int64

	// onWait, for tests, runs when a request starts waiting at a barrier.
	onWait func()
}

type barrierWaiter struct {
	n  int
	ch chan struct{}
}

// NewServer returns a server for s; a nil s means DefaultScript. The
// script must not be modified while the server runs.
func NewServer(s *Script) *Server {
	if s == nil {
		s = DefaultScript()
	}
	return &Server{script: s, used: make([]bool, len(s.Replies))}
}

// The server remembers the most recent requests only, so that a long
// session (a benchmark of 1,000 steps, each request carrying the whole
// history) does not hold every body it was sent.
const (
	KeepRequests = 256
	KeepBytes    = 8 << 20
)

// Requests returns a copy of the requests received so far that the server
// still holds (the most recent: KeepRequests, KeepBytes), in arrival
// order. Every test that sends fewer sees them all.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Recorded, len(s.reqs))
	copy(out, s.reqs)
	return out
}

// Request returns request n (0-based, in arrival order), if the server
// still holds it.
func (s *Server) Request(n int) (Recorded, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := n - (s.total - len(s.reqs))
	if i < 0 || i >= len(s.reqs) {
		return Recorded{}, false
	}
	return s.reqs[i], true
}

// Count is the number of requests received so far.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// record keeps rec among the most recent requests; s.mu is held.
func (s *Server) record(rec Recorded) {
	s.total++
	s.reqs = append(s.reqs, rec)
	s.reqBytes += len(rec.Body)
	drop := 0
	for len(s.reqs)-drop > KeepRequests || s.reqBytes > KeepBytes && len(s.reqs)-drop > 1 {
		s.reqBytes -= len(s.reqs[drop].Body)
		drop++
	}
	if drop > 0 {
		// Copy down so the dropped bodies can be collected.
		n := copy(s.reqs, s.reqs[drop:])
		clear(s.reqs[n:])
		s.reqs = s.reqs[:n]
	}
}

// InFlight is the number of requests being answered right now.
func (s *Server) InFlight() int { return int(s.inFlight.Load()) }

// wireOf routes by path suffix, so a base URL with a path prefix works.
func wireOf(path string) string {
	switch {
	case strings.HasSuffix(path, "/chat/completions"):
		return WireOpenAI
	case strings.HasSuffix(path, "/v1/messages"), path == "/messages":
		return WireAnthropic
	case strings.HasSuffix(path, "/responses"):
		return WireResponses
	case geminiModel(path) != "":
		return WireGemini
	}
	return ""
}

// ServeHTTP answers POST /chat/completions, /v1/chat/completions (OpenAI
// wire), /v1/messages (Anthropic wire), /v1/responses and /responses
// (Responses wire) and /v1beta/models/MODEL:streamGenerateContent (Gemini
// wire, with or without the version segment).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)

	wire := wireOf(r.URL.Path)
	if wire == "" {
		writeError(w, WireOpenAI, http.StatusNotFound, "mock: unknown path")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, wire, http.StatusMethodNotAllowed, "mock: method not allowed")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client went away mid-request
	}
	p, perr := parsePrompt(wire, body)
	if wire == WireGemini {
		p.model = geminiModel(r.URL.Path) // Gemini names the model in the path
	}

	rec := Recorded{Wire: wire, Path: r.URL.Path, Header: r.Header.Clone(), Body: body,
		Index: IndexNone, Model: p.model, System: p.system, Last: p.lastText()}
	s.mu.Lock()
	seq := s.total + 1
	var reply *Reply
	if perr == nil {
		reply, rec.Index = s.pick(p)
	}
	s.record(rec)
	s.mu.Unlock()

	switch {
	case perr != nil:
		writeError(w, wire, http.StatusBadRequest, "mock: request body is not the expected JSON")
		return
	case reply == nil:
		writeError(w, wire, http.StatusInternalServerError,
			fmt.Sprintf("mock: no scripted reply for request %d", seq))
		return
	}

	ctx := r.Context()
	if reply.Barrier > 0 {
		ok := s.barrier(ctx, reply.Barrier)
		defer s.leaveBarrier()
		if !ok {
			return
		}
	}
	if !sleep(ctx, time.Duration(reply.Delay)) {
		return
	}
	s.answer(ctx, w, wire, reply, p, seq)
}

// pick selects the reply for p; s.mu is held.
func (s *Server) pick(p prompt) (*Reply, int) {
	for i := range s.script.Replies {
		r := &s.script.Replies[i]
		if s.used[i] || !p.matches(r.Match) {
			continue
		}
		if !r.Repeat {
			s.used[i] = true
		}
		return r, i
	}
	if s.script.Fallback != nil {
		return s.script.Fallback, IndexFallback
	}
	return nil, IndexNone
}

// barrier counts the request as holding a barrier reply and waits until n
// such requests are in flight, or ctx ends (false). The caller must call
// leaveBarrier either way.
func (s *Server) barrier(ctx context.Context, n int) bool {
	s.mu.Lock()
	s.held++
	me := &barrierWaiter{n: n, ch: make(chan struct{})}
	s.waiters = append(s.waiters, me)
	// Release every waiter whose count is reached, this one included. A
	// released waiter never re-checks, so a fast finisher lowering the count
	// cannot strand the others.
	kept := s.waiters[:0]
	for _, w := range s.waiters {
		if w.n <= s.held {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	clear(s.waiters[len(kept):])
	s.waiters = kept
	hook := s.onWait
	s.mu.Unlock()

	select {
	case <-me.ch:
		return true
	default:
	}
	if hook != nil {
		hook()
	}
	select {
	case <-me.ch:
		return true
	case <-ctx.Done():
		s.mu.Lock()
		for i, w := range s.waiters {
			if w == me {
				s.waiters = append(s.waiters[:i], s.waiters[i+1:]...)
				break
			}
		}
		s.mu.Unlock()
		return false
	}
}

func (s *Server) leaveBarrier() {
	s.mu.Lock()
	s.held--
	s.mu.Unlock()
}

// answer writes the reply: a fault, a raw HTTP answer or a stream.
func (s *Server) answer(ctx context.Context, w http.ResponseWriter, wire string, r *Reply, p prompt, seq int) {
	for k, v := range r.Headers {
		w.Header().Set(k, v)
	}
	switch {
	case r.Fault == FaultReset:
		resetConn(w)
		return
	case r.Fault == FaultContextWindow:
		switch wire {
		case WireOpenAI, WireResponses:
			writeRaw(w, http.StatusBadRequest, "application/json", openAIContextWindow)
		case WireGemini:
			writeRaw(w, http.StatusBadRequest, "application/json", geminiContextWindow)
		default:
			writeRaw(w, http.StatusBadRequest, "application/json", anthropicContextWindow)
		}
		return
	case r.Fault == FaultOverloaded && wire == WireOpenAI:
		writeRaw(w, 529, "application/json", openAIOverloaded)
		return

	case r.Body != "" || (r.Status != 0 && r.Status != http.StatusOK):
		status := r.Status
		if status == 0 {
			status = http.StatusOK
		}
		if r.Body == "" {
			writeError(w, wire, status, fmt.Sprintf("mock: HTTP %d", status))
			return
		}
		ct := "application/json"
		if status == http.StatusOK {
			ct = "text/event-stream"
		}
		writeRaw(w, status, ct, r.Body)
		return
	}

	h := w.Header()
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "text/event-stream")
	}
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush(w)
	switch r.Fault {
	case FaultEmptyBody:
		return
	case FaultStall:
		if r.KeepAlive {
			keepAliveUntilDone(ctx, w, time.Duration(r.ChunkDelay))
		}
		<-ctx.Done()
		return
	}
	e := &emitter{w: w, ctx: ctx, keepAlive: r.KeepAlive, delay: time.Duration(r.ChunkDelay)}
	rd := s.newRendering(r, p, seq)
	switch wire {
	case WireOpenAI:
		rd.openAI(e)
	case WireResponses:
		rd.responses(e)
	case WireGemini:
		rd.gemini(e)
	default:
		rd.anthropic(e)
	}
}

// keepAliveUntilDone sends an SSE keep-alive comment every period (10 ms
// when 0) until ctx ends: a live connection that carries no content, as a
// proxy in front of a dead upstream sends.
func keepAliveUntilDone(ctx context.Context, w http.ResponseWriter, period time.Duration) {
	if period <= 0 {
		period = 10 * time.Millisecond
	}
	for sleep(ctx, period) {
		if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
			return
		}
		flush(w)
	}
}

// resetConn closes the connection without an HTTP answer: the in-process
// transport turns it into a connection-reset error; over TCP the
// connection is hijacked and closed with an RST.
func resetConn(w http.ResponseWriter) {
	if rs, ok := w.(interface{ resetConnection() }); ok {
		rs.resetConnection()
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // RST rather than FIN
	}
	_ = conn.Close()
}

const (
	openAIContextWindow = `{"error":{"message":"This model's maximum context length is 128000 tokens. ` +
		`However, your messages resulted in 250000 tokens. Please reduce the length of the messages.",` +
		`"type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
	anthropicContextWindow = `{"type":"error","error":{"type":"invalid_request_error",` +
		`"message":"prompt is too long: 250000 tokens > 200000 maximum"}}`
	openAIOverloaded = `{"error":{"message":"The server is overloaded. Please try again later.",` +
		`"type":"server_error","param":null,"code":"overloaded"}}`
)

func writeRaw(w http.ResponseWriter, status int, contentType, body string) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", contentType)
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// writeError answers status with a JSON error body in the wire's shape.
// Messages are fixed texts chosen to carry no classification marker
// (quota, context window) that the status alone does not imply.
func writeError(w http.ResponseWriter, wire string, status int, msg string) {
	var body []byte
	if wire == WireGemini {
		body, _ = jsonw.MarshalNoHTML(map[string]any{
			"error": map[string]any{"code": status, "message": msg, "status": geminiStatus(status)},
		})
	} else if wire == WireAnthropic {
		body, _ = jsonw.MarshalNoHTML(map[string]any{
			"type":  "error",
			"error": map[string]any{"type": anthropicErrorType(status), "message": msg},
		})
	} else {
		body, _ = jsonw.MarshalNoHTML(map[string]any{
			"error": map[string]any{"message": msg, "type": openAIErrorType(status), "param": nil, "code": nil},
		})
	}
	writeRaw(w, status, "application/json", string(body))
}

func openAIErrorType(status int) string {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return "authentication_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

func anthropicErrorType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// emitter writes SSE events: the optional keep-alive comment, the
// inter-chunk delay (cancellable) and a flush after every event. After the
// first failed write or cancellation every send is a no-op returning false.
type emitter struct {
	w         http.ResponseWriter
	ctx       context.Context
	keepAlive bool
	delay     time.Duration
	sent      int
	failed    bool
}

// send writes one event; name "" writes a data-only event (OpenAI wire).
func (e *emitter) send(name string, data []byte) bool {
	if e.failed {
		return false
	}
	if e.sent > 0 && !sleep(e.ctx, e.delay) {
		e.failed = true
		return false
	}
	if e.ctx.Err() != nil {
		e.failed = true
		return false
	}
	e.sent++
	var b bytes.Buffer
	b.Grow(len(data) + 64)
	if e.keepAlive {
		b.WriteString(": keep-alive\n\n")
	}
	if name != "" {
		b.WriteString("event: ")
		b.WriteString(name)
		b.WriteByte('\n')
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
	if _, err := e.w.Write(b.Bytes()); err != nil {
		e.failed = true
		return false
	}
	flush(e.w)
	return true
}

// sendJSON marshals v and sends it.
func (e *emitter) sendJSON(name string, v any) bool {
	data, err := jsonw.MarshalNoHTML(v)
	if err != nil {
		e.failed = true
		return false
	}
	return e.send(name, data)
}
