//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// The attacks of issue 26, each run by a confined bash as the bash tool
// runs it (under the supervisor). Each fails on the Landlock-only sandbox
// of 36905c5 and must hold now.

// visibleDir is a scratch directory outside the private folders (/tmp,
// /var/tmp, /run, /dev/shm), so that a confined process sees it as it is
// and a refusal comes from the rule under test, not from the private /tmp.
func visibleDir(t *testing.T) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	base = filepath.Join(base, "reins-test")
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := os.MkdirTemp(base, "sandbox-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = exec.Command("chattr", "-i", "-R", d).Run()
		_ = os.Chmod(d, 0o755)
		_ = os.RemoveAll(d)
	})
	if d, err = filepath.EvalSymlinks(d); err != nil {
		t.Fatal(err)
	}
	return d
}

// runEnv is run with the environment env (nil: the test's) and stdin,
// stdout and stderr as given (nil: a buffer for out).
func runEnv(t *testing.T, p Policy, dir string, env []string, script string) (string, int) {
	t.Helper()
	cmd, err := Command(p, "bash", "-c", script)
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	var out bytes.Buffer
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("run: %v", err)
	}
	return out.String(), code
}

func confinedModes() []Mode { return []Mode{ReadOnly, WorkspaceWrite} }

// TestAttackEnvRead: `echo $DEEPSEEK_API_KEY` and any *KEY*, *TOKEN*, ...
// variable come back empty; a variable named in env.pass or kept by the
// caller (an MCP server's own env) comes through, and env.set is set.
func TestAttackEnvRead(t *testing.T) {
	requireLandlock(t)
	ws := t.TempDir()
	env := append(os.Environ(), "DEEPSEEK_API_KEY=sk-deepseek-secret-1", "GITHUB_TOKEN=ghp-secret-2", "MY_PASSWORD=pw-secret-3",
		"AWS_SECRET_ACCESS_KEY=aws-secret-4", "SSH_AUTH_SOCK=/tmp/agent.sock", "OPENROUTER=or-secret-5", "PASSME_TOKEN=passed-6", "MCP_TOKEN=kept-7", "PLAIN=plain-8")
	for _, mode := range []Mode{ReadOnly, WorkspaceWrite, FullAccess} {
		p := Policy{Mode: mode, Workspace: ws, Env: EnvPolicy{Pass: []string{"PASSME_TOKEN"}, Keep: []string{"MCP_TOKEN"}, Deny: []string{"OPENROUTER"}, Set: map[string]string{"CI": "1"}}}
		script := `env`
		if mode != FullAccess { // full-access is unconfined: /proc of its supervisor is open
			script += `; cat /proc/$PPID/environ /proc/1/environ 2>/dev/null | tr '\0' '\n'`
		}
		out, _ := runEnv(t, p, ws, env, script)
		for _, leaked := range []string{"secret-1", "secret-2", "secret-3", "secret-4", "agent.sock", "secret-5"} {
			if strings.Contains(out, leaked) {
				t.Errorf("%s: %s reached the process:\n%s", mode, leaked, out)
			}
		}
		for _, want := range []string{"passed-6", "kept-7", "plain-8", "CI=1"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: %s did not reach the process", mode, want)
			}
		}
	}
}

