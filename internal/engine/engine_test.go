package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/subagent"
)

var temporalCfg = config.Subagents{Engine: config.EngineTemporal, Temporal: config.Temporal{Address: "127.0.0.1:1", Namespace: "default", TaskQueue: "q"}}

// fakeHelper writes a shell script that stands in for reins-temporal and
// names it in $REINS_TEMPORAL.
func fakeHelper(t *testing.T, script string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "reins-temporal")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(HelperEnv, p)
}

func TestOpen(t *testing.T) {
	e, closeFn, err := Open(config.Subagents{Engine: config.EngineLocal}, "mock/echo", nil)
	if err != nil || e != nil {
		t.Fatalf("local: %v, %v; want the nil engine", e, err)
	}
	closeFn()
	// Opening starts nothing: the helper starts at the first child.
	fakeHelper(t, "exit 7")
	e, closeFn, err = Open(temporalCfg, "mock/echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	he, ok := e.(*helperEngine)
	if !ok || he.model != "mock/echo" || !strings.Contains(strings.Join(he.args, " "), "--task-queue q") || he.h != nil {
		t.Errorf("temporal engine %#v", e)
	}
	closeFn()
	if _, _, err := Open(config.Subagents{Engine: "k8s"}, "", nil); err == nil {
		t.Error("an unknown engine opened")
	}
}

// TestHelperMissing: without reins-temporal the temporal engine is a
// configuration error that names it.
func TestHelperMissing(t *testing.T) {
	t.Setenv(HelperEnv, "")
	t.Setenv("PATH", t.TempDir())
	_, _, err := Open(temporalCfg, "mock/echo", nil)
	if !errors.Is(err, ErrNoHelper) {
		t.Fatalf("err = %v, want ErrNoHelper", err)
	}
}

// TestHelperGone: a helper that dies settles the start engine-unavailable,
// with the fixed diagnostic and nothing the helper said.
func TestHelperGone(t *testing.T) {
	fakeHelper(t, "echo 'secret words' >&2; read line; exit 3")
	e, closeFn, err := Open(temporalCfg, "mock/echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	_, err = e.Start(context.Background(), subagent.Request{RunID: "r1", Agent: &config.Agent{Name: "general"}, Depth: 1}, nil)
	var se *subagent.StartError
	if !errors.As(err, &se) {
		t.Fatalf("Start = %v, want a StartError", err)
	}
	want := outcome.Diagnostic{Provider: config.ProviderInProcess, Stage: outcome.StageEngine, Category: outcome.CategoryEngineUnavailable, StopReason: outcome.StopError}.String()
	if se.Diagnostic != want || strings.Contains(se.Diagnostic, "secret") {
		t.Errorf("diagnostic %q, want %q", se.Diagnostic, want)
	}
}
