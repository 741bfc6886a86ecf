package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bigFile makes a sparse regular file of size bytes at path.
func bigFile(t *testing.T, path string, size int64) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return path
}

// wantFileErr checks err names file and says why.
func wantFileErr(t *testing.T, err error, file, why string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), why) {
		t.Errorf("err = %v, want one naming %s and saying %q", err, file, why)
	}
}

// wantSkipped checks that loading the agents skips file with a warning
// saying why: one bad agent file never blocks work (issue 15), and it is
// still never read whole.
func wantSkipped(t *testing.T, d agentDirs, file, why string) {
	t.Helper()
	_, warns, err := LoadAgents(LoadOptions{Home: d.home, Cwd: d.cwd, Trusted: true}, nil)
	if err != nil {
		t.Fatalf("LoadAgents: %v", err)
	}
	for _, w := range warns {
		if s := w.String(); strings.Contains(s, file) && strings.Contains(s, why) {
			return
		}
	}
	t.Errorf("warnings %v, want one naming %s and saying %q", warns, file, why)
}

// TestConfigFileSizeCap: a config layer over 1 MiB is an error naming it,
// an agent file over 1 MiB is skipped with a warning naming it; neither is
// read into memory.
func TestConfigFileSizeCap(t *testing.T) {
	root := t.TempDir()
	huge := bigFile(t, filepath.Join(root, "huge.yaml"), 2<<20)
	_, err := Load(LoadOptions{Home: filepath.Join(root, "home"), Extra: huge})
	wantFileErr(t, err, huge, "larger than 1 MiB")

	home := filepath.Join(root, "home2")
	bigFile(t, filepath.Join(home, "config.yaml"), 2<<20)
	_, err = Load(LoadOptions{Home: home})
	wantFileErr(t, err, filepath.Join(home, "config.yaml"), "larger than 1 MiB")

	d := newAgentDirs(t)
	agent := bigFile(t, filepath.Join(d.home, "agents", "big.md"), 2<<20)
	wantSkipped(t, d, agent, "larger than 1 MiB")
}

// TestConfigFileNotRegular: /dev/zero as a config or agent file is refused
// by name (the old loader read it until memory ran out, so this test is
// only run against the fixed one).
func TestConfigFileNotRegular(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Fatal("this test needs /dev/zero (Linux)")
	}
	root := t.TempDir()
	_, err := Load(LoadOptions{Home: filepath.Join(root, "home"), Extra: "/dev/zero"})
	wantFileErr(t, err, "/dev/zero", "not a regular file")

	home := filepath.Join(root, "home2")
	os.MkdirAll(home, 0o755)
	if err := os.Symlink("/dev/zero", filepath.Join(home, "config.yaml")); err != nil {
		t.Fatal(err)
	}
	_, err = Load(LoadOptions{Home: home})
	wantFileErr(t, err, filepath.Join(home, "config.yaml"), "not a regular file")

	d := newAgentDirs(t)
	dir := filepath.Join(d.home, "agents")
	os.MkdirAll(dir, 0o755)
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.md")); err != nil {
		t.Fatal(err)
	}
	wantSkipped(t, d, filepath.Join(dir, "zero.md"), "not a regular file")
}

// TestProgressTimeoutConfig: providers.<p>.progressTimeout sets the
// no-progress deadline; unset it is llm.DefaultProgressTimeout (10m); zero
// is refused like idleTimeout's.
func TestProgressTimeoutConfig(t *testing.T) {
	cfg, err := Load(layers(t, "providers:\n  openai:\n    progressTimeout: 90s\n", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Provider("openai").ProgressTimeout; got != 90*time.Second {
		t.Errorf("openai progressTimeout = %v, want 90s", got)
	}
	if got := cfg.Provider("deepseek").ProgressTimeout; got != 10*time.Minute {
		t.Errorf("default progressTimeout = %v, want 10m", got)
	}
	_, err = Load(layers(t, "providers:\n  openai:\n    progressTimeout: 0s\n", "", ""))
	if err == nil || !strings.Contains(err.Error(), "providers.openai.progressTimeout") {
		t.Errorf("zero progressTimeout: err = %v", err)
	}
}
