package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// wire carries JSON-RPC messages to a server: a stdio server's pipes
// (stdioWire) or a streamable HTTP endpoint (httpWire).
type wire interface {
	// send writes one message. id is the message's request id (0 for a
	// notification or a response). A wire whose answers come back on the
	// request itself (HTTP) hands each message it reads to deliver and
	// returns once deliver reported the answer to id, or with an error
	// when none came; a stdio wire ignores deliver (its answers are read
	// by the session's reader). An error that is not ctx's breaks the
	// connection.
	send(ctx context.Context, msg []byte, id int64, deliver func([]byte) (bool, error)) error
	// close ends the connection and every goroutine of the wire; it is
	// bounded and idempotent.
	close() error
}

// receiver is a wire whose server writes on its own stream (stdio): the
// session reads it in one goroutine until it ends.
type receiver interface {
	// recv returns the next message; the bytes are valid until the next
	// call. An error ends the connection.
	recv() ([]byte, error)
}

// Errors of a session. What they say goes to the host log only.
var (
	errClosed      = errors.New("mcp: connection closed")
	errNoAnswer    = errors.New("mcp: the server's reply ended without the answer")
	errSessionGone = errors.New("mcp: the server no longer knows the session (HTTP 404)")
)

// notifyWait bounds a notification reins sends on its own account (a
// cancellation, an answer to a server's request).
const notifyWait = 5 * time.Second

// session is one JSON-RPC connection to a server: requests matched to
// answers by id, the server's requests answered (ping; anything else is
// "method not found"), its notifications ignored.
type session struct {
	w    wire
	logf func(string, ...any)
	// ctx ends at close: the session's own sends stop.
	ctx    context.Context
	cancel context.CancelFunc
	next   atomic.Int64

	mu      sync.Mutex
	pending map[int64]chan *message
	err     error // why the connection ended; set once, with done

	done      chan struct{}
	readDone  chan struct{} // closed when the reader ended (receiver wires only)
	closeOnce sync.Once
	closeErr  error
}

// newSession starts a session over w (and its reader, for a receiver).
func newSession(w wire, logf func(string, ...any)) *session {
	s := &session{w: w, logf: logf, pending: map[int64]chan *message{}, done: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if r, ok := w.(receiver); ok {
		s.readDone = make(chan struct{})
		go s.read(r)
	}
	return s
}

// read reads the server's messages until the stream ends or breaks.
func (s *session) read(r receiver) {
	defer close(s.readDone)
	for {
		b, err := r.recv()
		if err == nil {
			_, err = s.deliver(b)
		}
		if err != nil {
			s.fail(err)
			return
		}
	}
}

// fail ends the session with err (the first reason wins); pending calls
// return it.
func (s *session) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	s.err = err
	close(s.done)
}

// Done is closed when the connection is gone.
func (s *session) Done() <-chan struct{} { return s.done }

// Err is why the connection ended (nil while it lasts).
func (s *session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close ends the connection and waits for the session's goroutines.
func (s *session) Close() error {
	s.closeOnce.Do(func() {
		s.closeErr = s.w.close()
		s.cancel()
		s.fail(errClosed)
		if s.readDone != nil {
			<-s.readDone
		}
	})
	return s.closeErr
}

// deliver handles one message from the server and reports whether it was
// an answer reins waited for, and under which id. A message that is not
// JSON-RPC breaks the connection (the stream can no longer be trusted).
func (s *session) deliver(b []byte) (int64, error) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		return 0, errors.New("mcp: the server sent a JSON-RPC batch, which reins does not take")
	}
	var m message
	if err := json.Unmarshal(b, &m); err != nil {
		return 0, fmt.Errorf("mcp: the server sent a message that is not JSON (%d bytes): %w", len(b), err)
	}
	if m.JSONRPC != "2.0" {
		return 0, fmt.Errorf("mcp: the server sent a message that is not JSON-RPC 2.0 (%d bytes)", len(b))
	}
	hasID := len(m.ID) > 0 && !bytes.Equal(m.ID, []byte("null"))
	switch {
	case m.Method != "" && hasID:
		s.answer(m)
		return 0, nil
	case m.Method != "":
		return 0, nil // a notification: reins acts on none
	case !hasID:
		s.logf("mcp: a message with neither method nor id ignored")
		return 0, nil
	}
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	s.mu.Lock()
	ch, ok := s.pending[id]
	if ok && err == nil {
		delete(s.pending, id)
	}
	s.mu.Unlock()
	if err != nil || !ok {
		s.logf("mcp: an answer to no request of reins ignored (id %.40q)", m.ID)
		return 0, nil
	}
	ch <- &m // buffered: one answer per id
	return id, nil
}

