package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
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
}

// safety are the options of every git reins runs: no hook of the
// repository runs (a child could not plant one, but reins runs git outside
// any sandbox and must not run the repository's code for its own
// bookkeeping), no file-system monitor, no pager, no signing prompt.
var safety = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "commit.gpgSign=false", "--no-pager"}

// git runs git and returns its stdout and exit code.
func git(ctx context.Context, r run) (string, int, error) {
	args := append(append([]string{}, safety...), r.args...)
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(cleanEnv(), r.env...)
	if r.stdin != nil {
		cmd.Stdin = bytes.NewReader(r.stdin)
	}
	out := &capWriter{max: maxOutput}
	errw := &capWriter{max: maxStderr}
	cmd.Stdout, cmd.Stderr = out, errw
	err := cmd.Run()
	op := ""
	if len(r.args) > 0 {
		op = r.args[0]
		if strings.HasPrefix(op, "--") && len(r.args) > 2 {
			op = r.args[2] // --git-dir=… --work-tree=… OP
		}
	}
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
