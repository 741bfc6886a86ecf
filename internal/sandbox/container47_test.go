//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The attacks of issue 47 on the container itself (items 4, 5, 6 and 8),
// each run by a confined bash under the supervisor. Each got through on
// adfed3d.

// hostDevice is a device of the host's /dev that the container must not
// show: a block device (/sys/class/block), else /dev/mem, /dev/kmsg or
// /dev/loop-control; one readable here on the host if there is one (so
// that the test shows the container, not the file's mode, is what refuses
// it: as root), else one that exists.
func hostDevice(t *testing.T) (path string, readable bool) {
	t.Helper()
	var candidates []string
	ents, _ := os.ReadDir("/sys/class/block")
	for _, e := range ents {
		candidates = append(candidates, "/dev/"+e.Name())
	}
	candidates = append(candidates, "/dev/mem", "/dev/kmsg", "/dev/loop-control")
	for _, c := range candidates {
		f, err := os.OpenFile(c, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			f.Close()
			return c, true
		}
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			t.Logf("no host device is readable by uid %d: checking that %s is not there", os.Getuid(), c)
			return c, false
		}
	}
	t.Fatalf("none of %v exists here", candidates)
	return "", false
}

// TestAttackHostDevices: in the container /dev holds only the listed
// devices, links and folders; a disk of the host (or /dev/mem) is not
// there to read; the bit buckets, the random devices and a terminal of
// the container's own still work.
func TestAttackHostDevices(t *testing.T) {
	requireLandlock(t)
	dev, _ := hostDevice(t)
	ws := t.TempDir()
	want := []string{"fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout", "tty", "urandom", "zero"}
	script := `echo "ls: $(ls -A /dev | tr '\n' ' ')"
head -c 16 ` + dev + ` >/dev/null 2>&1 && echo "READ-DEVICE"
test -e ` + dev + ` && echo "DEVICE-THERE"
echo x > /dev/null && echo null-ok
echo "urandom: $(head -c 4 /dev/urandom | wc -c)"
echo x > /dev/shm/f && echo shm-ok
python3 -c 'import pty,os; m,s=pty.openpty(); os.write(m, b"hi\n"); print("pty-ok", os.ttyname(s), os.read(s, 3))'
mount | grep -c ' on /dev/pts ' | sed 's/^/pts-mounts: /'`
	for _, mode := range confinedModes() {
		out, _ := runEnv(t, Policy{Mode: mode, Workspace: ws}, ws, nil, script)
		if strings.Contains(out, "READ-DEVICE") || strings.Contains(out, "DEVICE-THERE") {
			t.Errorf("%s: the host's %s is there:\n%s", mode, dev, out)
		}
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if rest, ok := strings.CutPrefix(l, "ls: "); ok {
				line = rest
			}
		}
		if got := strings.Fields(line); !slices.Equal(got, want) {
			t.Errorf("%s: /dev holds %v, want %v:\n%s", mode, got, want, out)
		}
		for _, w := range []string{"null-ok", "urandom: 4", "shm-ok", "pty-ok /dev/pts/0 b'hi\\n'"} {
			if !strings.Contains(out, w) {
				t.Errorf("%s: want %q:\n%s", mode, w, out)
			}
		}
	}
}

