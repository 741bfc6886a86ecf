//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm/mock"
)

// TestScriptsCommitted: bench/scripts holds exactly the generated scripts
// (regenerate with -write-scripts), and each is a valid mock script.
func TestScriptsCommitted(t *testing.T) {
	dir := filepath.Join("..", "..", "scripts")
	want := scripts()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(want) {
		t.Errorf("bench/scripts has %d scripts, the generator makes %d", len(files), len(want))
	}
	for name, body := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v (run: go run ./bench/cmd/benchrun -write-scripts bench/scripts)", name, err)
			continue
		}
		if string(got) != body {
			t.Errorf("%s is stale (run: go run ./bench/cmd/benchrun -write-scripts bench/scripts)", name)
		}
		sc, err := mock.Parse(got)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		// Every reply is chosen by a marker and repeats (see scripts.go).
		for i, r := range sc.Replies {
			if r.Match == "" || !r.Repeat {
				t.Errorf("%s: reply %d has match %q, repeat %v", name, i, r.Match, r.Repeat)
			}
		}
		if strings.HasPrefix(name, "children100") {
			if n := len(sc.Replies[len(sc.Replies)-1].ToolCalls); n != manyChildren {
				t.Errorf("%s: parent delegates to %d children", name, n)
			}
		}
	}
}
