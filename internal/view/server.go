package view

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Options bound the live views of a Server; zero values take the defaults.
type Options struct {
	// Poll is how often a live view looks for growth of the logs (500 ms).
	Poll time.Duration
	// MaxStreams is how many live views may be open at once (16); one
	// more is refused with 503.
	MaxStreams int
	// StreamLife ends a live view's stream after this long (30 min); the
	// browser's EventSource reconnects by itself.
	StreamLife time.Duration
	// Heartbeat is how often an idle stream sends a comment, which is how
	// a closed connection is noticed (15 s).
	Heartbeat time.Duration
}

// Server serves the view of one sessions directory. Every request must
// carry the token (query parameter token, or header X-Reins-Token) and
// name a loopback host.
type Server struct {
	reader  *Reader
	token   []byte
	opts    Options
	streams chan struct{}
}

// TokenParam is the query parameter that carries the token.
const TokenParam = "token"

// NewToken returns a fresh random token: 32 bytes from crypto/rand.
func NewToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// NewServer returns a Server of the sessions directory root.
func NewServer(root, token string, opts Options) *Server {
	if opts.Poll <= 0 {
		opts.Poll = 500 * time.Millisecond
	}
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = 16
	}
	if opts.StreamLife <= 0 {
		opts.StreamLife = 30 * time.Minute
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	return &Server{reader: NewReader(root), token: []byte(token), opts: opts, streams: make(chan struct{}, opts.MaxStreams)}
}

// Handler returns the HTTP handler: the page, the session list, one
// session's tree, one session's detail and a session's live stream.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /api/sessions", s.list)
	mux.HandleFunc("GET /api/sessions/{id}", sessionJSON(s.reader.Tree))
	mux.HandleFunc("GET /api/sessions/{id}/detail", sessionJSON(s.reader.Detail))
	mux.HandleFunc("GET /api/sessions/{id}/events", s.events)
	return s.guard(mux)
}

// guard refuses a request without the token or to a host that is not
// loopback (a DNS-rebinding page names its own host), and sets the headers
// every response carries.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		if !loopbackHost(r.Host) {
			http.Error(w, "forbidden host", http.StatusForbidden)
			return
		}
		got := r.URL.Query().Get(TokenParam)
		if got == "" {
			got = r.Header.Get("X-Reins-Token")
		}
		if subtle.ConstantTimeCompare([]byte(got), s.token) != 1 {
			http.Error(w, "a valid token is required: open the address reins view printed", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	nonce, err := NewToken()
	if err != nil {
		http.Error(w, "no randomness", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Security-Policy", servedCSP(nonce))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	writePage(w, nonce, pageData{Mode: "live"})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// fail answers an error with a fixed text: a path or an error from a log
// never reaches the page.
func fail(w http.ResponseWriter, err error) {
	if errors.Is(err, ErrNoSession) {
		http.Error(w, "no such session", http.StatusNotFound)
		return
	}
	http.Error(w, "the session log cannot be read", http.StatusInternalServerError)
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	l, err := s.reader.List()
	if err != nil {
		http.Error(w, "the sessions directory cannot be read", http.StatusInternalServerError)
		return
	}
	writeJSON(w, l)
}

// sessionJSON answers with what read makes of the session the path's id
// names, as JSON (a session's tree, its detail), or with fail's text.
func sessionJSON[T any](read func(id string) (T, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := read(r.PathValue("id"))
		if err != nil {
			fail(w, err)
			return
		}
		writeJSON(w, v)
	}
}

// events is the live view: a server-sent event "tree" with the whole tree
// whenever one of its logs grew (and once at the start), read by polling
// the logs every Options.Poll. It ends when the client goes, after
// Options.StreamLife, or when a write blocks for 10 s.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	select {
	case s.streams <- struct{}{}:
		defer func() { <-s.streams }()
	default:
		http.Error(w, "too many live views are open", http.StatusServiceUnavailable)
		return
	}
	t, err := s.reader.Tree(id)
	if err != nil {
		fail(w, err)
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.StreamLife)
	defer cancel()
	send := func(b []byte) bool {
		rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send([]byte("retry: 2000\n\n")) {
		return
	}
	poll := time.NewTicker(s.opts.Poll)
	defer poll.Stop()
	beat := time.NewTicker(s.opts.Heartbeat)
	defer beat.Stop()
	last := ""
	for {
		if t != nil {
			if sig := signature(t); sig != last {
				last = sig
				data, err := json.Marshal(t)
				if err != nil || !send(append(append([]byte("event: tree\ndata: "), data...), '\n', '\n')) {
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-beat.C:
			if !send([]byte(": ping\n\n")) {
				return
			}
			t = nil
		case <-poll.C:
			t, err = s.reader.Tree(id)
			if err != nil {
				t = nil // vanished for now (a replaced file): keep the last tree shown
			}
		}
	}
}

// signature is a text that changes whenever a log in the tree grows, one
// joins or leaves it, or a node changes state (a writer that died leaves
// its log as it was).
func signature(t *Tree) string {
	var b strings.Builder
	for _, k := range sortedKeys(t.Versions) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strconv.FormatInt(t.Versions[k], 10))
		b.WriteByte(';')
	}
	var walk func(n *Node)
	walk = func(n *Node) {
		b.WriteString(string(n.State))
		b.WriteByte(',')
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(t.Root)
	return b.String()
}

// Listen opens a listener on a free loopback port (or port, when not 0).
func Listen(port int) (net.Listener, error) {
	return net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
}

// URL is the address of the page served on l, with the token, opened on
// session id when it is not empty.
func URL(l net.Listener, token, id string) string {
	u := fmt.Sprintf("http://%s/?%s=%s", l.Addr().String(), TokenParam, token)
	if id != "" {
		u += "#s=" + id
	}
	return u
}

// Serve serves h on l until ctx ends, then shuts down: open streams end
// with their context, and what is still open after 2 s is closed.
func Serve(ctx context.Context, l net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	<-errc
	return nil
}
