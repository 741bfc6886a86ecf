package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/proc"
)

const (
	bashDefaultTimeout = 120 * time.Second
	bashMaxTimeout     = 600 * time.Second
)

// bashLadder is the teardown of a bash command's group (docs/subagents.md): no
// grace, since bash has no stdin to close; the default SIGTERM wait and
// reap bound. bashDrainWait bounds the wait for the output pipe to close
// once the group is gone: a process that left the group (setsid) may hold it.
var (
	bashLadder    = proc.Ladder{Grace: 0, Term: proc.DefaultTerm, Reap: proc.DefaultReap}
	bashDrainWait = 500 * time.Millisecond
)

type bashTool struct{}

var bashSpec = lazy.Value[llm.ToolSpec]{New: func() llm.ToolSpec {
	return spec("bash",
		"Run a shell command with `bash -c` in the workspace directory. stdout and stderr are combined; the exit code is reported. timeout is in seconds (default 120, max 600). When the command ends, times out or is canceled, every process it started is killed, background ones included.",
		[]string{"command"},
		`"command": {"type": "string", "description": "The shell command to run."}`,
		`"timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": 600, "description": "Timeout in seconds (default 120, max 600)."}`,
		`"background": {"type": "boolean", "description": "Start the command and return at once with an id (a dev server, a watcher); read its output with bash_output, stop it with bash_kill. It is killed when the session ends."}`)
}}

func (bashTool) Spec() llm.ToolSpec { return bashSpec.Get() }

func (bashTool) Needs() Permission { return WorkspaceWrite }

type bashArgs struct {
	Command    *string  `json:"command"`
	Timeout    *float64 `json:"timeout"`
	Background bool     `json:"background"`
}

func (bashTool) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a bashArgs
	if err := decodeArgs(raw, &a, need{"command", &a.Command}); err != nil {
		return Errorf("%v", err)
	}
	if strings.TrimSpace(*a.Command) == "" {
		return Errorf("command is empty")
	}
	timeout := bashDefaultTimeout
	if a.Timeout != nil {
		if *a.Timeout <= 0 {
			return Errorf("timeout must be more than 0 seconds")
		}
		timeout = min(time.Duration(*a.Timeout*float64(time.Second)), bashMaxTimeout)
	}
	dir, err := env.Resolve("")
	if err != nil {
		return Errorf("%v", err)
	}
	if ctx.Err() != nil {
		return Errorf("command canceled before it started")
	}
	if a.Background {
		return runBackground(env, dir, *a.Command)
	}
	pol := env.Policy()
	res, gitRO := runBashGit(ctx, pol, dir, *a.Command, timeout, env.OutputCap)
	if !gitRO || env.AskGitWritable == nil || ctx.Err() != nil || !env.AskGitWritable(ctx, *a.Command) {
		return res
	}
	// The user allowed this one command again with .git writable: the
	// same command, this call only; the model gets the second run.
	pol.GitWritable = true
	again := runBash(ctx, pol, dir, *a.Command, timeout, env.OutputCap)
	again.Content = gitAllowedNote + "\n" + again.Content
	return again
}

// gitAllowedNote heads the result of a command run again with .git
// writable because the user allowed it (Env.AskGitWritable).
const gitAllowedNote = "[reins: the first run failed because .git is read-only to sandboxed commands; " +
	"the user allowed this command to run once more with .git writable, and this is that run's output]"

// runBash runs command in its own process group and returns only when the
// leader is reaped and the group is gone.
//
// The output goes through a pipe of our own rather than exec's copier, so
// cmd.Wait returns when the leader exits even if a background grandchild
// still holds the pipe; the group is then torn down, which closes it.
func runBash(ctx context.Context, pol sandbox.Policy, dir, command string, timeout time.Duration, outCap int) Result {
	res, _ := runBashGit(ctx, pol, dir, command, timeout, outCap)
	return res
}

// runBashGit is runBash also reporting whether the command failed because
// .git is read-only (the result then carries that hint).
func runBashGit(ctx context.Context, pol sandbox.Policy, dir, command string, timeout time.Duration, outCap int) (Result, bool) {
	res, code := runBashOnce(ctx, pol, dir, command, timeout, outCap)
	hint, gitRO := sandboxHint(pol, command, res.Content, code)
	if hint != "" {
		res.Content += "\n" + hint
	}
	return res, gitRO
}

