package release

import (
	"bufio"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/reinsdev/reins/internal/testutil"
)

// TestReleaseInstallsOffline runs scripts/release for this machine's
// platform, checks the binaries and SHA256SUMS, installs the packed npm
// tarballs into a fresh prefix with an empty cache and --offline (so
// nothing can come from a registry), and runs the installed reins-cli.
func TestReleaseInstallsOffline(t *testing.T) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		testutil.MissingPeer(t, "npm not found")
	}
	root := testutil.RepoRoot(t)
	out := t.TempDir()
	target := runtime.GOOS + "/" + runtime.GOARCH
	rel := exec.Command(filepath.Join(root, "scripts", "release"), out)
	rel.Dir = root
	rel.Env = testutil.Env("RELEASE_TARGETS=" + target)
	if b, err := rel.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release: %v\n%s", err, b)
	}

	// The version is git describe's, the same in every package.json.
	var meta struct {
		Version  string            `json:"version"`
		Optional map[string]string `json:"optionalDependencies"`
	}
	b, err := os.ReadFile(filepath.Join(out, "npm", "reins-cli", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	cpu := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	platform := "reins-cli-" + runtime.GOOS + "-" + cpu
	if meta.Version == "" || meta.Optional[platform] != meta.Version {
		t.Fatalf("reins-cli package.json: version %q, optionalDependencies %v", meta.Version, meta.Optional)
	}

	// SHA256SUMS names every binary with its sum; they are static and
	// stripped.
	sums := readSums(t, filepath.Join(out, "SHA256SUMS"))
	for _, name := range []string{"reins", "reins-temporal", "reins-tui", "reins-extra"} {
		bin := name + "-" + runtime.GOOS + "-" + runtime.GOARCH
		data, err := os.ReadFile(filepath.Join(out, bin))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if sums[bin] != hex.EncodeToString(sum[:]) {
			t.Errorf("SHA256SUMS: %s is %q, want %x", bin, sums[bin], sum)
		}
		if runtime.GOOS == "linux" {
			staticStripped(t, filepath.Join(out, bin))
		}
		t.Logf("%s: %d bytes", bin, len(data))
	}

	prefix, cache := t.TempDir(), t.TempDir()
	install := exec.Command(npm, "install", "--offline", "--no-audit", "--no-fund", "--prefix", prefix,
		filepath.Join(out, "npm", "reins-cli-"+meta.Version+".tgz"),
		filepath.Join(out, "npm", platform+"-"+meta.Version+".tgz"))
	install.Env = testutil.Env("npm_config_cache="+cache, "npm_config_update_notifier=false")
	if b, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install --offline: %v\n%s", err, b)
	}
	want := "reins " + meta.Version
	for _, args := range [][]string{
		{filepath.Join(prefix, "node_modules", ".bin", "reins-cli"), "--version"},
		{filepath.Join(prefix, "node_modules", ".bin", "reins"), "version"},
		{npm, "exec", "--offline", "--prefix", prefix, "--", "reins-cli", "--version"},
	} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = prefix
		cmd.Env = testutil.Env("npm_config_cache="+cache, "npm_config_update_notifier=false")
		got, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(got)) != want {
			t.Errorf("%s: %v, output %q, want %q", strings.Join(args, " "), err, got, want)
		}
	}
	// reins finds its Temporal helper beside itself in the platform
	// package (not on PATH): `reins worker --help` is the helper's help.
	cmd := exec.Command(filepath.Join(prefix, "node_modules", platform, "bin", "reins"), "worker", "--help")
	cmd.Env = testutil.Env("REINS_TEMPORAL=", "PATH=/nonexistent")
	got, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(got), "--parallel") {
		t.Errorf("reins worker --help through the npm package: %v\n%s", err, got)
	}
	// And reins-extra: a newcomer's first command, the keyless demo,
	// runs through the npm package's reins, which becomes the reins-extra
	// beside it (and whose children run the reins beside it).
	cmd = exec.Command(filepath.Join(prefix, "node_modules", ".bin", "reins"), "demo")
	cmd.Dir = t.TempDir()
	cmd.Env = testutil.Env("REINS_EXTRA=", "REINS_EXE=", "PATH=/usr/bin:/bin", "REINS_HOME="+t.TempDir(), testutil.MarkChildren(t))
	got, err = cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(got), "session log: ") {
		t.Errorf("reins demo through the npm package: %v\n%s", err, got)
	}
	// And reins-tui: `reins --max-steps 0` on a terminal passes reins's
	// flag parsing and becomes reins-tui, which refuses the bound when it
	// opens the session (without reins-tui: "reins-tui not found").
	if runtime.GOOS != "windows" {
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Fatalf("this test needs a pseudo-terminal (/dev/ptmx): %v", err)
		}
		// The master stays open (and referenced) while reins runs: a
		// master the collector closed leaves the terminal hung up, no
		// terminal to reins, which then prints its help instead — a
		// failure that came and went with the environment's size and
		// the collector's timing (issue 48, "TERM=dumb").
		defer ptmx.Close()
		defer tty.Close()
		go io.Copy(io.Discard, ptmx)
		var stderr strings.Builder
		cmd = exec.Command(filepath.Join(prefix, "node_modules", platform, "bin", "reins"), "--max-steps", "0")
		cmd.Env = testutil.Env("REINS_TUI=", "PATH=/nonexistent", "REINS_HOME="+t.TempDir())
		cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, &stderr
		err = cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || strings.TrimSpace(stderr.String()) != "reins: --max-steps: want a positive number" {
			t.Errorf("reins on a terminal through the npm package: %v, stderr %q; want reins-tui's refusal of --max-steps 0", err, stderr.String())
		}
	}
}

func readSums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if ok {
			sums[name] = sum
		}
	}
	return sums
}

// staticStripped: no program interpreter (no dynamic loader: static) and
// no symbol table (stripped).
func staticStripped(t *testing.T, path string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a program interpreter: not static", filepath.Base(path))
		}
	}
	if f.Section(".symtab") != nil {
		t.Errorf("%s has a symbol table: not stripped", filepath.Base(path))
	}
}
