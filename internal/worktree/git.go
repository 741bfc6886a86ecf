package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/reinsdev/reins/internal/sandbox"
)

// maxOutput bounds what one git command may print to reins (a diff
// included): more is an error, never an unbounded buffer.
const maxOutput = 64 << 20

// maxStderr bounds the stderr kept for an error message.
const maxStderr = 8 << 10

// GitError is a git command that failed. Stderr is git's own message
// (bounded), for the host log and the user's terminal; it may name paths
// and must never enter a diagnostic.
type GitError struct {
	// Op is the git subcommand (worktree, merge-tree, apply, ...).
	Op       string
	ExitCode int
	Stderr   string
	Err      error
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s failed: %s", e.Op, msg)
}

func (e *GitError) Unwrap() error { return e.Err }

// capWriter keeps at most max bytes and remembers that more came.
type capWriter struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); room < len(p) {
		w.over = true
		if room > 0 {
			w.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return w.buf.Write(p)
}

// run is one git invocation.
type run struct {
	dir   string   // working directory
	env   []string // added to the cleaned environment
	stdin []byte
	args  []string
	// okCodes are exit codes besides 0 that are answers, not failures
	// (merge-tree's 1: conflicts).
	okCodes []int
	// pol is the sandbox git runs in (Repo.policy).
	pol sandbox.Policy
	// script, when set, is a shell script run instead of one git
	// command, with git's argument prefix (the safety flags, -C dir, args)
	// as "$@"; op names it in errors and in accessOf.
	script, op string
}

// safety are the options of every git reins runs: no hook of the
// repository runs, no file-system monitor, no pager, no signing prompt.
// They are the second wall: git itself runs confined (policy), because
// what a repository makes git run is more than hooks — filters and
// textconv drivers routed by .gitattributes, an include, a diff or
// credential helper — and Debian's git 2.39 cannot switch off includes
// or in-tree attributes by any flag.
var safety = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "commit.gpgSign=false", "--no-pager"}

// termGrace is how long a git cancelled by its context gets after
// SIGTERM (its supervisor sweeps every descendant) before it is killed.
const termGrace = 2 * time.Second

// git runs git and returns its stdout and exit code: under the
// supervisor with r.pol (docs/sandbox.md, "reins's own git"), or directly
// when the sandbox is off.
func git(ctx context.Context, r run) (string, int, error) {
	args := append(append([]string{}, safety...), r.args...)
	if r.dir != "" {
		// The folder named on the command line too: the container brings
		// back a named path's top folder under a private one (a
		// repository in /tmp whose .git is above the workspace).
		args = append([]string{"-C", r.dir}, args...)
	}
	name := "git"
	if r.script != "" {
		name, args = "sh", append([]string{"-c", r.script, "sh"}, args...)
	}
	exe, argv := name, args
	if Confined(r.pol) {
		var err error
		if exe, argv, err = sandbox.Argv(r.pol, name, args...); err != nil {
			if errors.Is(err, exec.ErrNotFound) {
				return "", -1, ErrNoGit
			}
			return "", -1, &GitError{Op: r.opName(), ExitCode: -1, Err: err}
		}
	}
	cmd := exec.CommandContext(ctx, exe, argv...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = termGrace
	cmd.Dir = r.dir
	cmd.Env = append(cleanEnv(), r.env...)
	if r.stdin != nil {
		cmd.Stdin = bytes.NewReader(r.stdin)
	}
	out := &capWriter{max: maxOutput}
	errw := &capWriter{max: maxStderr}
	cmd.Stdout, cmd.Stderr = out, errw
	err := cmd.Run()
	op := r.opName()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			if errors.Is(err, exec.ErrNotFound) {
				return "", -1, ErrNoGit
			}
			return "", -1, &GitError{Op: op, ExitCode: -1, Err: err}
		}
		code = ee.ExitCode()
		ok := false
		for _, c := range r.okCodes {
			ok = ok || c == code
		}
		if !ok {
			return out.buf.String(), code, &GitError{Op: op, ExitCode: code, Stderr: errw.buf.String(), Err: err}
		}
	}
	if out.over {
		return "", code, &GitError{Op: op, ExitCode: code, Err: fmt.Errorf("output larger than %d bytes", maxOutput)}
	}
	return out.buf.String(), code, nil
}

