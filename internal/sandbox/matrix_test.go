//go:build linux

package sandbox_test

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/mcp"
	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/tool"
)

// kind is a kind of process reins starts, with the policy its starter
// gives it (the same code paths: tool.Env.Policy for bash and MCP servers,
// plus the server's own env; subagent.Request.ChildPolicy for the children,
// plus a reins child's state and config).
type kind struct {
	name   string
	policy func(base sandbox.Policy, mode sandbox.Mode, ws, home string) sandbox.Policy
	// network: the kind keeps the host's network (children reach their
	// provider).
	network bool
}

func kinds() []kind {
	toolPol := func(base sandbox.Policy, mode sandbox.Mode, ws, _ string) sandbox.Policy {
		env := &tool.Env{Workspace: ws, Permission: tool.Permission(mode), Sandbox: base}
		return env.Policy()
	}
	child := func(base sandbox.Policy, mode sandbox.Mode, ws, _ string) sandbox.Policy {
		req := subagent.Request{Cwd: ws, Permission: tool.Permission(mode), Sandbox: base, Agent: &config.Agent{Model: "anthropic/x"}}
		return req.ChildPolicy(subagent.KeyEnv("anthropic/x"))
	}
	return []kind{
		{"bash", toolPol, false},
		{"mcp-server", func(b sandbox.Policy, _ sandbox.Mode, ws, _ string) sandbox.Policy {
			// The configuration's policy whatever the session's mode
			// (mcp.ServerPolicy), plus the server's own env (mcp's spawn).
			p := mcp.ServerPolicy(b, ws)
			p.Env.Keep = append(p.Env.Keep, "MCP_SERVER_TOKEN")
			return p
		}, false},
		{"acp-child", child, true},
		{"pi-child", child, true},
		{"reins-child", func(b sandbox.Policy, m sandbox.Mode, ws, h string) sandbox.Policy {
			p := child(b, m, ws, h)
			p.State = config.StateDirs(filepath.Join(h, ".reins"))
			for _, f := range []string{"config.yaml", "agents", "trusted.json"} {
				p.Readable = append(p.Readable, filepath.Join(h, ".reins", f))
			}
			return p
		}, true},
	}
}

// TestMatrix (issue 26, acceptance 3): for each confined permission mode
// and each kind of process, the same escape attempts, all in one confined
// script per cell. An attempt prints NAME:ESCAPED when it got through; the
// plants are judged on the host after the process ended.
func TestMatrix(t *testing.T) {
	for cell, escaped := range runMatrix(t, "", nil) {
		if len(escaped) > 0 {
			t.Errorf("%s: escaped: %s", cell, strings.Join(escaped, ", "))
		}
	}
}

// TestMatrixMutations is the mutation check of acceptance 3: the matrix
// again with one wall turned off at a time (sandbox.MutateEnv), printing
// which cells then let which attempts through. A wall that no attempt
// depends on must be named in layered, with the wall that stands behind
// it. It runs one mutation per wall (and a few pairs) of four cells (mutationCells: both modes of
// bash, a child that keeps the network, a reins child with its state and
// config), so only when REINS_TEST_MUTATIONS=1.
func TestMatrixMutations(t *testing.T) {
	if os.Getenv("REINS_TEST_MUTATIONS") != "1" {
		t.Skip("set REINS_TEST_MUTATIONS=1 to run the matrix once per wall turned off")
	}
	// layered: walls whose attempts another wall stops too, so turning
	// them off alone lets nothing through; turned off together they do.
	layered := map[string]string{
		"seccomp": "setsid (no controlling terminal: TIOCSTI needs CAP_SYS_ADMIN, dropped)",
		"setsid":  "seccomp (TIOCSTI refused)",
		"pidns":   "landlock (signal scope: the supervisor cannot be signalled)",
		"caps":    "userns (the container drops every capability itself; caps is the fallback's: TestSupervisorEnvironHidden)",
		// Not layered: the matrix's workspace is a repository already, so
		// the sweep of a repository a process creates has its own
		// mutation check.
		"git-sweep": "TestGitWallsMutation (a new repository at the workspace root)",
		// Tracing the container's init: the kernel refuses it for an
		// undumpable process, and the filter refuses the calls.
		"no-trace": "dumpable (ptrace and process_vm_readv of an undumpable init are refused; TestTerminalFilter holds the filter)",
	}
	for _, m := range append(sandbox.Walls(), "seccomp,setsid", "pidns,landlock", "dumpable,no-trace") {
		t.Run(m, func(t *testing.T) {
			var lines []string
			for cell, escaped := range runMatrix(t, m, mutationCells) {
				if len(escaped) > 0 {
					lines = append(lines, cell+": "+strings.Join(escaped, ", "))
				}
			}
			slices.Sort(lines)
			t.Logf("walls off: %s\n%s", m, strings.Join(lines, "\n"))
			if len(lines) == 0 && layered[m] == "" {
				t.Errorf("turning %s off lets no attempt through: the wall is untested", m)
			}
		})
	}
}