// TestAttackCredentialFiles: ~/.ssh, ~/.aws/credentials, ~/.netrc,
// ~/.docker/config.json and $REINS_HOME/config.yaml read as empty or
// missing; sandbox.readable opens one on purpose; a reins child's state
// folder stays writable. Run from a home that is also the workspace.
func TestAttackCredentialFiles(t *testing.T) {
	requireLandlock(t)
	home := visibleDir(t)
	files := map[string]string{
		".ssh/id_ed25519":      "SSH-PRIVATE",
		".aws/credentials":     "AWS-CRED",
		".netrc":               "NETRC-CRED",
		".docker/config.json":  "DOCKER-CRED",
		".config/gh/hosts.yml": "GH-CRED",
		".npmrc":               "NPM-CRED",
		".reins/config.yaml":   "REINS-CONFIG",
		".reins/trusted.json":  "REINS-TRUST",
	}
	for f, c := range files {
		path := filepath.Join(home, f)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	state := filepath.Join(home, ".reins", "sessions")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+home)
	for _, mode := range confinedModes() {
		p := Policy{Mode: mode, Workspace: home, Home: filepath.Join(home, ".reins"), State: []string{state},
			Readable: []string{filepath.Join(home, ".npmrc")}}
		out, _ := runEnv(t, p, home, env, `for f in .ssh/id_ed25519 .aws/credentials .netrc .docker/config.json .config/gh/hosts.yml .reins/config.yaml .reins/trusted.json .npmrc; do cat "$HOME/$f"; echo; done; ls -a "$HOME/.ssh"; echo state > "$HOME/.reins/sessions/s" && echo state-ok`)
		for f, c := range files {
			if f == ".npmrc" {
				if !strings.Contains(out, c) {
					t.Errorf("%s: sandbox.readable did not open %s:\n%s", mode, f, out)
				}
				continue
			}
			if strings.Contains(out, c) {
				t.Errorf("%s: %s was readable:\n%s", mode, f, out)
			}
		}
		if !strings.Contains(out, "state-ok") {
			t.Errorf("%s: the state folder is not writable:\n%s", mode, out)
		}
	}
}

// TestAttackEgress: with the network off, no TCP connection, no UDP
// datagram and no abstract Unix socket of the host is reached; with it on,
// TCP is (the network namespace is the wall, not a blanket refusal).
func TestAttackEgress(t *testing.T) {
	requireLandlock(t)
	ws := t.TempDir()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	name := "@reins-test-abstract-" + strconv.Itoa(os.Getpid())
	abs, err := net.Listen("unix", name)
	if err != nil {
		t.Fatal(err)
	}
	defer abs.Close()
	accepted := make(chan struct{}, 8)
	go func() {
		for {
			c, err := abs.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	port := strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port)
	script := `echo leaked > /dev/udp/127.0.0.1/` + port + `; python3 -c '
import socket,sys
s=socket.socket(socket.AF_UNIX)
try:
    s.connect("\0` + name[1:] + `"); print("abstract-connected")
except OSError as e:
    print("abstract-refused", e.errno)
'`
	for _, mode := range confinedModes() {
		out, _ := runEnv(t, Policy{Mode: mode, Workspace: ws, DenyNetwork: true}, ws, nil, script)
		if strings.Contains(out, "abstract-connected") {
			t.Errorf("%s: connected to the host's abstract socket:\n%s", mode, out)
		}
		// The verdict on UDP: a marker datagram sent now must be the
		// first one the listener reads.
		c, err := net.Dial("udp", udp.LocalAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("marker"))
		c.Close()
		buf := make([]byte, 64)
		udp.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, _, err := udp.ReadFrom(buf)
		if err != nil || string(buf[:n]) != "marker" {
			t.Errorf("%s: UDP left the sandbox: first datagram %q (%v)", mode, buf[:n], err)
		}
	}
	select {
	case <-accepted:
		t.Error("the abstract socket accepted a connection")
	default:
	}
}

// gitWorkspace is a git repository with a commit, as a user's project.
func gitWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "t"}, {"commit", "-q", "--allow-empty", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return ws
}

