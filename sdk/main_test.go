package sdk_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/sdkserver/sdkfake"
	"go.uber.org/goleak"
)

// TestMain makes the test binary a runtime when asked (a scripted fake, or
// the real `reins sdk` server), and puts it on PATH as "reins" so the
// package example runs as written.
func TestMain(m *testing.M) {
	// A fuzz worker is this binary re-executed by the fuzzing coordinator,
	// whose environment run has set to "act as the runtime": it must stay
	// a test binary.
	if !fuzzWorker() {
		sdkfake.Dispatch()
	}
	os.Exit(run(m))
}

func fuzzWorker() bool {
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.fuzzworker") {
			return true
		}
	}
	return false
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "reins-sdk-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.Symlink(exe, filepath.Join(bin, "reins")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	os.Setenv(sdkfake.EnvAsSDK, "1")
	os.Setenv("REINS_HOME", filepath.Join(dir, "home"))
	for _, k := range []string{"DEEPSEEK_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "REINS_MOCK_SCRIPT"} {
		os.Unsetenv(k)
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			return 1
		}
	}
	return code
}
