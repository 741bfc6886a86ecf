package subagent

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
)

// recordingEngine starts runs through the provider it is handed, counting
// them, as the local path would; or fails each start with fail.
type recordingEngine struct {
	starts atomic.Int32
	fail   *StartError
}

func (e *recordingEngine) Start(ctx context.Context, req Request, prov Provider) (Run, error) {
	e.starts.Add(1)
	if e.fail != nil {
		return nil, e.fail
	}
	return prov.Start(ctx, req)
}

// With an Engine set, every child — foreground, background and
// Manager.Run — starts through it; its start failure settles like a
// provider's, with the engine's fixed diagnostic.
func TestManagerEngineHook(t *testing.T) {
	l, err := session.Create(t.TempDir(), session.Header{ID: "parent"}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	prov := &fakeProvider{}
	m := newManager(t, l, prov)
	eng := &recordingEngine{}
	m.Engine = eng
	if res := m.Delegate(t.Context(), Params{Description: "d", Prompt: "fg"}); !strings.HasPrefix(res.Content, "child answer\nchild: child-") {
		t.Errorf("foreground: %+v", res)
	}
	if res := m.Delegate(t.Context(), Params{Description: "d", Prompt: "bg", RunInBackground: true}); res.IsError {
		t.Errorf("background: %+v", res)
	}
	m.KillRunning()
	r, err := m.Run(t.Context(), Params{Description: "d", Prompt: "batch"})
	if err != nil || r.StopReason != outcome.StopCompleted {
		t.Errorf("Run: %+v %v", r, err)
	}
	if eng.starts.Load() != 3 || prov.started.Load() != 3 {
		t.Errorf("engine starts %d, provider starts %d; want 3 and 3", eng.starts.Load(), prov.started.Load())
	}

	d := outcome.Diagnostic{Provider: "inprocess", Stage: outcome.StageEngine, Category: outcome.CategoryEngineUnavailable, StopReason: outcome.StopError}.String()
	m.Engine = &recordingEngine{fail: &StartError{Diagnostic: d}}
	r, err = m.Run(t.Context(), Params{Description: "d", Prompt: "x"})
	if err != nil || r.StopReason != outcome.StopError || r.Diagnostic != d {
		t.Errorf("failed start: %+v %v", r, err)
	}
	if res := m.Delegate(t.Context(), Params{Description: "d", Prompt: "x"}); !strings.Contains(res.Content, "category: engine-unavailable") {
		t.Errorf("tool result %q", res.Content)
	}
}

// Run's caller errors publish nothing and are errors, not results.
func TestManagerRunCallerErrors(t *testing.T) {
	l, err := session.Create(t.TempDir(), session.Header{ID: "parent"}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	m := newManager(t, l, &fakeProvider{})
	if _, err := m.Run(t.Context(), Params{Prompt: "x", Agent: "nobody"}); err == nil || !strings.Contains(err.Error(), "unknown agent") {
		t.Errorf("unknown agent: %v", err)
	}
	if _, err := m.Run(t.Context(), Params{Prompt: " "}); err == nil {
		t.Error("empty prompt ran")
	}
}