// TestAttackPlantedPaths: under workspace-write nothing can be planted
// where it runs later outside any sandbox — a git hook, git config
// (core.fsmonitor), .reins/config.yaml, .mcp.json, .claude/agents/x.md —
// whether the path existed (read-only bind) or not (removed when the
// process ends), nor by moving .git away. With .git read-only (issue 47) a
// confined git commit is refused; with sandbox.git: writable it works and
// hooks and config stay protected.
func TestAttackPlantedPaths(t *testing.T) {
	requireLandlock(t)
	for _, gitWritable := range []bool{false, true} {
		for _, existing := range []bool{false, true} {
			ws := gitWorkspace(t)
			if existing {
				for _, d := range []string{".reins", ".claude/agents"} {
					os.MkdirAll(filepath.Join(ws, d), 0o755)
				}
				os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(`{"mcpServers":{}}`), 0o644)
			}
			before, _ := os.ReadFile(filepath.Join(ws, ".git", "config"))
			out, _ := runEnv(t, Policy{Mode: WorkspaceWrite, Workspace: ws, GitWritable: gitWritable}, ws, nil, `
printf '#!/bin/sh\necho pwned\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
git config core.fsmonitor 'echo pwned'
mkdir -p .reins && echo 'sandbox: {enabled: false}' > .reins/config.yaml
echo '{"mcpServers":{"x":{"command":"sh"}}}' > .mcp.json
mkdir -p .claude/agents && echo pwned > .claude/agents/x.md
mv .git .git-away 2>&1
echo hello > file.txt && git add file.txt && git -c core.hooksPath=/dev/null commit -qm work && echo committed`)
			for _, f := range []string{".git/hooks/pre-commit", ".reins/config.yaml", ".claude/agents/x.md"} {
				if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
					t.Errorf("existing=%v: %s was planted:\n%s", existing, f, out)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(ws, ".mcp.json")); bytes.Contains(b, []byte("command")) {
				t.Errorf("existing=%v: .mcp.json was planted", existing)
			}
			if after, _ := os.ReadFile(filepath.Join(ws, ".git", "config")); !bytes.Equal(before, after) {
				t.Errorf("existing=%v: .git/config changed:\n%s", existing, after)
			}
			if _, err := os.Stat(filepath.Join(ws, ".git-away")); err == nil {
				t.Errorf("existing=%v: .git was moved away", existing)
			}
			if committed := strings.Contains(out, "committed"); committed != gitWritable {
				t.Errorf("existing=%v, sandbox.git writable=%v: committed=%v:\n%s", existing, gitWritable, committed, out)
			}
		}
	}
}

// TestAttackTIOCSTI: a confined command on the user's terminal cannot push
// input into it (the command the user's shell would run after reins).
func TestAttackTIOCSTI(t *testing.T) {
	requireLandlock(t)
	ws := t.TempDir()
	for _, mode := range confinedModes() {
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Fatal(err)
		}
		cmd, err := Command(Policy{Mode: mode, Workspace: ws}, "python3", "-c", `
import fcntl, termios, os, sys
for target in ("/dev/tty", 0):
    try:
        f = os.open(target, os.O_RDWR) if isinstance(target, str) else 0
        fcntl.ioctl(f, termios.TIOCSTI, b"X")
        print("INJECTED", target, flush=True)
    except OSError as e:
        print("refused", target, e.errno, flush=True)
`)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		cmd.Stdin, cmd.Stdout = tty, &out
		cmd.Stderr = &out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
			t.Fatal(err)
		}
		tty.Close()
		ptmx.Close()
		if strings.Contains(out.String(), "INJECTED") || !strings.Contains(out.String(), "refused") {
			t.Errorf("%s: TIOCSTI was not refused:\n%s", mode, out.String())
		}
	}
}

// TestAttackOutsideServerSocket: a Unix socket of a server outside (tmux's
// /tmp/tmux-UID/default, docker's /run/docker.sock) is a door out of the
// sandbox; the private /tmp and /run close it.
func TestAttackOutsideServerSocket(t *testing.T) {
	requireLandlock(t)
	dir, err := os.MkdirTemp("/tmp", "tmux-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "default")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b := make([]byte, 64)
			n, _ := c.Read(b)
			got <- string(b[:n])
			c.Close()
		}
	}()
	ws := t.TempDir()
	for _, mode := range confinedModes() {
		out, _ := runEnv(t, Policy{Mode: mode, Workspace: ws}, ws, nil, `python3 -c '
import socket
s=socket.socket(socket.AF_UNIX)
try:
    s.connect("`+sock+`"); s.send(b"new-window"); print("connected")
except OSError as e:
    print("refused", e.errno)
'`)
		if strings.Contains(out, "connected") {
			t.Errorf("%s: reached the outside server's socket:\n%s", mode, out)
		}
	}
	select {
	case m := <-got:
		t.Errorf("the outside server got %q", m)
	default:
	}
}