// TestAttackInheritedDescriptors: descriptors reins inherited without
// close-on-exec (an editor's, a CI runner's: here a directory descriptor
// of / as fd 9 and of a host folder the container hides as fd 11 — above
// every descriptor the supervisor hands the stage, 3 to 7 — given
// to the supervisor as reins would) do not reach the program, which
// therefore cannot read the hidden file through /proc/self/fd/N or openat.
// In the Landlock-only fallback too.
func TestAttackInheritedDescriptors(t *testing.T) {
	requireLandlock(t)
	hidden, err := os.MkdirTemp("/tmp", "reins-fd-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(hidden)
	const secret = "HOST-SECRET-b7e1"
	if err := os.WriteFile(filepath.Join(hidden, "secret"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.Open("/")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	dir, err := os.Open(hidden)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	rel := strings.TrimPrefix(hidden, "/")
	script := `cat /proc/self/fd/9/` + rel + `/secret 2>/dev/null; echo
cat /proc/self/fd/11/secret 2>/dev/null; echo
python3 -c '
import os
for fd, path in ((9, "` + rel + `/secret"), (11, "secret")):
    try:
        print(os.read(os.open(path, os.O_RDONLY, dir_fd=fd), 64).decode())
    except OSError as e:
        print("refused", fd, e.errno)
print("fds", sorted(int(f) for f in os.listdir("/proc/self/fd")))
'`
	ws := t.TempDir()
	for _, noNS := range []bool{false, true} {
		for _, mode := range confinedModes() {
			cmd, err := Command(Policy{Mode: mode, Workspace: ws, NoNamespaces: noNS}, "bash", "-c", script)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			cmd.Dir, cmd.Stdout, cmd.Stderr = ws, &out, &out
			cmd.ExtraFiles = []*os.File{nil, nil, nil, nil, nil, nil, root, nil, dir} // fds 9 and 11
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Run(); err != nil {
				t.Fatalf("noNamespaces=%v %s: %v\n%s", noNS, mode, err, out.String())
			}
			if strings.Contains(out.String(), secret) {
				t.Errorf("noNamespaces=%v %s: read the hidden file through an inherited descriptor:\n%s", noNS, mode, out.String())
			}
			// 3 is listdir's own.
			if !strings.Contains(out.String(), "fds [0, 1, 2, 3]") {
				t.Errorf("noNamespaces=%v %s: descriptors besides 0-2 reached the program:\n%s", noNS, mode, out.String())
			}
		}
	}
}

// traceScript attacks the container's init (pid 1): while the stage hands
// over to the small init (the program already runs then), its environ;
// then its command line, a ptrace attach, process_vm_readv of its memory, /proc/1/environ and
// /proc/1/mem. A line with ESCAPED names what got through.
const traceScript = `n=0; while [ $n -lt 3000 ] && [ "$(cat /proc/1/comm)" != reins-init ]; do
  n=$((n+1)); head -c 0 /proc/1/environ 2>/dev/null && echo environ-at-handover:ESCAPED
done
echo "cmdline: $(tr '\0' ' ' < /proc/1/cmdline)"
head -c 1 /proc/1/environ >/dev/null 2>&1 && echo environ:ESCAPED
python3 - <<'PY'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
if libc.ptrace(16, 1, None, None) == 0:  # PTRACE_ATTACH
    print("ptrace-attach:ESCAPED")
    os.waitpid(1, 0x40000000)  # __WALL
    libc.ptrace(17, 1, None, None)  # PTRACE_DETACH
else:
    print("ptrace refused", ctypes.get_errno())
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
buf = ctypes.create_string_buffer(8)
local, remote = iovec(ctypes.cast(buf, ctypes.c_void_p), 8), iovec(0x400000, 8)
libc.process_vm_readv.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
n = libc.process_vm_readv(1, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
e = ctypes.get_errno()
if n >= 0 or e not in (1, 3):  # past the permission check: read, or EFAULT
    print("process-vm-readv:ESCAPED", n, e)
else:
    print("process_vm_readv refused", e)
try:
    with open("/proc/1/mem", "rb") as f:
        f.seek(0x400000); f.read(8); print("proc-mem:ESCAPED")
except OSError as err:
    print("mem refused", err.errno)
PY`

// TestAttackTraceInit: the container's init shares the program's uid and
// Landlock domain; it must not be traceable (stopped, its memory read or
// written, its report forged) and its command line must not show the
// policy: no JSON, no workspace or $REINS_HOME path.
func TestAttackTraceInit(t *testing.T) {
	requireLandlock(t)
	ws := visibleDir(t)
	home := filepath.Join(visibleDir(t), "reins-home-x9")
	os.MkdirAll(home, 0o755)
	for _, mode := range confinedModes() {
		out, _ := runEnv(t, Policy{Mode: mode, Workspace: ws, Home: home}, ws, nil, traceScript)
		if strings.Contains(out, "ESCAPED") {
			t.Errorf("%s: the container's init was reached:\n%s", mode, out)
		}
		cmdline := ""
		for _, l := range strings.Split(out, "\n") {
			if rest, ok := strings.CutPrefix(l, "cmdline: "); ok {
				cmdline = rest
			}
		}
		if !strings.Contains(cmdline, confineArg) {
			t.Fatalf("%s: pid 1 is not the confine stage (%q):\n%s", mode, cmdline, out)
		}
		for _, leak := range []string{ws, home, "{", "mode", "bash"} {
			if strings.Contains(cmdline, leak) {
				t.Errorf("%s: /proc/1/cmdline shows %q: %q", mode, leak, cmdline)
			}
		}
		for _, w := range []string{"ptrace refused 1", "process_vm_readv refused"} {
			if !strings.Contains(out, w) {
				t.Errorf("%s: want %q:\n%s", mode, w, out)
			}
		}
	}
}

// TestLimitTmp: the private /tmp, /var/tmp, /run and /dev/shm share one
// tmpfs of sandbox.limits.tmp (512 MiB by default): 600 MiB written into
// /tmp stop at the limit with ENOSPC, and what /tmp holds counts against
// /dev/shm.
func TestLimitTmp(t *testing.T) {
	requireLandlock(t)
	ws := t.TempDir()
	out, _ := runEnv(t, Policy{Mode: WorkspaceWrite, Workspace: ws}, ws, nil,
		`head -c 600M /dev/zero > /tmp/big; echo "rc=$?"; echo "size=$(stat -c %s /tmp/big)"; df -B1M --output=size /tmp | tail -1 | tr -d ' ' | sed 's/^/df=/'`)
	if !strings.Contains(out, "No space left on device") || strings.Contains(out, "rc=0") {
		t.Errorf("600 MiB fit in /tmp:\n%s", out)
	}
	if !strings.Contains(out, "df=512\n") {
		t.Errorf("/tmp is not 512 MiB:\n%s", out)
	}
	out, _ = runEnv(t, Policy{Mode: ReadOnly, Workspace: ws, Limits: Limits{Tmp: 32 << 20}}, ws, nil,
		`head -c 20M /dev/zero > /tmp/a && echo tmp-ok; head -c 20M /dev/zero > /dev/shm/b && echo SHM-OK; head -c 20M /dev/zero > /var/tmp/c && echo VARTMP-OK; ls -A /tmp | tr '\n' ' '; echo`)
	if !strings.Contains(out, "tmp-ok") || strings.Contains(out, "SHM-OK") || strings.Contains(out, "VARTMP-OK") {
		t.Errorf("the private folders do not share one 32 MiB budget:\n%s", out)
	}
	for _, other := range []string{" tmp ", " var-tmp ", " run ", " dev-shm "} {
		if strings.Contains(" "+out, other) {
			t.Errorf("/tmp shows the shared tmpfs's folder %q:\n%s", other, out)
		}
	}
}

// TestLimitPids: a loop that starts 600 processes in the container is
// stopped past the default cap of 512: every process of it killed, a line
// on stderr saying why, and the program reported killed (SIGKILL). 100
// processes are fine.
func TestLimitPids(t *testing.T) {
	requireLandlock(t)
	ws := t.TempDir()
	// A duration of this test process's own: the check for survivors
	// below looks at the whole machine, where another run of this test
	// (the unprivileged re-run, a second test binary) may hold its own.
	sleep := fmt.Sprintf("987.%d", os.Getpid())
	run := func(n string) (string, *os.ProcessState) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd, err := Command(Policy{Mode: WorkspaceWrite, Workspace: ws}, "bash", "-c", `for i in $(seq `+n+`); do sleep `+sleep+` & done; echo started; sleep 1; echo "count=$(ls -d /proc/[0-9]* | wc -l)"; kill $(jobs -p); echo survived`)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		cmd.Dir, cmd.Stdout, cmd.Stderr = ws, &out, &out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		timedOut := make(chan bool, 1)
		go func() {
			select {
			case <-ctx.Done():
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				timedOut <- true
			case <-done:
				timedOut <- false
			}
		}()
		_ = cmd.Wait()
		close(done)
		if <-timedOut {
			t.Fatalf("%s processes: not ended within the bound:\n%s", n, out.String())
		}
		return out.String(), cmd.ProcessState
	}
	out, st := run("600")
	if !strings.Contains(out, overCap(DefaultPids)) || strings.Contains(out, "survived") {
		t.Errorf("600 processes were not stopped:\n%s", out)
	}
	if ws, _ := st.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("want the program reported killed by SIGKILL, got %v", st)
	}
	if out, _ := exec.Command("pgrep", "-f", "^sleep "+regexp.QuoteMeta(sleep)+"$").Output(); len(out) > 0 {
		t.Errorf("sleep processes outlived the container: %s", out)
	}
	out, st = run("100")
	if !strings.Contains(out, "survived") || strings.Contains(out, "processes in the container") || st.ExitCode() != 0 {
		t.Errorf("100 processes were stopped (%v):\n%s", st, out)
	}
}

// unprivilegedEnv marks a re-run of this test binary as the unprivileged
// user (TestContainerUnprivileged).
const unprivilegedEnv = "REINS_TEST_UNPRIVILEGED"

// TestContainerUnprivileged runs the attacks of issue 47 again as an
// unprivileged user (nobody), as reins runs for most people: this test
// binary, copied where that user can run it, under setpriv.
func TestContainerUnprivileged(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skipf("running as uid %d already: the attacks above ran unprivileged", os.Getuid())
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("setpriv is needed to run the attacks as an unprivileged user: %v", err)
	}
	dir, err := os.MkdirTemp("", "reins-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	home := filepath.Join(dir, "home")
	bin := filepath.Join(dir, "sandbox.test")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, home} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(home, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin,
		"-test.run=^(TestAttackHostDevices|TestAttackInheritedDescriptors|TestAttackTraceInit|TestLimitTmp|TestLimitPids|TestNestedRepositoryBetweenCommands|TestWorkspaceThroughPrivateLink|TestWritableThroughPrivateLink|TestSupervisorGOMAXPROCS|TestInitDuties|TestSupervisorDuties)$", "-test.count=1", "-test.v")
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "TMPDIR=/tmp", unprivilegedEnv + "=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	for _, name := range []string{"TestAttackHostDevices", "TestAttackInheritedDescriptors", "TestAttackTraceInit", "TestLimitTmp", "TestLimitPids",
		"TestNestedRepositoryBetweenCommands", "TestWorkspaceThroughPrivateLink", "TestWritableThroughPrivateLink", "TestSupervisorGOMAXPROCS", "TestInitDuties",
		"TestSupervisorDuties"} {
		if !strings.Contains(string(out), "--- PASS: "+name) {
			t.Errorf("as nobody, %s did not pass:\n%s", name, out)
		}
	}
}