// Confined reports whether reins's own git runs confined under base, the
// session's policy: yes unless the sandbox is off (config, --sandbox=off)
// or this machine cannot confine at all (not Linux, a kernel without the
// Landlock reins needs). There git runs directly, as a bash command
// could not, with only the flags above (safety): filters, textconv
// drivers and includes of a repository then run unconfined — reins doctor
// says so. Refusing instead would take /undo and worktree isolation away
// on those machines, where a confined bash (the way a model plants such
// a config) cannot run either.
func Confined(base sandbox.Policy) bool {
	if !base.Confined() {
		return false
	}
	var ue *sandbox.UnavailableError
	return !errors.As(sandbox.Check(policy(base, readRepo, "/", "", nil)), &ue)
}

// opName is what r runs: its script's name or its git subcommand.
func (r run) opName() string {
	if r.op != "" {
		return r.op
	}
	return opOf(r.args)
}

// opOf is the git subcommand of args.
func opOf(args []string) string {
	op := ""
	if len(args) > 0 {
		op = args[0]
		if strings.HasPrefix(op, "--") && len(args) > 2 {
			op = args[2] // --git-dir=… --work-tree=… OP
		}
	}
	return op
}

// access is what a git command of reins's writes.
type access int

const (
	// readRepo: nothing (rev-parse, diff, status with optional locks off).
	readRepo access = iota
	// writeGitDir: the repository's git directory only — objects, refs,
	// the worktrees reins keeps there — and a temporary index.
	writeGitDir
	// writeTree: the working tree as well (checkout of a snapshot, apply
	// of a child's change).
	writeTree
)

// accessOf is the one rule of what each subcommand reins runs may write;
// one not listed may write the git directory.
func accessOf(op string) access {
	switch op {
	case "version", "rev-parse", "diff", "diff-tree", "for-each-ref", "status", "check-ignore":
		return readRepo
	case "checkout", "apply":
		return writeTree
	}
	return writeGitDir
}

// gitDirProtect are the parts of the git directory that stay read-only
// while git writes the rest of it (relative to it): its config, hooks,
// info (attributes, exclude) and a commondir that would send later git
// runs to another config. A missing one that git's child creates is
// removed when it ends (the supervisor's rule for protected paths).
var gitDirProtect = []string{"config", "hooks", "info", "commondir"}

// gitEnvKeep are the variables reins sets for its own commits; their names
// contain AUTH, which the sandbox's scrubbing would take for a secret.
var gitEnvKeep = []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL"}

// policy is the sandbox a git command of access a runs in, on the
// repository rooted at root with git directory gitDir (gitDir "" before
// the repository is known: Open), from base, the session's policy (its
// Off, home, environment rules and protected paths). Whatever git runs
// for the repository runs in it too: no network, $REINS_HOME and the
// credential files hidden, writes only where the command must write (and
// the folder of a temporary index named in env).
func policy(base sandbox.Policy, a access, root, gitDir string, env []string) sandbox.Policy {
	p := sandbox.Policy{
		Mode: sandbox.WorkspaceWrite, DenyNetwork: true,
		Home: base.Home, Off: base.Off, NoNamespaces: base.NoNamespaces,
		Starting: base.Starting, TermGrace: base.TermGrace,
		Env: sandbox.EnvPolicy{Pass: base.Env.Pass, Set: base.Env.Set, Deny: base.Env.Deny, Keep: gitEnvKeep},
	}
	for _, kv := range env {
		if idx, ok := strings.CutPrefix(kv, "GIT_INDEX_FILE="); ok {
			p.Writable = append(p.Writable, filepath.Dir(idx))
		}
	}
	switch {
	case a == readRepo || gitDir == "":
		p.Mode, p.Workspace, p.Writable = sandbox.ReadOnly, root, nil
	case a == writeGitDir:
		// The sandbox's own .git walls (every repository control folder
		// read-only) would refuse the very writes this command is for;
		// gitDirProtect keeps what must not change.
		p.Workspace, p.Protect, p.GitWritable = gitDir, gitDirProtect, true
	default:
		p.GitWritable = true // the git directory's config and hooks stay protected (protect.Builtin)
		p.Workspace, p.Protect = root, base.Protect
		if rel, err := filepath.Rel(root, gitDir); err != nil || !filepath.IsLocal(rel) {
			p.Writable = append(p.Writable, gitDir)
		}
	}
	return p
}

// cleanEnv is the environment without the variables that would point git
// elsewhere than reins says (a hook's or a test's GIT_DIR), without a
// terminal prompt, and in a fixed language so messages can be read.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_PREFIX", "GIT_NAMESPACE", "LANG", "LC_ALL", "LANGUAGE":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0")
}
