//go:build linux

package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestEndpointReplay: the endpoint-alone row replays the two-step requests
// reins sent, to the path it sent them to. It failed (HTTP 500, 0/3) once
// reins's openai provider moved to the Responses wire while the replay still
// posted to /chat/completions.
func TestEndpointReplay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "reins")
	// reins-extra beside reins serves the workload (reins mock-llm).
	build := exec.CommandContext(ctx, "go", "build", "-o", dir+string(filepath.Separator), "github.com/reinsdev/reins/cmd/reins", "github.com/reinsdev/reins/cmd/reins-extra")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	c := &config{reins: bin, scripts: filepath.Join("..", "..", "scripts"), work: dir}
	var w *workload
	for _, x := range workloads() {
		if x.name == "two-step" {
			w = x
		}
	}
	ws := filepath.Join(dir, "ws")
	if err := writeFiles(ws, w.files); err != nil {
		t.Fatal(err)
	}
	h := c.reinsHarness("reins", bin)
	h.home = filepath.Join(dir, "home")
	reqs, err := recordRequests(ctx, c, h, w, ws)
	if err != nil {
		t.Fatal(err)
	}
	if _, problem, err := replayEndpoint(ctx, c, w, reqs); err != nil || problem != "" {
		t.Fatalf("replay: err %v, problem %q", err, problem)
	}
}