// answer replies to a server's request: ping is answered, anything else
// (sampling, roots, elicitation: reins offers none) is "method not found".
func (s *session) answer(req message) {
	reply := message{JSONRPC: "2.0", ID: req.ID}
	if req.Method == "ping" {
		reply.Result = json.RawMessage("{}")
	} else {
		reply.Error = &rpcError{Code: codeMethodNotFound, Message: "reins offers no " + strconv.Quote(req.Method)}
	}
	b, err := json.Marshal(reply)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, notifyWait)
	defer cancel()
	if err := s.w.send(ctx, b, 0, s.deliverAny); err != nil && s.ctx.Err() == nil {
		s.logf("mcp: answering the server's %.60q: %v", req.Method, err)
	}
}

func (s *session) deliverAny(b []byte) (bool, error) {
	_, err := s.deliver(b)
	return false, err
}

// call sends a request and waits for its answer, ctx or the end of the
// connection. A JSON-RPC error answer is an *rpcError; an ended ctx is
// ctx's error; a broken connection is why it broke.
func (s *session) call(ctx context.Context, method string, params, result any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	id := s.next.Add(1)
	b, err := json.Marshal(message{JSONRPC: "2.0", ID: json.RawMessage(strconv.FormatInt(id, 10)), Method: method, Params: p})
	if err != nil {
		return err
	}
	ch := make(chan *message, 1)
	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return err
	}
	s.pending[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}()
	err = s.w.send(ctx, b, id, func(b []byte) (bool, error) {
		got, err := s.deliver(b)
		return err == nil && got == id, err
	})
	if err != nil && ctx.Err() == nil {
		if rej := (*rejected)(nil); !errors.As(err, &rej) {
			s.fail(err)
		}
		return err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return m.Error
		}
		if result == nil || len(m.Result) == 0 {
			return nil
		}
		if err := json.Unmarshal(m.Result, result); err != nil {
			return fmt.Errorf("mcp: the answer to %s is not what the protocol says: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		if method != "initialize" { // the protocol forbids cancelling initialize
			s.cancelled(id)
		}
		return ctx.Err()
	case <-s.done:
		if err := ctx.Err(); err != nil {
			return err // ended both ways (a write cut short breaks the wire): ctx's end is what the caller did
		}
		return s.Err()
	}
}

// cancelled tells the server reins gave up on request id, so it can stop
// working on it.
func (s *session) cancelled(id int64) {
	ctx, cancel := context.WithTimeout(s.ctx, notifyWait)
	defer cancel()
	if err := s.notify(ctx, "notifications/cancelled", map[string]any{"requestId": id, "reason": "cancelled by reins"}); err != nil && s.ctx.Err() == nil {
		s.logf("mcp: sending the cancellation: %v", err)
	}
}

// notify sends a notification.
func (s *session) notify(ctx context.Context, method string, params any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	b, err := json.Marshal(message{JSONRPC: "2.0", Method: method, Params: p})
	if err != nil {
		return err
	}
	if err := s.w.send(ctx, b, 0, s.deliverAny); err != nil {
		if rej := (*rejected)(nil); ctx.Err() == nil && !errors.As(err, &rej) {
			s.fail(err)
		}
		return err
	}
	return nil
}

// initialize is the handshake: initialize with the version reins speaks,
// a version of the answer reins accepts, then notifications/initialized.
func (s *session) initialize(ctx context.Context, version string) error {
	var res initializeResult
	err := s.call(ctx, "initialize", initializeParams{
		ProtocolVersion: protocolVersion,
		Capabilities:    map[string]any{},
		ClientInfo:      implementation{Name: "reins", Version: version},
	}, &res)
	if err != nil {
		return err
	}
	if !slices.Contains(supportedVersions, res.ProtocolVersion) {
		return fmt.Errorf("mcp: the server speaks protocol version %.40q, which reins does not", res.ProtocolVersion)
	}
	if v, ok := s.w.(interface{ setProtocol(string) }); ok {
		v.setProtocol(res.ProtocolVersion)
	}
	return s.notify(ctx, "notifications/initialized", map[string]any{})
}

// maxPages bounds the tools/list pages read from one server.
const maxPages = 64

// tools lists the server's tools page by page, up to max of them.
func (s *session) tools(ctx context.Context, max int) ([]*toolInfo, error) {
	var out []*toolInfo
	cursor := ""
	for range maxPages {
		var res listToolsResult
		if err := s.call(ctx, "tools/list", listToolsParams{Cursor: cursor}, &res); err != nil {
			return nil, err
		}
		for _, t := range res.Tools {
			if t != nil {
				out = append(out, t)
			}
		}
		if res.NextCursor == "" || len(out) > max || res.NextCursor == cursor {
			return out, nil
		}
		cursor = res.NextCursor
	}
	return out, nil
}

// callTool calls a tool.
func (s *session) callTool(ctx context.Context, name string, args map[string]any) (*CallResult, error) {
	var res CallResult
	if err := s.call(ctx, "tools/call", callToolParams{Name: name, Arguments: args}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
