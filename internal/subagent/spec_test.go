package subagent

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm"
)

// TestSubagentSpecCached: the subagent tool's spec is made once per agent
// list and is always what a fresh making says; a new list (another agent,
// a changed description) makes it again, and a caller changing the schema
// it was given changes nothing for the next.
func TestSubagentSpecCached(t *testing.T) {
	m := newManager(t, nil, nil)
	fresh := func() llm.ToolSpec {
		var names, lines []string
		for _, a := range m.Agents.List() {
			names = append(names, a.Name)
			lines = append(lines, a.Name+": "+a.Description)
		}
		return subagentSpec(names, lines)
	}
	tl := subagentTool{m}
	first := tl.Spec()
	if diff := cmp.Diff(fresh(), first); diff != "" {
		t.Fatalf("spec differs from a fresh one (-fresh +got):\n%s", diff)
	}
	first.Parameters[0] = 'X'
	if got := tl.Spec(); !bytes.Equal(got.Parameters, fresh().Parameters) {
		t.Fatalf("a caller's change reached the cache: %s", got.Parameters)
	}
	for _, desc := range []string{"Reviews.", "Reviews carefully."} {
		home := t.TempDir()
		os.MkdirAll(filepath.Join(home, "agents"), 0o755)
		os.WriteFile(filepath.Join(home, "agents", "reviewer.md"), []byte("---\nname: reviewer\ndescription: "+desc+"\n---\nbody\n"), 0o644)
		agents, _, err := config.LoadAgents(config.LoadOptions{Home: home}, config.Default())
		if err != nil {
			t.Fatal(err)
		}
		m.Agents = agents
		got := tl.Spec()
		if diff := cmp.Diff(fresh(), got); diff != "" {
			t.Fatalf("with reviewer %q the spec is stale (-fresh +got):\n%s", desc, diff)
		}
		if !bytes.Contains(got.Parameters, []byte(desc)) {
			t.Fatalf("spec lacks %q: %s", desc, got.Parameters)
		}
	}
}
