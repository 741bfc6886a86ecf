package tui

import (
	"context"
	"encoding/json"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tui/batch"
)

// maxPending bounds what the feed holds for the screen. A producer that
// finds it full waits until the screen has taken the batch (or the feed is
// closed): the screen falls behind by at most this many items and never
// drops one, since a dropped tool result or subagent/end would leave the
// screen lying.
const maxPending = 4096

// item is one thing the session's goroutines report to the screen: a
// session event (with the header of the session it belongs to, children
// included) or an approval request.
type item struct {
	header  session.Header
	event   session.Event
	approve *approval
	done    *turnDone
	// notice is a line for the user about a child (harness.ChildNotice:
	// why it died while it started), already escaped; never the model's.
	notice string
}

// turnDone is the end of a turn the screen started: it follows every
// event of the turn in the feed.
type turnDone struct {
	seq       int
	res       agent.TurnResult
	compacted *bool // a /compact turn's outcome; nil for a prompt's turn
}

// approval is a tool call waiting for the user's answer.
type approval struct {
	name    string
	args    json.RawMessage
	reply   chan bool // buffered: the screen never blocks answering
	preview *preview  // what the question shows; computed when asked
	// arming: the screen queued the message that arms it; armed: keys
	// typed now answer it (approve.go).
	arming, armed bool
	// rejecting: [n] was pressed and the editor takes the instruction
	// that goes with the refusal (note, set before reply); draft is the
	// editor's text before (rules.go).
	rejecting   bool
	draft, note string
}

// feed carries items from the session (the harness's observer, called
// under a log's lock, and the approval hook) to the screen, in order. The
// screen takes everything pending in one batch (batch.Queue), so a fast
// stream costs one screen update per batch, not per token.
type feed struct {
	*batch.Queue[item]
	// preview computes what a question shows, on the asking goroutine
	// (set by New before any session runs).
	preview func(name string, args json.RawMessage) *preview
}

func newFeed() *feed { return &feed{Queue: batch.New[item](maxPending)} }

// observe is the harness's Observe hook.
func (f *feed) observe(h session.Header, e session.Event) { f.Push(item{header: h, event: e}) }

// offer is the harness's ObserveRemote hook, which must not block: an
// out-of-process child's event is dropped when the feed is full (the
// screen is that far behind; the row shows only the latest activity, and
// the child's result and subagent/end come through the parent's log).
func (f *feed) offer(h session.Header, e session.Event) { f.Offer(item{header: h, event: e}) }

// ask is the session's approval hook (tool.Env.Approve): it asks the
// screen and waits for the answer or the end of the call's context (a
// cancelled turn refuses). A closed screen refuses.
func (f *feed) ask(ctx context.Context, name string, args json.RawMessage) bool {
	return f.askWith(ctx, name, args, nil)
}

// askWith is ask; answered, when set, reads the answered question (its
// note) after the reply.
func (f *feed) askWith(ctx context.Context, name string, args json.RawMessage, answered func(*approval)) bool {
	a := &approval{name: name, args: args, reply: make(chan bool, 1)}
	if f.preview != nil {
		a.preview = f.preview(name, args)
	}
	if !f.Push(item{approve: a}) {
		return false
	}
	select {
	case ok := <-a.reply:
		if answered != nil {
			answered(a)
		}
		return ok
	case <-ctx.Done():
		return false
	case <-f.Done():
		return false
	}
}
