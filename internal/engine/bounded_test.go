package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/engine/wire"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
)

func newTestEngine() *helperEngine {
	return &helperEngine{
		children:  newBounded[string](maxChildSessions, 0),
		histories: newBounded[[]session.Event](maxHistories, maxHistoryBytes),
	}
}

// The run → worker-session map is bounded: results of runs whose session
// nobody takes (every subagent run: only the batch asks) push the oldest
// out; a delivered run leaves the helper's table; the batch's take
// forgets it. On the old engine the map (a sync.Map) grew by one entry
// per settled run for the life of the parent.
func TestSettledRunsAreBounded(t *testing.T) {
	e := newTestEngine()
	h := &helper{dead: make(chan struct{}), runs: map[uint64]*helperRun{}}
	n := 3 * maxChildSessions
	var in strings.Builder
	in.WriteString(helloLine)
	for i := 1; i <= n; i++ {
		r := h.add(subagent.Request{RunID: fmt.Sprintf("run-%d", i), ChildID: fmt.Sprintf("child-%d", i)}, "inprocess", 0)
		b, _ := json.Marshal(wire.Msg{Op: wire.OpResult, ID: r.id, Session: fmt.Sprintf("S%d", i),
			Result:  &outcome.Result{StopReason: outcome.StopCompleted},
			History: []session.Event{{Type: session.TypeUserMessage, Data: json.RawMessage(`{"message":{"role":"user"}}`)}}})
		in.Write(append(b, '\n'))
	}
	h.read(io.NopCloser(strings.NewReader(in.String())), e)
	if len(h.runs) != 0 {
		t.Errorf("%d delivered runs still in the helper's table", len(h.runs))
	}
	if got := e.children.len(); got != maxChildSessions {
		t.Errorf("%d worker sessions held after %d runs, want the bound %d", got, n, maxChildSessions)
	}
	if got := e.histories.len(); got != maxHistories {
		t.Errorf("%d conversations held, want the bound %d", got, maxHistories)
	}
	if s := e.ChildSession("run-1"); s != "" {
		t.Errorf("the oldest run's session %q is still held", s)
	}
	last := fmt.Sprintf("run-%d", n)
	if s := e.ChildSession(last); s != fmt.Sprintf("S%d", n) {
		t.Errorf("the newest run's session is %q", s)
	}
	if s := e.ChildSession(last); s != "" || e.children.len() != maxChildSessions-1 {
		t.Errorf("a taken session is still held (%q, %d held)", s, e.children.len())
	}
}

// The conversations are bounded in bytes too, and one larger than the
// whole bound is not held at all.
func TestBoundedByCost(t *testing.T) {
	b := newBounded[int](100, 10)
	for i := range 5 {
		b.put(fmt.Sprint(i), i, 4)
	}
	if b.len() != 2 || b.cost != 8 {
		t.Errorf("%d entries weighing %d, want the newest 2 (8)", b.len(), b.cost)
	}
	if _, ok := b.get("4"); !ok {
		t.Error("the newest entry was evicted")
	}
	b.put("4", 9, 11)
	if _, ok := b.get("4"); ok || b.len() != 1 {
		t.Errorf("an entry over the bound is held (%d entries)", b.len())
	}
}

// A continuation or fork the engine cannot ship is refused with the
// fixed not-continuable diagnostic before anything starts (no helper is
// run: $REINS_TEMPORAL names none that exists). On the old engine the
// continuation ran as a new child and the fork without the conversation.
func TestStartRefusesWhatItCannotShip(t *testing.T) {
	e := newTestEngine()
	e.path = "/nonexistent/reins-temporal"
	ag := &config.Agent{Name: "general"}
	big := []session.Event{{Type: session.TypeUserMessage, Data: json.RawMessage(`"` + strings.Repeat("x", wire.MaxSeed) + `"`)}}
	want := "Subagent failure (provider: inprocess; stage: engine; category: not-continuable; stop reason: error)"
	for name, req := range map[string]subagent.Request{
		"unknown child":   {RunID: "run-2", ChildID: "child-1", Continues: "child-1", Agent: ag, Prompt: "x"},
		"acp child":       {RunID: "run-2", ChildID: "child-1", Continues: "child-1", Agent: &config.Agent{Name: "a", Provider: "acp"}, Prompt: "x"},
		"fork over bound": {RunID: "run-1", ChildID: "child-1", Fork: big, Agent: ag, Prompt: "x"},
	} {
		_, err := e.Start(t.Context(), req, nil)
		var se *subagent.StartError
		if !errors.As(err, &se) || (name != "acp child" && se.Diagnostic != want) || !strings.Contains(se.Diagnostic, "not-continuable") {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	// A held conversation goes with the continuation.
	e.histories.put("child-1", []session.Event{{Type: session.TypeUserMessage}}, 10)
	if _, err := e.Start(t.Context(), subagent.Request{RunID: "run-2", ChildID: "child-1", Continues: "child-1", Agent: ag, Prompt: "x"}, nil); err == nil || strings.Contains(err.Error(), "not-continuable") {
		t.Errorf("a held conversation was refused: %v", err)
	}
}

// The spend a worker reports is charged once: each report adds what it
// grew by, priced and unpriced tokens apart.
func TestChargeSpent(t *testing.T) {
	b := budget.New(budget.Limits{Tokens: 10000})
	defer b.Stop()
	r := &helperRun{budget: b}
	r.charge(wire.Spent{Tokens: 1000, USD: 0.5})
	r.charge(wire.Spent{Tokens: 1000, USD: 0.5}) // the same report again
	r.charge(wire.Spent{Tokens: 3000, USD: 0.75, Unpriced: 500})
	tok, usd, unpriced, _ := b.Used()
	if tok != 3000 || usd != 0.75 || unpriced != 500 {
		t.Errorf("charged %d tokens, $%g, %d unpriced; want 3000, $0.75, 500", tok, usd, unpriced)
	}
	if !r.ChargesBudget() || (&helperRun{}).ChargesBudget() {
		t.Error("ChargesBudget: want true only with a budget")
	}
}

// helloLine is the helper's first line, in this build's protocol version.
var helloLine = fmt.Sprintf(`{"op":"hello","version":%d}`+"\n", wire.ProtocolVersion)