// sandboxHint is the one step that reads a shell command's output for a
// wall of the sandbox it met and says how the user lifts it, so the model
// can say so instead of guessing: the network being off (NetworkHint) and
// .git being read-only to a command that exited non-zero (gitRO; the
// terminal then asks to run it again, Env.AskGitWritable). code is the
// exit status, -1 when the command did not exit by itself. "" when
// neither applies.
func sandboxHint(pol sandbox.Policy, command, output string, code int) (hint string, gitRO bool) {
	var lines []string
	if code > 0 && gitReadOnlyFailure(pol, command, output) {
		gitRO = true
		lines = append(lines, gitReadOnlyNote)
	}
	if h := NetworkHint(pol, output); h != "" {
		lines = append(lines, h)
	}
	return strings.Join(lines, "\n"), gitRO
}

// networkFailures are what programs print when a name does not resolve
// or no route leads out: what a command run with the network off meets.
var networkFailures = []string{
	"Could not resolve host", "Temporary failure in name resolution",
	"Network is unreachable", "getaddrinfo ENOTFOUND", "EAI_AGAIN",
}

// NetworkHint is the line a shell command's result gets when its output
// says it could not reach the network and the sandbox has the network
// off: how the user lets it out (--network on, sandbox.allowDomains;
// where the terminal asks about hosts, that question), so the model can
// say so instead of guessing. "" otherwise.
func NetworkHint(pol sandbox.Policy, output string) string {
	if !pol.Confined() || !pol.DenyNetwork {
		return ""
	}
	hit := false
	for _, f := range networkFailures {
		if strings.Contains(output, f) {
			hit = true
			break
		}
	}
	if !hit {
		return ""
	}
	s := "[reins: the sandbox's network is off; the user can start reins with --network on or list the host in sandbox.allowDomains"
	if pol.AskSocket != "" {
		s += ", or allow the host when the terminal asks"
	}
	return s + "]"
}

// runBashOnce runs the command once; code is its exit status, -1 when it
// did not exit by itself (not started, timed out, canceled, killed).
// params, when given, are the script's $1, $2, ...: data, never shell text.
func runBashOnce(ctx context.Context, pol sandbox.Policy, dir, command string, timeout time.Duration, outCap int, params ...string) (res Result, code int) {
	argv := []string{"-c", command}
	if len(params) > 0 {
		argv = append(argv, "bash") // $0, then params are $1, $2, ...
		argv = append(argv, params...)
	}
	cmd, err := sandbox.Command(pol, "bash", argv...)
	if err != nil {
		return Errorf("cannot start bash: %v", err), -1
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return Errorf("cannot start bash: %v", err), -1
	}
	cmd.Dir = dir
	cmd.Stdout = pw
	cmd.Stderr = pw
	p, err := proc.Start(cmd)
	pw.Close() // the children hold their copies
	if err != nil {
		pr.Close()
		return Errorf("cannot start bash: %v", osErr(err)), -1
	}

	// Head and tail together fit the result cap with room for the marker
	// and status lines, so the registry's cap (which keeps a head) never
	// cuts the tail and the exit code off.
	keep := outCap
	if keep <= 0 {
		keep = DefaultOutputCap
	}
	keep = max(keep-256, 256)
	out := newHeadTail(keep/3, keep-keep/3)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		_, _ = io.Copy(out, pr)
	}()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	timedOut, canceled := false, false
	select {
	case <-p.Done():
	case <-timer.C:
		timedOut = true
	case <-ctx.Done():
		canceled = true
	}
	// The one teardown ladder, with no grace (bash has no stdin to close):
	// after a timeout or cancel it stops the command; after a normal exit it
	// stops the background processes the command left in its group.
	_ = p.Dispose(bashLadder)
	waitErr := p.Wait()

	select {
	case <-readDone:
	case <-time.After(bashDrainWait):
	}
	pr.Close() // unblocks the copier if something outside the group holds the pipe
	<-readDone

	text := out.String()
	switch {
	case timedOut:
		return Result{Content: joinOutput(text, "[command timed out after "+formatSeconds(timeout)+" s and was killed]"), IsError: true}, -1
	case canceled:
		return Result{Content: joinOutput(text, "[command canceled and killed]"), IsError: true}, -1
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return Result{Content: joinOutput(text, "[waiting for bash failed]"), IsError: true}, -1
	}
	code = cmd.ProcessState.ExitCode()
	if code < 0 {
		return Result{Content: joinOutput(text, "[command was killed: "+cmd.ProcessState.String()+"]"), IsError: true}, -1
	}
	return Result{Content: joinOutput(text, fmt.Sprintf("[exit code %d]", code)), IsError: code != 0}, code
}

