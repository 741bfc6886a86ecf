package subagent

import (
	"errors"
	"fmt"
	"time"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/session"
)

// forkNote answers, in a fork's copy of the conversation, the tool calls
// that were still running when it was copied — the fork call among them.
const forkNote = "This call was still running when the conversation was forked. You are the forked subagent: " +
	"the parent goes on without you and reads your final answer; the task you are given next is yours."

// ErrForkProvider is a fork of an agent that does not run in process: only
// an in-process child can start from a copy of the parent's conversation.
var ErrForkProvider = errors.New("fork needs an in-process agent")

// forkEvents is the parent's conversation so far, as the events a fork
// child's log starts with: its user messages, assistant messages, tool
// results and compactions, then a result for every call still unanswered (forkNote). They
// are read from the parent's log, which the fork never writes to.
func (m *Manager) forkEvents(ag *config.Agent) ([]session.Event, error) {
	if ag.Provider != "" && ag.Provider != config.ProviderInProcess {
		return nil, fmt.Errorf("agent %q uses provider %s: %w", ag.Name, ag.Provider, ErrForkProvider)
	}
	if err := m.Log.Flush(); err != nil {
		return nil, fmt.Errorf("fork: the parent's log: %w", err)
	}
	ld, err := session.Load(m.Log.Path())
	if err != nil {
		return nil, fmt.Errorf("fork: the parent's log: %w", err)
	}
	return Conversation(ld.Events)
}

// Conversation is the conversation in events, as the events a child's log
// starts with when it continues it elsewhere (a fork, a continuation on
// another machine): its user messages, assistant messages, tool results
// and compactions, then a result for every call still unanswered
// (forkNote).
func Conversation(events []session.Event) ([]session.Event, error) {
	var out []session.Event
	for _, e := range events {
		switch e.Payload.(type) {
		// context/compacted too: the fork's history is the parent's, the
		// summary and not what it replaced (session.Log.AppendCopy).
		case session.UserMessage, session.AssistantMessage, session.ToolResult, session.ContextCompacted:
			out = append(out, e)
		}
	}
	history, err := session.History(out)
	if err != nil {
		return nil, err
	}
	for _, c := range session.DanglingCalls(history) {
		e, err := session.MakeEvent(session.TypeToolResult, 0, time.Time{}, session.ToolResult{CallID: c.ID, Content: forkNote})
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}