// TestAttackSocketAnywhere: a server's Unix socket outside the private
// folders — in the home folder (TMUX_TMPDIR=~/.tmux, docker desktop's
// ~/.docker/run/docker.sock), in the workspace (git's fsmonitor daemon), a
// datagram socket (syslog's) — is not reachable either, nor, with the
// network on, an abstract socket of the host. A confined process still
// talks to the servers it starts itself, in its TMPDIR and the workspace.
func TestAttackSocketAnywhere(t *testing.T) {
	requireLandlock(t)
	home, ws := visibleDir(t), visibleDir(t)
	got := make(chan string, 16)
	serve := func(ln net.Listener) {
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				b := make([]byte, 64)
				n, _ := c.Read(b)
				got <- string(b[:n])
				c.Close()
			}
		}()
	}
	listen := func(network, addr string) {
		ln, err := net.Listen(network, addr)
		if err != nil {
			t.Fatal(err)
		}
		serve(ln)
	}
	homeSock, wsSock := filepath.Join(home, "tmux.sock"), filepath.Join(ws, "fsmonitor.ipc")
	listen("unix", homeSock)
	listen("unix", wsSock)
	abstract := "@reins-test-anywhere-" + strconv.Itoa(os.Getpid())
	listen("unix", abstract)
	dgramSock := filepath.Join(home, "log.sock")
	dgram, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: dgramSock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer dgram.Close()
	script := `python3 -c '
import socket, os, sys
for path in sys.argv[1:4]:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path.replace("@", "\0", 1)); s.send(b"new-window"); print("REACHED", path)
    except OSError as e:
        print("refused", path, e.errno)
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
try:
    d.sendto(b"logged", sys.argv[4]); print("REACHED", sys.argv[4])
except OSError as e:
    print("refused", sys.argv[4], e.errno)
for own in [os.environ["TMPDIR"]] + sys.argv[5:]:
    p = os.path.join(own, "own.sock")
    srv = socket.socket(socket.AF_UNIX); srv.bind(p); srv.listen(1)
    c = socket.socket(socket.AF_UNIX); c.connect(p); print("own-ok", own)
    srv.close(); os.unlink(p)
' ` + strings.Join([]string{shq(homeSock), shq(wsSock), shq(abstract), shq(dgramSock)}, " ")
	for _, mode := range confinedModes() {
		for _, network := range []bool{false, true} {
			sc := script
			if mode == WorkspaceWrite {
				sc += " " + shq(ws)
			}
			out, _ := runEnv(t, Policy{Mode: mode, Workspace: ws, DenyNetwork: !network}, ws, nil, sc)
			if strings.Contains(out, "REACHED") || strings.Count(out, "refused") != 4 {
				t.Errorf("%s, network %v: reached a server outside:\n%s", mode, network, out)
			}
			if want := map[Mode]int{ReadOnly: 1, WorkspaceWrite: 2}[mode]; strings.Count(out, "own-ok") != want {
				t.Errorf("%s, network %v: its own server is not reachable:\n%s", mode, network, out)
			}
		}
	}
	select {
	case m := <-got:
		t.Errorf("a server outside got %q", m)
	default:
	}
	dgram.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	if n, _, err := dgram.ReadFrom(make([]byte, 64)); err == nil {
		t.Errorf("the datagram socket outside got %d bytes", n)
	}
}

