//go:build !notemporal

package engine

import (
	"testing"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/engine/temporal"
)

func TestOpen(t *testing.T) {
	e, closeFn, err := Open(config.Subagents{Engine: config.EngineLocal}, "mock/echo", nil)
	if err != nil || e != nil {
		t.Fatalf("local: %v, %v; want the nil engine", e, err)
	}
	closeFn()
	// The temporal client is lazy: no cluster is needed to open it.
	e, closeFn, err = Open(config.Subagents{Engine: config.EngineTemporal, Temporal: config.Temporal{Address: "127.0.0.1:1", Namespace: "default", TaskQueue: "q"}}, "mock/echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	te, ok := e.(*temporal.Engine)
	if !ok || te.TaskQueue != "q" || te.Model != "mock/echo" {
		t.Errorf("temporal engine %#v", e)
	}
	closeFn()
	if _, _, err := Open(config.Subagents{Engine: "k8s"}, "", nil); err == nil {
		t.Error("an unknown engine opened")
	}
}
