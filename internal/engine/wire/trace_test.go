package wire

import (
	"encoding/json"
	"testing"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/subagent"
)

// TestTaskCarriesTrace: the task sent to a Temporal worker carries the
// run's trace context through its JSON (issue 33), so the worker's spans
// continue the parent's trace.
func TestTaskCarriesTrace(t *testing.T) {
	tc := subagent.TraceContext{Parent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", State: "a=b"}
	task := TaskOf(subagent.Request{RunID: "run-1", Agent: &config.Agent{Name: "general"}, Trace: tc}, "openai/test")
	b, err := json.Marshal(task)
	if err != nil {
		t.Fatal(err)
	}
	var back Task
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Trace != tc {
		t.Errorf("trace %+v after the wire, want %+v (%s)", back.Trace, tc, b)
	}
}
