package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/trust"
)

func TestDefaultSystemPromptIsShort(t *testing.T) {
	p := DefaultSystemPrompt("/w")
	for _, want := range []string{"subagent", "edit", "bash", "job_output"} {
		if !strings.Contains(p, want) {
			t.Errorf("system prompt does not mention %s", want)
		}
	}
	if tokens := len(p) / 4; tokens > 600 {
		t.Errorf("system prompt is about %d tokens; docs/agents.md says about 330", tokens)
	}
	t.Logf("default system prompt: %d chars, about %d tokens", len(p), len(p)/4)
}

func TestInstructionsWalkToRepoRoot(t *testing.T) {
	home := t.TempDir()
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	sub := filepath.Join(repo, "a", "b")
	must(t, os.MkdirAll(filepath.Join(repo, ".git"), 0o755))
	must(t, os.MkdirAll(sub, 0o755))
	must(t, os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("ABOVE-REPO"), 0o644))
	must(t, os.WriteFile(filepath.Join(repo, "AGENTS.md"), []byte("REPO-ROOT"), 0o644))
	must(t, os.WriteFile(filepath.Join(repo, "CLAUDE.md"), []byte("REPO-CLAUDE"), 0o644))
	must(t, os.WriteFile(filepath.Join(repo, "a", "CLAUDE.md"), []byte("MIDDLE-CLAUDE"), 0o644))
	must(t, os.WriteFile(filepath.Join(sub, "AGENTS.md"), []byte(strings.Repeat("x", MaxInstructionBytes+10)), 0o644))

	if got := instr(t, home, sub); got != "" {
		t.Fatalf("untrusted: got %q", got)
	}
	if _, err := trust.New(home).Trust(t.Context(), repo); err != nil {
		t.Fatal(err)
	}
	got := instr(t, home, sub)
	for _, want := range []string{"REPO-ROOT", "MIDDLE-CLAUDE", "[cut: project instructions are capped", `<project-instructions path="` + filepath.Join(repo, "AGENTS.md") + `">`} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q", want)
		}
	}
	for _, bad := range []string{"ABOVE-REPO", "REPO-CLAUDE"} {
		if strings.Contains(got, bad) {
			t.Errorf("has %q", bad)
		}
	}
	if strings.Index(got, "REPO-ROOT") > strings.Index(got, "MIDDLE-CLAUDE") {
		t.Error("want the repository root's file first, the nearest last")
	}
	if len(got) > MaxInstructionBytes+500 {
		t.Errorf("instructions are %d bytes, cap %d", len(got), MaxInstructionBytes)
	}
}

func TestInstructionsWithoutRepoOnlyWorkspace(t *testing.T) {
	home := t.TempDir()
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	must(t, os.MkdirAll(ws, 0o755))
	must(t, os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("PARENT"), 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "CLAUDE.md"), []byte("HERE"), 0o644))
	if _, err := trust.New(home).Trust(t.Context(), root); err != nil {
		t.Fatal(err)
	}
	got := instr(t, home, ws)
	if !strings.Contains(got, "HERE") || strings.Contains(got, "PARENT") {
		t.Fatalf("got %q", got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// instr loads cwd's instructions through a gate on home's trust list.
func instr(t *testing.T, home, cwd string) string {
	t.Helper()
	g, err := trust.New(home).Gate(cwd)
	if err != nil {
		t.Fatal(err)
	}
	return loadInstructions(g, cwd, config.InstructionFiles)
}
