//go:build linux

package gitsafe

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestFind(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	mk := func(rel string) {
		if err := os.MkdirAll(filepath.Join(ws, rel), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	put := func(path, text string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk(".git/hooks")
	mk("sub/.git")
	mk("node_modules/pkg/.git")
	mk("a/b/c/.git")   // depth 3: found
	mk("a/b/c/d/.git") // depth 4: past Depth
	// A linked work tree: .git is a file naming a folder outside, whose
	// commondir names the main repository's control folder.
	put(filepath.Join(outside, "main/.git/worktrees/wt/commondir"), "../..\n")
	put(filepath.Join(ws, "wt/.git"), "gitdir: "+filepath.Join(outside, "main/.git/worktrees/wt")+"\n")
	// A submodule's .git file, relative.
	mk(".git/modules/x")
	put(filepath.Join(ws, "mod/x/.git"), "gitdir: ../../.git/modules/x\n")
	// A symbolic link named .git, and a linked folder holding a .git
	// outside: neither is followed.
	mk("lnk")
	if err := os.Symlink(outside, filepath.Join(ws, "lnk/.git")); err != nil {
		t.Fatal(err)
	}
	put(filepath.Join(outside, "far/.git/HEAD"), "")
	if err := os.Symlink(filepath.Join(outside, "far"), filepath.Join(ws, "far")); err != nil {
		t.Fatal(err)
	}

	repos, complete := Find(ws, Limits{Depth: 3, Entries: 1000})
	if !complete {
		t.Error("walk of a small tree reported incomplete")
	}
	got := map[string]Repo{}
	for _, r := range repos {
		got[r.Entry] = r
	}
	out, _ := filepath.EvalSymlinks(outside)
	wsr, _ := filepath.EvalSymlinks(ws)
	want := map[string]Repo{
		".git":                  {Entry: ".git", Dir: filepath.Join(ws, ".git")},
		"sub/.git":              {Entry: "sub/.git", Dir: filepath.Join(ws, "sub/.git")},
		"node_modules/pkg/.git": {Entry: "node_modules/pkg/.git", Dir: filepath.Join(ws, "node_modules/pkg/.git")},
		"a/b/c/.git":            {Entry: "a/b/c/.git", Dir: filepath.Join(ws, "a/b/c/.git")},
		"wt/.git":               {Entry: "wt/.git", File: true, Dir: filepath.Join(out, "main/.git/worktrees/wt"), Common: filepath.Join(out, "main/.git")},
		"mod/x/.git":            {Entry: "mod/x/.git", File: true, Dir: filepath.Join(wsr, ".git/modules/x")},
		"lnk/.git":              {Entry: "lnk/.git", File: true},
	}
	for k, w := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s not found", k)
		} else if g != w {
			t.Errorf("%s = %+v, want %+v", k, g, w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("found %s, which lies past the depth or behind a link", k)
		}
	}

	// The budget: the walk stops, says so, and keeps what it found.
	repos, complete = Find(ws, Limits{Depth: 3, Entries: 3})
	if complete {
		t.Error("a walk stopped by its budget reported complete")
	}
	if !slices.ContainsFunc(repos, func(r Repo) bool { return r.Entry == ".git" }) {
		t.Errorf("the workspace's own .git was not found within the budget: %+v", repos)
	}
}

// TestFindPackagesLast: with the budget spent on node_modules's thousands
// of entries, a repository beside it is still found.
func TestFindPackagesLast(t *testing.T) {
	ws := t.TempDir()
	for i := range 200 {
		if err := os.MkdirAll(filepath.Join(ws, "node_modules", "p"+string(rune('a'+i%26))+string(rune('a'+i/26)), "lib"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(ws, "zz/vendor/.git"), 0o755); err != nil {
		t.Fatal(err)
	}
	repos, _ := Find(ws, Limits{Depth: 3, Entries: 250})
	if !slices.ContainsFunc(repos, func(r Repo) bool { return r.Entry == "zz/vendor/.git" }) {
		t.Errorf("zz/vendor/.git not found within the budget: %+v", repos)
	}
}
