package trust

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// write makes root/rel with body.
func write(t testing.TB, root, rel, body string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestScanPinsWhatCanSteerReins: every kind of project file at any depth,
// nothing else; .git and node_modules are not searched; a .reins that is
// $REINS_HOME is the user's own.
func TestScanPinsWhatCanSteerReins(t *testing.T) {
	root := tree(t)
	for _, f := range []string{
		".reins/config.yaml", ".reins/agents/a.md", ".reins/skills/s/SKILL.md",
		".mcp.json", "AGENTS.md", "CLAUDE.md",
		".claude/settings.json", ".claude/settings.local.json", ".claude/agents/b.md",
		".claude/skills/k/SKILL.md", ".claude/commands/x/y.md", ".agents/skills/z/SKILL.md",
		"a/b/c/.reins/config.yaml", "a/b/c/AGENTS.md", "pkg/.mcp.json", "pkg/.claude/agents/c.md",
		"NOTES.md", // an instruction name given in ScanOptions.Names
		// not pinned:
		"README.md", ".claude/todos/t.json", ".claude/projects/p.jsonl", "a/agents.md.txt",
		".git/AGENTS.md", ".git/x/.reins/config.yaml", "node_modules/dep/CLAUDE.md", "a/node_modules/.reins/config.yaml",
		"home/.reins/config.yaml",
	} {
		write(t, root, f, f)
	}
	if err := os.MkdirAll(filepath.Join(root, "fifo"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A FIFO named like a project file is no file to pin (and does not hang).
	if err := mkfifo(filepath.Join(root, "fifo", "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	// Links: a loop inside a pinned tree is not followed; a linked file is
	// pinned by its content; a linked .claude is read through.
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(".", filepath.Join(root, ".reins", "loop")))
	must(os.Symlink(filepath.Join(root, "README.md"), filepath.Join(root, ".reins", "agents", "linked.md")))
	write(t, root, "shared/claude/agents/s.md", "shared agent")
	must(os.MkdirAll(filepath.Join(root, "l"), 0o755))
	must(os.Symlink(filepath.Join(root, "shared", "claude"), filepath.Join(root, "l", ".claude")))
	res, err := Scan(context.Background(), root, ScanOptions{Names: []string{"NOTES.md"}, Home: filepath.Join(root, "home", ".reins")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		".agents/skills/z/SKILL.md", ".claude/agents/b.md", ".claude/commands/x/y.md", ".claude/settings.json",
		".claude/settings.local.json", ".claude/skills/k/SKILL.md", ".mcp.json", ".reins/agents/a.md",
		".reins/agents/linked.md", ".reins/config.yaml", ".reins/skills/s/SKILL.md", "AGENTS.md", "CLAUDE.md", "NOTES.md",
		"a/b/c/.reins/config.yaml", "a/b/c/AGENTS.md", "l/.claude/agents/s.md", "pkg/.claude/agents/c.md", "pkg/.mcp.json",
	}
	if got := keys(res.Files); !slices.Equal(got, want) {
		t.Errorf("pinned\n%q\nwant\n%q", got, want)
	}
	if res.Files[".reins/agents/linked.md"] != Digest([]byte("README.md")) {
		t.Errorf("a linked file is not pinned by its content")
	}
	if res.Files["AGENTS.md"] != Digest([]byte("AGENTS.md")) {
		t.Errorf("digest of AGENTS.md = %s", res.Files["AGENTS.md"])
	}
	if res.Truncated {
		t.Error("truncated")
	}
}

// TestScanBound: past the entry budget the scan stops and says so; what
// it did not reach is not pinned.
func TestScanBound(t *testing.T) {
	root := tree(t)
	for i := range 50 {
		write(t, root, fmt.Sprintf("d%02d/AGENTS.md", i), "x")
	}
	res, err := Scan(context.Background(), root, ScanOptions{MaxEntries: 40})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || len(res.Files) >= 50 {
		t.Errorf("truncated %v with %d files pinned", res.Truncated, len(res.Files))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Scan(ctx, root, ScanOptions{}); err == nil {
		t.Error("a cancelled scan succeeded")
	}
}

// TestGateHonoursOnlyApprovedContent is the pin check the loaders make,
// table-driven: approved content is honoured; new, changed, an untrusted
// folder and a folder trusted before pinning are refused and reported.
func TestGateHonoursOnlyApprovedContent(t *testing.T) {
	root := tree(t, "ws/sub", "old", "out", "ws/.git/reins/worktrees/c1/sub")
	home := filepath.Join(root, "home")
	ws := filepath.Join(root, "ws")
	write(t, ws, "AGENTS.md", "approved")
	write(t, ws, ".claude/agents/a.md", "agent")
	s := New(home)
	if _, err := s.Trust(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
	// A folder in the list from before pinning: no pins at all.
	if err := s.update(context.Background(), func(f *file) error {
		f.Folders = append(f.Folders, Folder{Path: filepath.Join(root, "old"), TrustedAt: time.Now()})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws, "sub"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir, rel, content string
		ok                      bool
		state                   State
	}{
		{"approved", ws, "AGENTS.md", "approved", true, ""},
		{"approved agent", ws, ".claude/agents/a.md", "agent", true, ""},
		{"changed", ws, "AGENTS.md", "changed", false, StateChanged},
		{"new below", filepath.Join(ws, "sub"), ".reins/config.yaml", "x", false, StateNew},
		{"new through a link", filepath.Join(root, "link"), "AGENTS.md", "approved", false, StateNew},
		{"before pinning", filepath.Join(root, "old"), "AGENTS.md", "x", false, StateUnpinned},
		{"untrusted", filepath.Join(root, "out"), "AGENTS.md", "x", false, StateNew},
		{"a child's worktree, approved", filepath.Join(ws, ".git", "reins", "worktrees", "c1"), "AGENTS.md", "approved", true, ""},
		{"a child's worktree, changed", filepath.Join(ws, ".git", "reins", "worktrees", "c1"), "AGENTS.md", "changed by the child", false, StateChanged},
		{"a child's worktree, new below", filepath.Join(ws, ".git", "reins", "worktrees", "c1", "sub"), ".reins/config.yaml", "x", false, StateNew},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := s.Gate(ws)
			if err != nil {
				t.Fatal(err)
			}
			if got := g.Honour(tc.dir, tc.rel, []byte(tc.content)); got != tc.ok {
				t.Fatalf("Honour = %v, want %v", got, tc.ok)
			}
			err = g.Err()
			if tc.ok {
				if err != nil {
					t.Fatalf("Err = %v", err)
				}
				return
			}
			ue, ok := err.(*UnpinnedError)
			if !ok || len(ue.Files) != 1 || ue.Files[0].State != tc.state {
				t.Fatalf("Err = %#v, want one file %s", err, tc.state)
			}
			if !strings.Contains(err.Error(), "reins trust ") {
				t.Errorf("message does not say how to approve: %s", err)
			}
		})
	}
}

// TestUnpinnedMessageEscapesNames: file names are the repository's; the
// message quotes them, so no escape sequence reaches the terminal.
func TestUnpinnedMessageEscapesNames(t *testing.T) {
	e := &UnpinnedError{Cwd: "/ws", Files: []Refused{{Path: "/ws/a\x1b]0;x\x07/AGENTS.md", Folder: "/ws", State: StateNew}}}
	if msg := e.Error(); strings.ContainsAny(msg, "\x1b\x07") || !strings.Contains(msg, `"a\x1b]0;x\a/AGENTS.md" (new)`) {
		t.Errorf("message %q", msg)
	}
}

// TestApproveReportsChangesAndConcurrentApprovalsLoseNothing: Approve says
// what it changed; approvals of many folders at once keep every folder's
// pins (one lock, one entry replaced each).
func TestApproveReportsChangesAndConcurrentApprovalsLoseNothing(t *testing.T) {
	root := tree(t)
	home := filepath.Join(root, "home")
	const n = 16
	for i := range n {
		write(t, root, fmt.Sprintf("p%02d/AGENTS.md", i), fmt.Sprint(i))
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for range 3 {
				if _, err := New(home).Approve(context.Background(), filepath.Join(root, fmt.Sprintf("p%02d", i)), ScanOptions{}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	l, err := New(home).List()
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != n {
		t.Fatalf("%d folders", len(l))
	}
	for _, f := range l {
		if len(f.Pins) != 1 || f.PinnedAt == nil {
			t.Errorf("%s: pins %v", f.Path, f.Pins)
		}
	}
	p := filepath.Join(root, "p00")
	write(t, p, "AGENTS.md", "changed")
	write(t, p, "CLAUDE.md", "new")
	a, err := New(home).Approve(context.Background(), p, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []FileState{{"AGENTS.md", StateChanged}, {"CLAUDE.md", StateNew}}
	if !slices.Equal(a.Changes, want) || a.Pinned != 2 {
		t.Errorf("changes %v pinned %d, want %v 2", a.Changes, a.Pinned, want)
	}
}

func TestWorktreeHome(t *testing.T) {
	for in, want := range map[string]string{
		".":                                ".",
		"a/b":                              "a/b",
		".git/reins/worktrees/c1":          ".",
		".git/reins/worktrees/c1/sub/x":    "sub/x",
		"repo/.git/reins/worktrees/c1/sub": "repo/sub",
		"repo/.git/reins/worktrees/":       "repo/.git/reins/worktrees/",
		"x.git/reins/worktrees/c1":         "x.git/reins/worktrees/c1",
		".git/hooks":                       ".git/hooks",
	} {
		if got := worktreeHome(in); got != want {
			t.Errorf("worktreeHome(%q) = %q, want %q", in, got, want)
		}
	}
}
