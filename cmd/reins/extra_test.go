package main

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/cli"
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
