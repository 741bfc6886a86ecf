package gitsafe

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gitConfigList is `git config --file PATH --list` of path: what git
// itself reads from it (no include is followed with --file).
func gitConfigList(t *testing.T, path string) []string {
	t.Helper()
	out, err := exec.Command("git", "config", "--file", path, "--list").CombinedOutput()
	if err != nil {
		t.Fatalf("git config --list: %v\n%s", err, out)
	}
	return strings.Fields(strings.TrimSpace(string(out)))
}

func TestSanitizeConfig(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required")
	}
	for _, tc := range []struct {
		name, config string
		// want is what git reads afterwards, dropped what the report names.
		want, dropped []string
	}{
		{"git init's", defaultConfig, []string{"core.repositoryformatversion=0", "core.filemode=true", "core.bare=false", "core.logallrefupdates=true"}, nil},
		{"fsmonitor", "[core]\n\tbare = false\n\tfsmonitor = \"touch /tmp/pwned\"\n", []string{"core.bare=false"}, []string{"core.fsmonitor"}},
		{"case and same line", "[CORE] FsMonitor = evil\n[core]\n\tHooksPath=/tmp/h\n", nil, []string{"core.fsmonitor", "core.hookspath"}},
		{"include", "[include]\n\tpath = ../.evil/config\n[includeIf \"gitdir:/\"]\n\tpath = x\n", nil, []string{"include.path", "includeif.*.path"}},
		{"filter driver", "[filter \"x\"]\n\tclean = sh -c evil\n\tsmudge = evil\n\tprocess = evil\n[diff \"y\"]\n\ttextconv = evil\n", nil, []string{"filter.*.clean", "filter.*.smudge", "filter.*.process", "diff.*.textconv"}},
		{"remote", "[remote \"origin\"]\n\turl = https://example.com/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[remote \"x\"]\n\turl = ext::sh -c evil\n\tuploadpack = evil\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n",
			[]string{"remote.origin.url=https://example.com/r.git", "remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*", "branch.main.remote=origin", "branch.main.merge=refs/heads/main"},
			[]string{"remote.*.url", "remote.*.uploadpack"}},
		{"legacy subsection", "[remote.origin]\n\turl = https://e.com/r\n[core.x]\n\tfsmonitor = evil\n", []string{"remote.origin.url=https://e.com/r"}, []string{"core.*.fsmonitor"}},
		{"continued line", "[core]\n\tbare = fal\\\nse\n\tsshCommand = a\\\n b\n", []string{"core.bare=false"}, []string{"core.sshcommand"}},
		{"comments and quotes", "# c\n[user] ; c\n\tname = \"a \\\"b\\\" ; c\" # c\n\temail = x@y\n", []string{"user.name=a", "\"b\"", ";", "c", "user.email=x@y"}, nil},
		{"crlf", "[core]\r\n\tbare = false\r\n\tpager = evil\r\n", []string{"core.bare=false"}, []string{"core.pager"}},
		{"worktree config", "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tworktreeConfig = true\n\tobjectFormat = sha1\n", []string{"core.repositoryformatversion=1", "extensions.objectformat=sha1"}, []string{"extensions.worktreeconfig"}},
		{"unreadable", "[core\n\tfsmonitor = evil\n", []string{"core.repositoryformatversion=0", "core.filemode=true", "core.bare=false", "core.logallrefupdates=true"}, []string{"(unreadable; replaced by git init's)"}},
		{"key before any section", "fsmonitor = evil\n", []string{"core.repositoryformatversion=0", "core.filemode=true", "core.bare=false", "core.logallrefupdates=true"}, []string{"(unreadable; replaced by git init's)"}},
		{"subsection with quotes", "[remote \"a\\\"b\"]\n\turl = https://e.com\n\tpushurl = -oProxyCommand=evil\n", []string{"remote.a\"b.url=https://e.com"}, []string{"remote.*.pushurl"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "config"), []byte(tc.config), 0o644); err != nil {
				t.Fatal(err)
			}
			removed, err := Sanitize(dir)
			if err != nil {
				t.Fatal(err)
			}
			var dropped []string
			for _, r := range removed {
				if d, ok := strings.CutPrefix(r, "config "); ok {
					dropped = append(dropped, d)
				}
			}
			if !slices.Equal(dropped, tc.dropped) {
				t.Errorf("dropped %q, want %q", dropped, tc.dropped)
			}
			if got := gitConfigList(t, filepath.Join(dir, "config")); !slices.Equal(got, tc.want) {
				b, _ := os.ReadFile(filepath.Join(dir, "config"))
				t.Errorf("git reads %q, want %q\n%s", got, tc.want, b)
			}
		})
	}
}

