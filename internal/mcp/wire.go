package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/reinsdev/reins/internal/llm/sse"
)

// stdioWire is MCP's stdio transport: one JSON-RPC message per line on
// the server's stdin and stdout, each at most maxFrame bytes.
type stdioWire struct {
	r  io.ReadCloser
	w  io.WriteCloser
	sc *bufio.Scanner

	wmu       sync.Mutex
	closeOnce sync.Once
	closeErr  error
}

func newStdioWire(r io.ReadCloser, w io.WriteCloser) *stdioWire {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxFrame+1)
	return &stdioWire{r: r, w: w, sc: sc}
}

func (s *stdioWire) recv() ([]byte, error) {
	for s.sc.Scan() {
		if line := bytes.TrimSpace(s.sc.Bytes()); len(line) > 0 {
			return line, nil
		}
	}
	if err := s.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("mcp: the server sent a line over %d bytes", maxFrame)
		}
		return nil, err
	}
	return nil, io.EOF
}

// send writes msg and a newline. A write ctx ends mid-way (a server that
// does not read its stdin) is cut short where the pipe allows it, and
// any failed write breaks the connection: a half-written line cannot be
// taken back.
func (s *stdioWire) send(ctx context.Context, msg []byte, _ int64, _ func([]byte) (bool, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	line := make([]byte, 0, len(msg)+1)
	line = append(append(line, msg...), '\n')
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if d, ok := s.w.(interface{ SetWriteDeadline(time.Time) error }); ok {
		fired := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			d.SetWriteDeadline(time.Unix(1, 0))
			close(fired)
		})
		defer func() {
			if !stop() {
				// ctx ended as the write did: the deadline must not
				// outlive this write.
				<-fired
				d.SetWriteDeadline(time.Time{})
			}
		}()
	}
	if _, err := s.w.Write(line); err != nil {
		s.close()
		return err
	}
	return nil
}

// close closes both pipes: the server sees EOF, the reader ends.
func (s *stdioWire) close() error {
	s.closeOnce.Do(func() {
		s.closeErr = errors.Join(s.w.Close(), s.r.Close())
	})
	return s.closeErr
}

// httpWire is MCP's streamable HTTP transport, as reins uses it: every
// message is a POST to the endpoint; the answer to a request is the
// response, a JSON body or an event stream (on which the server may
// first send its own requests and notifications); a notification or
// response is acknowledged with 202. The session id the server returned
// on initialize goes with every later request, the protocol version once
// negotiated, and close deletes the session. reins opens no standalone
// GET stream (it wants nothing the server would say unasked) and does not
// resume broken streams: a broken stream is a broken connection.
type httpWire struct {
	url    string
	client *http.Client
	// ctx ends at close: every request under way ends with it.
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	sessionID string
	protocol  string
	gone      bool // the server answered 404 to the session
	closeOnce sync.Once
}

// Header names of the streamable HTTP transport.
const (
	headerSessionID = "Mcp-Session-Id"
	headerProtocol  = "MCP-Protocol-Version"
)

// deleteWait bounds the DELETE that ends an HTTP session.
const deleteWait = 5 * time.Second

func newHTTPWire(url string, client *http.Client) *httpWire {
	h := &httpWire{url: url, client: client}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	return h
}

func (h *httpWire) setProtocol(v string) {
	h.mu.Lock()
	h.protocol = v
	h.mu.Unlock()
}

// headers sets the session's headers on req.
func (h *httpWire) headers(req *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sessionID != "" {
		req.Header.Set(headerSessionID, h.sessionID)
	}
	if h.protocol != "" {
		req.Header.Set(headerProtocol, h.protocol)
	}
}

func (h *httpWire) send(ctx context.Context, msg []byte, id int64, deliver func([]byte) (bool, error)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(h.ctx, cancel)
	defer stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(msg))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	h.headers(req)
	resp, err := h.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound && req.Header.Get(headerSessionID) != "" {
		h.mu.Lock()
		h.gone = true
		h.mu.Unlock()
		return errSessionGone
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return refusal(resp)
	}
	if sid := resp.Header.Get(headerSessionID); sid != "" {
		h.mu.Lock()
		had := h.sessionID
		if had == "" {
			h.sessionID = sid
		}
		h.mu.Unlock()
		if had != "" && had != sid {
			return errors.New("mcp: the server changed the session id")
		}
	}
	if id == 0 {
		return nil // a notification or response: 202 (a body, if any, is not read)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxFrame+1))
		if err != nil {
			return err
		}
		if len(b) > maxFrame {
			return fmt.Errorf("mcp: the server sent a message over %d bytes", maxFrame)
		}
		got, err := deliver(b)
		if err != nil {
			return err
		}
		if !got {
			return errNoAnswer
		}
		return nil
	case "text/event-stream":
		r := sse.NewReader(resp.Body, maxFrame)
		for {
			ev, err := r.Next()
			if errors.Is(err, io.EOF) {
				return errNoAnswer
			}
			if errors.Is(err, bufio.ErrTooLong) {
				return fmt.Errorf("mcp: the server sent an event over %d bytes", maxFrame)
			}
			if err != nil {
				return err
			}
			if (ev.Type != "" && ev.Type != "message") || len(bytes.TrimSpace(ev.Data)) == 0 {
				continue // a priming event, or one MCP does not define
			}
			got, err := deliver(ev.Data)
			if err != nil {
				return err
			}
			if got {
				return nil
			}
		}
	}
	return fmt.Errorf("mcp: the server answered with content type %.60q", ct)
}

// rejected is a request the server refused without ending the
// connection: a passing overload (429, 502, 503, 504), or a JSON-RPC
// error sent with an HTTP error status. The call fails; the session goes
// on.
type rejected struct{ err error }

func (r *rejected) Error() string { return r.err.Error() }
func (r *rejected) Unwrap() error { return r.err }

// refusal is what a non-2xx answer means: a *rejected for a passing
// status or a JSON-RPC error body (which stays an *rpcError to errors.As,
// so the call reports its code), else an error that breaks the
// connection.
func refusal(resp *http.Response) error {
	status := fmt.Errorf("mcp: HTTP status %d", resp.StatusCode)
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return &rejected{status}
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxFrame))
	var m message
	if json.Unmarshal(b, &m) == nil && m.JSONRPC == "2.0" && m.Error != nil {
		return &rejected{fmt.Errorf("%w (%w)", m.Error, status)}
	}
	return status
}

// close deletes the session (best effort, within deleteWait) and ends
// every request under way.
func (h *httpWire) close() error {
	var err error
	h.closeOnce.Do(func() {
		defer h.cancel()
		h.mu.Lock()
		sid, gone := h.sessionID, h.gone
		h.mu.Unlock()
		if sid == "" || gone {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), deleteWait)
		defer cancel()
		req, rerr := http.NewRequestWithContext(ctx, http.MethodDelete, h.url, nil)
		if rerr != nil {
			err = rerr
			return
		}
		h.headers(req)
		resp, rerr := h.client.Do(req)
		if rerr != nil {
			err = rerr
			return
		}
		resp.Body.Close()
	})
	return err
}
