package subagent

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
)

// fakeProvider starts runs that complete with a fixed answer at once.
type fakeProvider struct{ started, disposed atomic.Int32 }

func (p *fakeProvider) Start(context.Context, Request) (Run, error) {
	p.started.Add(1)
	return &fakeRun{p: p}, nil
}

type fakeRun struct{ p *fakeProvider }

func (*fakeRun) Session() string { return "child-1" }
func (*fakeRun) Wait(context.Context) outcome.Result {
	return outcome.Result{StopReason: outcome.StopCompleted, Output: []llm.Block{{Type: llm.BlockText, Text: "child answer"}}}
}
func (*fakeRun) Cancel()          {}
func (r *fakeRun) Dispose() error { r.p.disposed.Add(1); return nil }

func newManager(t *testing.T, log *session.Log, prov Provider) *Manager {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{Home: t.TempDir(), Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	agents, _, err := config.LoadAgents(config.LoadOptions{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := &Manager{
		Agents: agents, Providers: map[string]Provider{config.ProviderInProcess: prov},
		Limits: config.Subagents{MaxDepth: 2}, Log: log, Cwd: t.TempDir(),
	}
	t.Cleanup(m.Close)
	return m
}

// TestDelegateParentLogFails (issue 13, finding 3): a child whose
// subagent/start cannot be written to the parent's log is not run on as if
// it were recorded: it is disposed and the tool call fails.
func TestDelegateParentLogFails(t *testing.T) {
	l, err := session.Create(t.TempDir(), session.Header{ID: "parent"}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Close() // every append fails from now on
	prov := &fakeProvider{}
	m := newManager(t, l, prov)
	res := m.Delegate(t.Context(), Params{Description: "d", Prompt: "do it"})
	if !res.IsError || strings.Contains(res.Content, "child answer") {
		t.Errorf("Delegate = %+v, want an error result without the unrecorded child's answer", res)
	}
	if prov.started.Load() == 1 && prov.disposed.Load() != 1 {
		t.Errorf("the started child was not disposed")
	}
}

// startFailer fails every start with its StartError.
type startFailer struct{ err *StartError }

func (p *startFailer) Start(context.Context, Request) (Run, error) { return nil, p.err }

// A start that the agent's own timeout ended settles aborted with its
// diagnostic, like a published run that times out (issue 14 item 3); any
// other failed start stays an error.
func TestStartErrorStopReason(t *testing.T) {
	const d = "Subagent failure (provider: acp; stage: initialize; category: timeout; stop reason: aborted)"
	for _, tc := range []struct {
		stop     outcome.StopReason
		headline string
	}{
		{outcome.StopAborted, "subagent run was cancelled"},
		{"", "subagent run failed"},
	} {
		l, err := session.Create(t.TempDir(), session.Header{ID: "parent"}, session.Options{})
		if err != nil {
			t.Fatal(err)
		}
		m := newManager(t, l, &startFailer{err: &StartError{Diagnostic: d, StopReason: tc.stop}})
		res := m.Delegate(t.Context(), Params{Description: "d", Prompt: "do it"})
		if !strings.Contains(res.Content, tc.headline) || !strings.Contains(res.Content, d) {
			t.Errorf("stop %q: result %q, want %q with the diagnostic", tc.stop, res.Content, tc.headline)
		}
		l.Close()
	}
}
