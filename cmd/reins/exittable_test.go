package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// exitRow is one row of docs/cli.md's "Exit status by command" table.
type exitRow struct {
	command, when, example string
	status                 int
}

// exitTable parses the table out of docs/cli.md.
func exitTable(t *testing.T) []exitRow {
	t.Helper()
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Exit status by command\n")
	if !ok {
		t.Fatal("docs/cli.md has no section \"Exit status by command\"")
	}
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	var rows []exitRow
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "| `reins") {
			continue
		}
		cells := strings.Split(strings.ReplaceAll(line, `\|`, "\x00"), "|")
		if len(cells) != 6 {
			t.Fatalf("row %q: want 4 cells", line)
		}
		cell := func(i int) string {
			return strings.Trim(strings.TrimSpace(strings.ReplaceAll(cells[i], "\x00", "|")), "`")
		}
		st, err := strconv.Atoi(cell(2))
		if err != nil {
			t.Fatalf("row %q: status %q", line, cell(2))
		}
		rows = append(rows, exitRow{command: cell(1), status: st, when: cell(3), example: cell(4)})
	}
	if len(rows) < 20 {
		t.Fatalf("only %d rows", len(rows))
	}
	return rows
}

// TestExitStatusTable walks docs/cli.md's exit-status table and runs each
// row's example against the binary: the table is what every command does.
func TestExitStatusTable(t *testing.T) {
	rows := exitTable(t)
	home, dir := t.TempDir(), t.TempDir()
	const broken = "20260101-000000-deadbeef"
	for _, id := range []string{broken, "20260101-000000-cafecafe"} {
		os.MkdirAll(filepath.Join(home, "sessions", id), 0o755)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(home, "sessions", broken, "session.jsonl")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(home, "sessions", "20260101-000000-cafecafe", "session.jsonl"),
		[]byte(`{"type":"session","version":1,"id":"20260101-000000-cafecafe","createdAt":"2026-01-01T00:00:00Z","cwd":"/"}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "tasks.jsonl"), []byte(`{"id":"a","prompt":"hi"}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "failing.jsonl"), []byte(`{"id":"a","prompt":"zzlimit"}`+"\n"), 0o644)
	script := filepath.Join(dir, "script.yaml")
	os.WriteFile(script, []byte("replies:\n  - {match: zzlimit, text: cut, finish: length, repeat: true}\n  - {match: zzhang, fault: stall, repeat: true}\nfallback: {text: fine}\n"), 0o644)

	for _, r := range rows {
		t.Run(r.command+" "+strconv.Itoa(r.status)+" "+r.when, func(t *testing.T) {
			args := strings.Fields(strings.ReplaceAll(r.example, "BROKEN", broken))
			if len(args) == 0 || args[0] != "reins" {
				t.Fatalf("example %q does not start with reins", r.example)
			}
			args = args[1:]
			var stdin, closedOut bool
			switch {
			case len(args) >= 2 && args[len(args)-2] == "<" && args[len(args)-1] == "/dev/null":
				args, stdin = args[:len(args)-2], true
			case len(args) >= 2 && args[len(args)-2] == "|" && args[len(args)-1] == "true":
				args, closedOut = args[:len(args)-2], true
			}
			cmd := reinsCmd(t, home, args...)
			cmd.Dir = dir
			cmd.Env = append(cmd.Env, "REINS_MOCK_SCRIPT="+script)
			if stdin {
				cmd.Stdin = nil // /dev/null
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			var sig syscall.Signal
			switch r.status {
			case 130:
				sig = syscall.SIGINT
			case 143:
				sig = syscall.SIGTERM
			}
			var out *os.File
			if closedOut {
				cmd.Stdout = closedStdout(t)
			} else if sig != 0 {
				rd, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				cmd.Stdout, out = w, rd
				defer rd.Close()
				defer w.Close()
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if sig != 0 {
				// The signal goes once the model request is under way:
				// the stream's step/start says so.
				br := bufio.NewReader(out)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						cmd.Process.Kill()
						t.Fatalf("no step/start before the stream ended: %v; stderr %s", err, stderr.String())
					}
					if strings.Contains(line, `"type":"step/start"`) {
						break
					}
				}
				cmd.Process.Signal(sig)
				go func() { // drain the rest, so the run never blocks on it
					for {
						if _, err := br.ReadString('\n'); err != nil {
							return
						}
					}
				}()
			}
			if code := waitExit(t, cmd); code != r.status {
				t.Errorf("%s: exit %d, want %d (%s); stderr: %s", r.example, code, r.status, r.when, stderr.String())
			}
		})
	}
}
