package tui

import (
	"context"
	"encoding/json"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tui/batch"
	"github.com/reinsdev/reins/internal/tui/callpreview"
	"github.com/reinsdev/reins/internal/tui/linediff"
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
	ran     *ranCall
	// notice is a line for the user about a child (harness.ChildNotice:
	// why it died while it started), already escaped; never the model's.
	notice string
}

// ranCall is what a file tool's call of the session changes, computed
// just before it ran (feed.beforeRun): its settled block shows this diff.
type ranCall struct {
	key  string // tool name NUL arguments
	diff []linediff.Line
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
	name string
	args json.RawMessage
	// child names the in-process child whose call it is ("general: review
	// the docs"); empty for the session's own calls.
	child   string
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
	// mode, set before a refusal the mode made without asking (read-only),
	// names it for the model (tool.Answer.Mode).
	mode string
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

// beforeRun is the session's tool.Env.BeforeRun: for a file tool's
// call, the diff it will make against the files as they are now (every
// mode: asked or not, --yes), for the call's settled block.
func (f *feed) beforeRun(_ context.Context, name string, args json.RawMessage) {
	if f.preview == nil || !callpreview.FileTool(name) {
		return
	}
	f.Push(item{ran: &ranCall{key: name + "\x00" + string(args), diff: f.preview(name, args).Diff}})
}

// ask is the session's approval hook (tool.Env.Approve): it asks the
// screen and waits for the answer or the end of the call's context (a
// cancelled turn refuses). A closed screen refuses.
func (f *feed) ask(ctx context.Context, name string, args json.RawMessage) bool {
	return f.askWith(ctx, "", name, args, nil)
}

// askWith is ask for the call of child (empty: the session's own);
// answered, when set, reads the answered question (its note) after the
// reply.
func (f *feed) askWith(ctx context.Context, child, name string, args json.RawMessage, answered func(*approval)) bool {
	a := &approval{child: child, name: name, args: args, reply: make(chan bool, 1)}
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