// gitReadOnlyNote is the line a failed command's result gets when it
// failed on a read-only repository control folder (docs/sandbox.md).
const gitReadOnlyNote = "note: .git is read-only to sandboxed commands, so git cannot commit, stage or change config here; " +
	"the user can allow it with config sandbox.git: writable (docs/sandbox.md)"

// gitReadOnlyFailure reports whether a failed command's output looks like
// a write refused in a read-only .git: the sandbox keeps every .git
// read-only under workspace-write unless sandbox.git is writable, and git
// says only "Read-only file system", which reads like a broken disk. The
// output names .git, or the command runs git (a gitdir: target's path
// need not say .git).
func gitReadOnlyFailure(pol sandbox.Policy, command, output string) bool {
	if !pol.Confined() || pol.Mode != sandbox.WorkspaceWrite || pol.GitWritable {
		return false
	}
	if !strings.Contains(output, "Read-only file system") {
		return false
	}
	return strings.Contains(output, ".git") || strings.Contains(command, "git")
}

func formatSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// joinOutput puts the status line after the command's output.
func joinOutput(out, status string) string {
	if out == "" {
		return status
	}
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out + status
}

// headTailBuffer keeps the first head and the last tail bytes written to
// it and counts what fell between: a build log puts its failure at the end,
// so the tail is always kept (issue 29). Memory is bounded by head+tail
// whatever the command prints.
type headTailBuffer struct {
	head, tail int
	h          []byte
	ring       []byte // the last bytes, oldest first once full
	start      int    // index of the oldest byte in ring when full
	total      int64
}

func newHeadTail(head, tail int) *headTailBuffer {
	return &headTailBuffer{head: head, tail: tail}
}

func (b *headTailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	b.total += int64(n)
	if room := b.head - len(b.h); room > 0 {
		k := min(room, len(p))
		b.h = append(b.h, p[:k]...)
		p = p[k:]
	}
	if len(p) >= b.tail {
		b.ring = append(b.ring[:0], p[len(p)-b.tail:]...)
		b.start = 0
		return n, nil
	}
	for len(p) > 0 {
		if len(b.ring) < b.tail {
			k := min(b.tail-len(b.ring), len(p))
			b.ring = append(b.ring, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(b.ring[b.start:], p)
		p = p[k:]
		b.start = (b.start + k) % b.tail
	}
	return n, nil
}

// String is the kept output: all of it when it fitted, else the head cut
// after its last full line, a line saying how many bytes were dropped, and
// the tail from its first full line.
func (b *headTailBuffer) String() string {
	tail := append(append([]byte{}, b.ring[b.start:]...), b.ring[:b.start]...)
	if b.total <= int64(len(b.h)+len(tail)) {
		return string(b.h) + string(tail)
	}
	head := b.h
	if i := bytesLastNL(head); i >= 0 {
		head = head[:i+1]
	}
	if i := bytesIndexNL(tail); i >= 0 && i < len(tail)-1 {
		tail = tail[i+1:]
	}
	dropped := b.total - int64(len(head)) - int64(len(tail))
	var s strings.Builder
	s.Write(head)
	if len(head) > 0 && head[len(head)-1] != '\n' {
		s.WriteByte('\n')
	}
	fmt.Fprintf(&s, "[... %d bytes of output dropped from the middle (%d in all) ...]\n", dropped, b.total)
	s.Write(tail)
	return s.String()
}

func bytesLastNL(p []byte) int {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '\n' {
			return i
		}
	}
	return -1
}

func bytesIndexNL(p []byte) int {
	for i, c := range p {
		if c == '\n' {
			return i
		}
	}
	return -1
}