// TestAttackMetadataOutside: chmod, touch -d, chattr +i and setting an
// xattr on a file outside the granted paths all fail, in read-only too;
// the file keeps its mode, times, flags and attributes.
func TestAttackMetadataOutside(t *testing.T) {
	requireLandlock(t)
	outside := visibleDir(t)
	f := filepath.Join(outside, "victim")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(f, old, old)
	ws := t.TempDir()
	for _, mode := range confinedModes() {
		out, _ := runEnv(t, Policy{Mode: mode, Workspace: ws}, ws, nil, `f=`+shq(f)+`
chmod 000 "$f" && echo CHMOD-OK
touch -d '1999-01-01' "$f" && echo TOUCH-OK
chattr +i "$f" 2>&1 && echo CHATTR-OK
python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.pwned", b"1"); print("XATTR-OK")' "$f"`)
		for _, bad := range []string{"CHMOD-OK", "TOUCH-OK", "CHATTR-OK", "XATTR-OK"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s: %s:\n%s", mode, bad, out)
			}
		}
		fi, err := os.Stat(f)
		if err != nil || fi.Mode().Perm() != 0o644 || !fi.ModTime().Equal(old) {
			t.Errorf("%s: the file changed: %v %v", mode, fi.Mode(), fi.ModTime())
		}
		if attr, _ := exec.Command("lsattr", f).Output(); bytes.Contains(bytes.Fields(attr)[0], []byte("i")) {
			t.Errorf("%s: the file became immutable", mode)
		}
	}
}

// TestAttackReinsHome: reins run from ~ (the workspace contains
// $REINS_HOME), or a `writable` entry that is a symlink to it: the config
// and the trust list stay as they were.
func TestAttackReinsHome(t *testing.T) {
	requireLandlock(t)
	home := visibleDir(t)
	rh := filepath.Join(home, ".reins")
	os.MkdirAll(rh, 0o755)
	os.WriteFile(filepath.Join(rh, "config.yaml"), []byte("model: mock/echo\n"), 0o644)
	os.WriteFile(filepath.Join(rh, "trusted.json"), []byte("{}\n"), 0o644)
	link := filepath.Join(visibleDir(t), "cache")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	script := `echo 'sandbox: {enabled: false}' >> ` + shq(filepath.Join(rh, "config.yaml")) + `; echo '{"folders":[{"path":"/"}]}' > ` + shq(filepath.Join(rh, "trusted.json")) + `; echo x > ` + shq(filepath.Join(home, "ok"))
	for _, p := range []Policy{
		{Mode: WorkspaceWrite, Workspace: home, Home: rh},
		{Mode: WorkspaceWrite, Workspace: ws, Home: rh, Writable: []string{link}},
	} {
		out, _ := runEnv(t, p, home, nil, script)
		if b, _ := os.ReadFile(filepath.Join(rh, "config.yaml")); string(b) != "model: mock/echo\n" {
			t.Errorf("workspace %s writable %v: config.yaml changed to %q:\n%s", p.Workspace, p.Writable, b, out)
		}
		if b, _ := os.ReadFile(filepath.Join(rh, "trusted.json")); string(b) != "{}\n" {
			t.Errorf("workspace %s writable %v: trusted.json changed:\n%s", p.Workspace, p.Writable, out)
		}
	}
	// Run from ~, the rest of the home is the workspace and stays writable.
	if _, err := os.Stat(filepath.Join(home, "ok")); err != nil {
		t.Errorf("the workspace around $REINS_HOME is not writable: %v", err)
	}
}

var _ = context.Background

// TestAllowDomainsProxy: with the network off and sandbox.allowDomains
// set, a listed host is reached through reins's proxy (HTTP_PROXY is set
// for the process) and any other host gets a clear 403 line at once.
func TestAllowDomainsProxy(t *testing.T) {
	requireLandlock(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "upstream-ok") }))
	defer up.Close()
	ws := t.TempDir()
	p := Policy{Mode: WorkspaceWrite, Workspace: ws, DenyNetwork: true, AllowDomains: []string{"127.0.0.1"}}
	// NO_PROXY names loopback; the test's upstream is on the host's
	// loopback, so curl is told to use the proxy for it all the same.
	out, _ := runEnv(t, p, ws, nil, `curl -sS --max-time 60 --noproxy '' `+up.URL+`/ ; echo; curl -sS --max-time 60 --noproxy '' http://refused.example/ ; echo; curl -sS --max-time 60 https://refused.example/ 2>&1; echo; echo "proxy=$HTTPS_PROXY"`)
	for _, want := range []string{"upstream-ok", "reins sandbox: refused.example is not in sandbox.allowDomains", "403", "proxy=http://127.0.0.1:3128"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
}
