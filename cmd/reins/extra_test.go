package main

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/testutil"
)

// TestNoExtraHelper: a reins-extra command with no reins-extra to find
// ($REINS_EXTRA empty, none beside the executable, none on PATH) exits 2
// with one line that names reins-extra, the command and the docs.
func TestNoExtraHelper(t *testing.T) {
	for _, c := range cli.ExtraCommands {
		t.Run(c.Name, func(t *testing.T) {
			cmd := reinsCmd(t, t.TempDir(), c.Name, "--help")
			cmd.Env = append(cmd.Env, cli.ExtraEnv+"=", "PATH="+t.TempDir())
			code, stderr := exitCode(t, cmd)
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if code != exitUsage || len(lines) != 1 || !strings.HasPrefix(lines[0], "reins: reins-extra not found") ||
				!strings.Contains(lines[0], "reins "+c.Name+" needs it") || !strings.Contains(lines[0], "docs/cli.md#helper-binaries") {
				t.Errorf("exit %d, stderr %q; want 2 and one line naming reins-extra, the command and the docs", code, stderr)
			}
		})
	}
}

// TestExtraIsExec: reins becomes reins-extra in place — the same process
// (pid), so a signal or SIGKILL meant for `reins mock-llm` reaches the
// server — with the arguments unparsed and $REINS_EXE naming this reins
// (what the helper's children run on). The helper here is a shell script
// standing in for reins-extra.
func TestExtraIsExec(t *testing.T) {
	dir := t.TempDir()
	fake := dir + "/reins-extra"
	script := "#!/bin/sh\necho \"$$ $REINS_EXE $*\"\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := reinsCmd(t, t.TempDir(), "mock-llm", "--addr", "x", "--help")
	cmd.Env = append(cmd.Env, cli.ExtraEnv+"="+fake)
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(out.String())
	if len(f) < 2 || f[0] != strconv.Itoa(pid) {
		t.Fatalf("helper printed %q; want pid %d first (an exec, not a child)", out.String(), pid)
	}
	if f[1] != exe || strings.Join(f[2:], " ") != "mock-llm --addr x --help" {
		t.Errorf("helper got REINS_EXE %q and args %q; want %q and the command line unchanged", f[1], f[2:], exe)
	}
}

// TestExtraNamingReins: $REINS_EXTRA naming reins itself is one line and
// exit 2, not reins exec'ing itself for ever.
func TestExtraNamingReins(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := reinsCmd(t, t.TempDir(), "view", "--no-open")
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	cmd.Env = append(os.Environ(), "REINS_AS_MAIN=1", "REINS_HOME="+t.TempDir(), testutil.MarkChildren(t), cli.ExtraEnv+"="+os.Args[0])
	code, stderr := exitCode(t, cmd)
	if ctx.Err() != nil {
		t.Fatalf("reins still running after 2 minutes: an exec loop")
	}
	if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "is not reins-extra") || !strings.Contains(stderr, "$REINS_EXTRA") {
		t.Errorf("exit %d, stderr %q; want 2 and one line saying the helper is not reins-extra", code, stderr)
	}
}
