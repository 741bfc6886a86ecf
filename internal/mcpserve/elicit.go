package mcpserve

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinsdev/reins/internal/termsafe"
)

// Questions a child would ask (docs/mcp-server.md, "Questions a child
// would ask"). A user at reins's terminal is asked two things a headless
// run refuses: whether a child's processes may reach a host outside
// sandbox.allowDomains, and whether a command that failed on the
// read-only .git may run once more with .git writable. Here the user is
// the MCP client's: when it declared elicitation, the question is put to
// it, by the call that is waiting on the child; when it did not, the
// question is refused at once, as in a headless `reins run`.
//
// The call that waits puts the question one of two ways, by the client's
// protocol version:
//   - before 2026-07-28, as an elicitation/create request while the tool
//     call is open (Elicit);
//   - from 2026-07-28 on, a server may not ask while serving a call
//     (SEP-2322): the call returns an input-required result whose
//     requestState names the parked call, and the client's retry carries
//     the answers; the retry waits on the same child, never starts one.
//
// A question nobody answers within questionWait is refused; so is one
// whose call is torn down.

// questionWait bounds how long a child waits for its client's answer.
const questionWait = 5 * time.Minute

// maxPending bounds the unanswered questions of one call; maxParked the
// input-required results whose retries the server still expects.
const (
	maxPending = 8
	maxParked  = 64
)

// question is one thing a call's child asks its client.
type question struct {
	id      string
	message string
	answer  chan bool // buffered: the one answer
}

// allowSchema is what a question asks for: one yes/no field.
var allowSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"allow": map[string]any{"type": "boolean", "title": "Allow", "description": "Allow it (this once for a command; for the rest of the child's session for a host)."},
	},
	"required": []string{"allow"},
}

// params are q as an elicitation.
func (q *question) params() *mcp.ElicitParams {
	return &mcp.ElicitParams{Mode: "form", Message: q.message, RequestedSchema: allowSchema}
}

// accepted reports whether r allows: accepted with allow true.
func accepted(r mcp.InputResponse) bool {
	er, ok := r.(*mcp.ElicitResult)
	if !ok || er == nil || er.Action != "accept" {
		return false
	}
	allow, _ := er.Content["allow"].(bool)
	return allow
}

// questions is a place's harness.ChildQuestions: it finds the call a
// question came through by its label and puts it to the client.
type questions struct {
	s *Server
	p *place
}

func (q questions) Domain(ctx context.Context, label, host string) bool {
	return q.ask(ctx, label, func(who string) string {
		return fmt.Sprintf("%s wants its commands to reach %s, which sandbox.allowDomains does not list. Allow it for the rest of the child's session?", who, clipLine(host, 253))
	})
}

func (q questions) GitWritable(ctx context.Context, label, command string) bool {
	return q.ask(ctx, label, func(who string) string {
		return fmt.Sprintf("%s ran a command that failed because .git is read-only to sandboxed commands. Run it once more with .git writable? The command: %s", who, clipLine(command, 400))
	})
}

func (q questions) ask(ctx context.Context, label string, message func(who string) string) bool {
	if !q.s.clientElicits() {
		return false // nobody to ask: refused, as in a headless run
	}
	q.p.mu.Lock()
	c := q.p.byLabel[label]
	q.p.mu.Unlock()
	if c == nil {
		return false
	}
	child, _ := c.ids()
	who := "reins child " + child
	if child == "" {
		who = "A reins child"
	}
	return c.ask(ctx, &question{id: newID("q"), message: message(who), answer: make(chan bool, 1)})
}

// clipLine is child-written text for a question: escaped, one line, at
// most n bytes.
func clipLine(s string, n int) string {
	return termsafe.Clip(termsafe.EscapeLine(s), n)
}

// ask queues q for whoever waits on c and waits for its answer: false
// when none comes within questionWait or before ctx ends.
func (c *call) ask(ctx context.Context, q *question) bool {
	c.mu.Lock()
	if len(c.pending) >= maxPending {
		c.mu.Unlock()
		return false
	}
	c.pending = append(c.pending, q)
	c.mu.Unlock()
	select {
	case c.asked <- struct{}{}:
	default:
	}
	t := time.NewTimer(questionWait)
	defer t.Stop()
	select {
	case ok := <-q.answer:
		return ok
	case <-ctx.Done():
	case <-t.C:
	}
	c.mu.Lock()
	for i, p := range c.pending {
		if p == q {
			c.pending = append(c.pending[:i], c.pending[i+1:]...)
			break
		}
	}
	c.mu.Unlock()
	return false
}