// TestSanitizeRepository: a repository a confined process made, with
// everything planted that makes a later git run code or read another
// folder, comes out as a plain repository; links planted inside are
// removed, not followed; the report names only reins's own words.
func TestSanitizeRepository(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	os.WriteFile(victim, []byte("victim"), 0o644)
	os.MkdirAll(filepath.Join(outside, "evil"), 0o755)
	os.WriteFile(filepath.Join(outside, "evil", "config"), []byte("[core]\n\tfsmonitor = evil\n"), 0o644)
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	g := filepath.Join(ws, ".git")
	put := func(rel, text string) {
		os.MkdirAll(filepath.Dir(filepath.Join(g, rel)), 0o755)
		if err := os.WriteFile(filepath.Join(g, rel), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	put("hooks/post-checkout", "#!/bin/sh\ntouch pwned\n")
	put("commondir", "../../evil\n")
	put("objects/info/alternates", outside+"\n")
	put("info/attributes", "* filter=x\n")
	put("rebase-merge/git-rebase-todo", "exec touch pwned\n")
	put("sequencer/todo", "exec touch pwned\n")
	put("config.worktree", "[core]\n\tfsmonitor = evil\n")
	put("worktrees/w/commondir", "../../../evil\n")
	put("config", "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch pwned\"\n")
	// A submodule's control folder with its own planted config and hook.
	put("modules/lib/HEAD", "ref: refs/heads/main\n")
	put("modules/lib/config", "[core]\n\tbare = false\n\tfsmonitor = evil\n")
	put("modules/lib/hooks/pre-commit", "evil")
	put("modules/a/b/HEAD", "ref: refs/heads/main\n")
	put("modules/a/b/config", "[core]\n\thooksPath = /x\n")
	// Links: a file link and a folder link out of the repository.
	os.Symlink(victim, filepath.Join(g, "packed-refs"))
	os.Symlink(outside, filepath.Join(g, "refs-evil"))

	removed, err := Sanitize(g)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a symbolic link", "hooks", "commondir", "objects/info/alternates", "config.worktree", "info/attributes", "worktrees", "rebase-merge", "sequencer",
		"config core.fsmonitor", "modules/*/hooks", "modules/*/config core.fsmonitor", "modules/*/config core.hookspath"}
	if !slices.Equal(removed, want) {
		t.Errorf("removed %q\nwant    %q", removed, want)
	}
	for _, rel := range []string{"hooks", "commondir", "objects/info/alternates", "info/attributes", "rebase-merge", "sequencer", "config.worktree", "worktrees", "packed-refs", "refs-evil", "modules/lib/hooks"} {
		if _, err := os.Lstat(filepath.Join(g, rel)); err == nil {
			t.Errorf("%s is still there", rel)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "victim" {
		t.Errorf("a file outside changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "evil", "config")); err != nil {
		t.Errorf("a folder outside was removed through a link: %v", err)
	}
	for _, c := range []string{"config", "modules/lib/config", "modules/a/b/config"} {
		if l := strings.Join(gitConfigList(t, filepath.Join(g, c)), " "); strings.Contains(l, "fsmonitor") || strings.Contains(l, "hookspath") {
			t.Errorf("%s still holds %s", c, l)
		}
	}
	// A trusted git now runs nothing of it.
	cmd := exec.Command("git", "status", "--short")
	cmd.Dir = ws
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git status: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(ws, "pwned")); err == nil {
		t.Error("git status ran a planted command")
	}

	// A second sweep finds nothing more to say.
	if again, err := Sanitize(g); err != nil || len(again) != 0 {
		t.Errorf("second Sanitize = %q, %v", again, err)
	}
}

// TestSanitizeConfigLink: a config that is a link (to a file outside) is
// replaced, and the file it pointed at is untouched.
func TestSanitizeConfigLink(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	victim := filepath.Join(outside, "gitconfig")
	os.WriteFile(victim, []byte("[core]\n\tfsmonitor = x\n"), 0o644)
	os.Link(victim, filepath.Join(dir, "config")) // a hard link: same file system
	removed, err := Sanitize(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{"config core.fsmonitor"}) {
		t.Errorf("removed %q", removed)
	}
	if b, _ := os.ReadFile(victim); !strings.Contains(string(b), "fsmonitor") {
		t.Errorf("the linked file outside was written through: %q", b)
	}
}