// mutationCells are the cells the mutation check runs.
func mutationCells(cell string) bool {
	return slices.Contains([]string{"read-only/bash", "workspace-write/bash", "workspace-write/acp-child", "workspace-write/reins-child"}, cell)
}

// runMatrix runs the cells only allows (nil: all) with the walls mutate
// turned off ("": none) and returns, per cell (MODE/KIND), the attempts
// that got through but should not have (or were expected to work and did
// not: NAME-expected).
func runMatrix(t *testing.T, mutate string, only func(cell string) bool) map[string][]string {
	t.Helper()
	if sandbox.ABI() < 6 {
		t.Fatalf("this suite needs Landlock ABI 6; the kernel has %d", sandbox.ABI())
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(cache, "reins-test"), 0o755)
	home, err := os.MkdirTemp(filepath.Join(cache, "reins-test"), "matrix-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		// An attempt that got through (a wall turned off) may have made
		// the victim immutable: clear that first, or the folder stays
		// behind in the user's cache.
		_ = exec.Command("chattr", "-R", "-i", home).Run()
		os.RemoveAll(home)
	}()
	home, _ = filepath.EvalSymlinks(home)
	for f, c := range map[string]string{".ssh/id_ed25519": "SSH-PRIVATE", ".aws/credentials": "AWS-CRED", ".reins/config.yaml": "model: mock/echo\n", "outside/victim": "x"} {
		os.MkdirAll(filepath.Dir(filepath.Join(home, f)), 0o755)
		os.WriteFile(filepath.Join(home, f), []byte(c), 0o644)
	}
	os.MkdirAll(filepath.Join(home, ".reins", "sessions"), 0o755)
	victim := filepath.Join(home, "outside", "victim")
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	hostDev := readableDevice()
	abstract := "@reins-matrix-" + strconv.Itoa(os.Getpid())
	abs, err := net.Listen("unix", abstract)
	if err != nil {
		t.Fatal(err)
	}
	defer abs.Close()
	sockDir, _ := os.MkdirTemp("/tmp", "tmux-matrix-")
	defer os.RemoveAll(sockDir)
	door, err := net.Listen("unix", filepath.Join(sockDir, "default"))
	if err != nil {
		t.Fatal(err)
	}
	defer door.Close()
	// Another program's file in the host's /tmp.
	if err := os.WriteFile(filepath.Join(sockDir, "secret"), []byte("HOST-TMP-SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A server's socket outside the private folders: TMUX_TMPDIR=~/.tmux.
	homeDoor, err := net.Listen("unix", filepath.Join(home, "tmux.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer homeDoor.Close()
	// A descriptor reins inherited (an editor's, a CI runner's) of a
	// folder whose credentials the container hides: fd 9 of the
	// supervisor, as reins would pass it on (above every descriptor the
	// supervisor hands the stage, 3 to 7, so that only the wall stops it).
	homeFD, err := os.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	defer homeFD.Close()
	for _, ln := range []net.Listener{abs, door, homeDoor} {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}

	py := func(name, code string) string {
		return `python3 -c '` + code + `' 2>/dev/null && echo ` + name + `:ESCAPED` + "\n"
	}
	script := `cd "$WS"
echo x > "$VICTIM.new" 2>/dev/null && echo write-outside:ESCAPED
chmod 000 "$VICTIM" 2>/dev/null && echo chmod-outside:ESCAPED
touch -d 1999-01-01 "$VICTIM" 2>/dev/null && echo touch-outside:ESCAPED
chattr +i "$VICTIM" 2>/dev/null && echo chattr-outside:ESCAPED
` + py("xattr-outside", `import os; os.setxattr(os.environ["VICTIM"], "user.x", b"1")`) + `
grep -q SSH-PRIVATE "$HOME/.ssh/id_ed25519" 2>/dev/null && echo read-ssh-key:ESCAPED
grep -q AWS-CRED "$HOME/.aws/credentials" 2>/dev/null && echo read-aws:ESCAPED
grep -q mock "$HOME/.reins/config.yaml" 2>/dev/null && test "$KIND" != reins-child && echo read-reins-config:ESCAPED
echo 'sandbox: {enabled: false}' >> "$HOME/.reins/config.yaml" 2>/dev/null && echo write-reins-config:ESCAPED
test -n "$DEEPSEEK_API_KEY" && echo env-other-provider-key:ESCAPED
test -n "$GITHUB_TOKEN" && echo env-token:ESCAPED
cat /proc/*/environ 2>/dev/null | tr '\0' '\n' | grep -q '^GITHUB_TOKEN=' && echo proc-environ:ESCAPED
printf '#!/bin/sh\n' > .git/hooks/pre-commit 2>/dev/null
git config core.fsmonitor pwned 2>/dev/null
echo '{}' > .mcp.json 2>/dev/null
mkdir -p .claude/agents 2>/dev/null && echo x > .claude/agents/x.md 2>/dev/null
mv .git .git-away 2>/dev/null
echo ../.evil > .git/commondir 2>/dev/null
git -C sub config core.fsmonitor pwned 2>/dev/null
(exec 3<>/dev/tcp/127.0.0.1/$TCPPORT) 2>/dev/null && echo tcp-egress:ESCAPED
echo leak > /dev/udp/127.0.0.1/$UDPPORT 2>/dev/null
` + py("abstract-socket", `import socket,os; s=socket.socket(socket.AF_UNIX); s.connect("\0"+os.environ["ABSTRACT"])`) +
		py("outside-server-socket", `import socket,os; s=socket.socket(socket.AF_UNIX); s.connect(os.environ["DOOR"])`) +
		py("home-server-socket", `import socket,os; s=socket.socket(socket.AF_UNIX); s.connect(os.environ["HOME"]+"/tmux.sock")`) +
		py("tiocsti", `import fcntl,termios; fcntl.ioctl(0, termios.TIOCSTI, b"X")`) + `
grep -q SSH-PRIVATE /proc/self/fd/9/.ssh/id_ed25519 2>/dev/null && echo inherited-fd:ESCAPED
test -n "$HOSTDEV" && head -c 1 "$HOSTDEV" >/dev/null 2>&1 && echo host-device:ESCAPED
head -c 1 /proc/1/environ >/dev/null 2>&1 && echo init-environ:ESCAPED
` + py("trace-init", `import ctypes,os; libc=ctypes.CDLL(None); assert libc.ptrace(16, 1, None, None) == 0; os.waitpid(1, 0x40000000); libc.ptrace(17, 1, None, None)`) + `
head -c 16M /dev/zero > /tmp/fill 2>/dev/null && echo tmp-limit:ESCAPED
rm -f /tmp/fill
sup=$(awk '{print $4}' /proc/$PPID/stat 2>/dev/null)
test "${sup:-0}" -gt 1 && kill -STOP "$sup" 2>/dev/null && kill -CONT "$sup" && echo signal-watcher:ESCAPED
echo planted > "$HOSTTMP/planted" 2>/dev/null
grep -q HOST-TMP-SECRET "$HOSTTMP/secret" 2>/dev/null && echo read-host-tmp:ESCAPED
# Last: past the process cap the container's init ends it all.
for i in $(seq 80); do sleep 60 & done
for i in $(seq 200); do sleep 0.1; done
echo pids:ESCAPED
kill $(jobs -p) 2>/dev/null
exit 0`

	type verdict map[string]bool // attempt → escaped
	result := map[string][]string{}
	for _, mode := range []sandbox.Mode{sandbox.ReadOnly, sandbox.WorkspaceWrite} {
		for _, k := range kinds() {
			cell := string(mode) + "/" + k.name
			if only != nil && !only(cell) {
				continue
			}
			func() {
				ws := t.TempDir()
				for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "t@e"}, {"config", "user.name", "t"}} {
					c := exec.Command("git", args...)
					c.Dir = ws
					if out, err := c.CombinedOutput(); err != nil {
						t.Fatalf("git: %v %s", err, out)
					}
				}
				// A nested repository (issue 47): its control folder is
				// read-only too.
				if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
					t.Fatal(err)
				}
				if out, err := exec.Command("git", "init", "-q", filepath.Join(ws, "sub")).CombinedOutput(); err != nil {
					t.Fatalf("git: %v %s", err, out)
				}
				gitConfig, _ := os.ReadFile(filepath.Join(ws, ".git", "config"))
				subConfig, _ := os.ReadFile(filepath.Join(ws, "sub", ".git", "config"))
				os.WriteFile(victim, []byte("x"), 0o644)
				os.Chtimes(victim, old, old)
				// Small limits, so the attempts past them are cheap.
				base := sandbox.Policy{DenyNetwork: true, Home: filepath.Join(home, ".reins"), Limits: sandbox.Limits{Tmp: 8 << 20, Pids: 64}}
				p := k.policy(base, mode, ws, home)
				cmd, err := sandbox.Command(p, "bash", "-c", script)
				if err != nil {
					t.Fatal(err)
				}
				ptmx, tty, err := pty.Open()
				if err != nil {
					t.Fatal(err)
				}
				defer ptmx.Close()
				var out bytes.Buffer
				cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = ws, tty, &out, &out
				cmd.Env = append(os.Environ(), "HOME="+home, "WS="+ws, "VICTIM="+victim, "KIND="+k.name,
					"DEEPSEEK_API_KEY=sk-other", "ANTHROPIC_API_KEY=sk-own", "GITHUB_TOKEN=ghp-x", "MCP_SERVER_TOKEN=own",
					"TCPPORT="+strconv.Itoa(tcp.Addr().(*net.TCPAddr).Port), "UDPPORT="+strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port),
					"ABSTRACT="+abstract[1:], "DOOR="+filepath.Join(sockDir, "default"), "HOSTTMP="+sockDir, "HOSTDEV="+hostDev,
					sandbox.MutateEnv+"="+mutate)
				cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
				cmd.ExtraFiles = []*os.File{nil, nil, nil, nil, nil, nil, homeFD} // fd 9
				err = cmd.Run()
				if err != nil && strings.Contains(out.String(), "(sandbox.limits.pids)") {
					err = nil // the process cap ended it, as it should
				}
				if err != nil {
					if mutate == "" {
						t.Fatalf("%s: %v\n%s", cell, err, out.String())
					}
					// A wall turned off may break the start itself.
					result[cell] = []string{"start failed: " + err.Error()}
					return
				}
				tty.Close()
				got := verdict{}
				for _, line := range strings.Split(out.String(), "\n") {
					if name, ok := strings.CutSuffix(line, ":ESCAPED"); ok {
						got[name] = true
					}
				}
				// Judged on the host.
				if fi, err := os.Stat(victim); err != nil || fi.Mode().Perm() != 0o644 || !fi.ModTime().Equal(old) {
					got["victim-changed"] = true
				}
				for _, f := range []string{".git/hooks/pre-commit", ".mcp.json", ".claude/agents/x.md", ".git-away", ".git/commondir"} {
					if _, err := os.Lstat(filepath.Join(ws, f)); err == nil {
						got["plant "+f] = true
					}
				}
				if b, _ := os.ReadFile(filepath.Join(ws, ".git", "config")); !bytes.Equal(b, gitConfig) {
					got["plant .git/config"] = true
				}
				if b, _ := os.ReadFile(filepath.Join(ws, "sub", ".git", "config")); !bytes.Equal(b, subConfig) {
					got["plant sub/.git/config"] = true
				}
				if _, err := os.Lstat(filepath.Join(sockDir, "planted")); err == nil {
					got["write-host-tmp"] = true
					os.Remove(filepath.Join(sockDir, "planted"))
				}
				c, _ := net.Dial("udp", udp.LocalAddr().String())
				c.Write([]byte("marker"))
				c.Close()
				buf := make([]byte, 16)
				udp.SetReadDeadline(time.Now().Add(10 * time.Second))
				if n, _, _ := udp.ReadFrom(buf); string(buf[:n]) != "marker" {
					got["udp-egress"] = true
					udp.ReadFrom(buf) // the marker
				}
				want := verdict{}
				if k.network {
					want["tcp-egress"], want["udp-egress"] = true, true
				}
				var bad []string
				for a := range got {
					if got[a] != want[a] {
						bad = append(bad, a)
					}
				}
				for a := range want {
					if !got[a] {
						bad = append(bad, a+"-expected") // the kind keeps the network
					}
				}
				slices.Sort(bad)
				result[cell] = bad
				if len(bad) > 0 && mutate == "" {
					t.Logf("%s:\n%s", cell, out.String())
				}
			}()
		}
	}
	return result
}

// readableDevice is a block device of the host (or /dev/mem) that this
// user can read here, "" when none: a confined process must not.
func readableDevice() string {
	var candidates []string
	ents, _ := os.ReadDir("/sys/class/block")
	for _, e := range ents {
		candidates = append(candidates, "/dev/"+e.Name())
	}
	for _, c := range append(candidates, "/dev/mem", "/dev/kmsg") {
		if f, err := os.OpenFile(c, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
			return c
		}
	}
	return ""
}