// takeQuestions are c's questions nobody was asked yet.
func (c *call) takeQuestions() []*question {
	c.mu.Lock()
	defer c.mu.Unlock()
	qs := c.pending
	c.pending = nil
	return qs
}

// clientElicits reports whether the client declared form elicitation.
func (s *Server) clientElicits() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.elicits
}

// noteClient records what the client that makes a call can be asked
// (stdio: one client per server).
func (s *Server) noteClient(req *mcp.CallToolRequest) {
	ip := req.Session.InitializeParams()
	ok := ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil &&
		(ip.Capabilities.Elicitation.Form != nil || ip.Capabilities.Elicitation.URL == nil)
	s.mu.Lock()
	s.elicits = ok
	s.mu.Unlock()
}

// parked is a call that returned an input-required result: the retry
// with its requestState answers qs and waits on c again.
type parked struct {
	c          *call
	qs         []*question
	foreground bool          // a run or reply: a cancel of the retry kills it
	wait       time.Duration // how long the retry waits
}

// newID is an unguessable id (crypto/rand's Text, 128 bits): a
// requestState is the client's to echo, and a made-up one must name
// nothing.
func newID(prefix string) string { return prefix + "-" + rand.Text() }

// putQuestions puts c's pending questions to the client of req: nil when
// they were answered (by elicitation) and the wait goes on, or the
// input-required result the call returns instead.
func (s *Server) putQuestions(ctx context.Context, req *mcp.CallToolRequest, c *call, foreground bool, wait time.Duration) *mcp.CallToolResult {
	qs := c.takeQuestions()
	if len(qs) == 0 {
		return nil
	}
	if ip := req.Session.InitializeParams(); ip == nil || ip.ProtocolVersion < rootsGone {
		for _, q := range qs {
			ectx, cancel := context.WithTimeout(ctx, questionWait)
			res, err := req.Session.Elicit(ectx, q.params())
			cancel()
			if err != nil {
				s.o.Base.Logf("mcp serve: %s: elicitation failed (refused): %v", c.label, err)
			}
			q.answer <- err == nil && accepted(res)
		}
		return nil
	}
	state := newID("state")
	in := mcp.InputRequestMap{}
	for _, q := range qs {
		in[q.id] = q.params()
	}
	s.mu.Lock()
	if len(s.parked) >= maxParked {
		// The oldest retry never came: its questions are refused.
		old := s.parkOrder[0]
		s.parkOrder = s.parkOrder[1:]
		for _, q := range s.parked[old].qs {
			q.answer <- false
		}
		delete(s.parked, old)
	}
	s.parked[state] = &parked{c: c, qs: qs, foreground: foreground, wait: wait}
	s.parkOrder = append(s.parkOrder, state)
	s.mu.Unlock()
	return &mcp.CallToolResult{InputRequests: in, RequestState: state}
}

// resumable is h for a tool whose call may have returned an
// input-required result: a retry (its requestState set) resumes the
// parked call instead of being a new one.
func (s *Server) resumable(h mcp.ToolHandler) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.noteClient(req)
		if req.Params.RequestState != "" {
			return s.resume(ctx, req), nil
		}
		return h(ctx, req)
	}
}

// resume is a retry after an input-required result: it answers the
// parked questions from the retry's inputResponses and waits on the same
// call again. It never starts a child.
func (s *Server) resume(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
	state := req.Params.RequestState
	s.mu.Lock()
	p := s.parked[state]
	delete(s.parked, state)
	for i, st := range s.parkOrder {
		if st == state {
			s.parkOrder = append(s.parkOrder[:i], s.parkOrder[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
	if p == nil {
		return usageError("requestState %q names no question of this server (answered already, or too old)", clip(state))
	}
	for _, q := range p.qs {
		q.answer <- accepted(req.Params.InputResponses[q.id])
	}
	if p.foreground {
		return s.await(ctx, req, p.c)
	}
	return s.waitJob(ctx, req, p.c, p.wait)
}
