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

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/proc"
	"github.com/reinsdev/reins/internal/sandbox"
)

const (
	bashDefaultTimeout = 120 * time.Second
	bashMaxTimeout     = 600 * time.Second
	// bashKeep bounds the output held in memory; the registry's cap cuts
	// the result further. A chatty command cannot exhaust memory.
	bashKeep = 1 << 20
)

// bashLadder is the teardown of a bash command's group (docs/subagents.md): no
// grace, since bash has no stdin to close; the default SIGTERM wait and
// reap bound. bashDrainWait bounds the wait for the output pipe to close
// once the group is gone: a process that left the group (setsid) may hold it.
var (
	bashLadder    = proc.Ladder{Grace: 0, Term: proc.DefaultLadder.Term, Reap: proc.DefaultLadder.Reap}
	bashDrainWait = 500 * time.Millisecond
)

type bashTool struct{}

func (bashTool) Spec() llm.ToolSpec {
	return spec("bash",
		"Run a shell command with `bash -c` in the workspace directory. stdout and stderr are combined; the exit code is reported. timeout is in seconds (default 120, max 600). When the command ends, times out or is canceled, every process it started is killed, background ones included.",
		`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "The shell command to run."},
    "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": 600, "description": "Timeout in seconds (default 120, max 600)."}
  },
  "required": ["command"],
  "additionalProperties": false
}`)
}

func (bashTool) Needs() Permission { return WorkspaceWrite }

type bashArgs struct {
	Command *string  `json:"command"`
	Timeout *float64 `json:"timeout"`
}

func (bashTool) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a bashArgs
	if err := decodeArgs(raw, &a); err != nil {
		return Errorf("%v", err)
	}
	if err := required("command", a.Command); err != nil {
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
	return runBash(ctx, env.Policy(), dir, *a.Command, timeout)
}

// runBash runs command in its own process group and returns only when the
// leader is reaped and the group is gone.
//
// The output goes through a pipe of our own rather than exec's copier, so
// cmd.Wait returns when the leader exits even if a background grandchild
// still holds the pipe; the group is then torn down, which closes it.
func runBash(ctx context.Context, pol sandbox.Policy, dir, command string, timeout time.Duration) Result {
	cmd, err := sandbox.Command(pol, "bash", "-c", command)
	if err != nil {
		return Errorf("cannot start bash: %v", err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return Errorf("cannot start bash: %v", err)
	}
	cmd.Dir = dir
	cmd.Stdout = pw
	cmd.Stderr = pw
	p, err := proc.Start(cmd)
	pw.Close() // the children hold their copies
	if err != nil {
		pr.Close()
		return Errorf("cannot start bash: %v", osErr(err))
	}

	out := &headBuffer{limit: bashKeep}
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
		return Result{Content: joinOutput(text, "[command timed out after "+formatSeconds(timeout)+" s and was killed]"), IsError: true}
	case canceled:
		return Result{Content: joinOutput(text, "[command canceled and killed]"), IsError: true}
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return Result{Content: joinOutput(text, "[waiting for bash failed]"), IsError: true}
	}
	code := cmd.ProcessState.ExitCode()
	if code < 0 {
		return Result{Content: joinOutput(text, "[command was killed: "+cmd.ProcessState.String()+"]"), IsError: true}
	}
	return Result{Content: joinOutput(text, fmt.Sprintf("[exit code %d]", code)), IsError: code != 0}
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

// headBuffer keeps the first limit bytes written to it and counts the rest.
type headBuffer struct {
	limit   int
	buf     []byte
	dropped int64
}

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := h.limit - len(h.buf); room > 0 {
		n := min(room, len(p))
		h.buf = append(h.buf, p[:n]...)
		h.dropped += int64(len(p) - n)
	} else {
		h.dropped += int64(len(p))
	}
	return len(p), nil
}

func (h *headBuffer) String() string {
	if h.dropped == 0 {
		return string(h.buf)
	}
	return fmt.Sprintf("%s\n[output truncated: %d more bytes not kept]", h.buf, h.dropped)
}
