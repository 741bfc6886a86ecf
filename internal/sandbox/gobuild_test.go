//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoBuildInContainer (issue 26, acceptance 2): `go build`, the built
// program and `go test` of a small module work under workspace-write in
// the container, with the network off and the build cache outside the
// workspace named in `writable`, as docs/sandbox.md says to configure it.
func TestGoBuildInContainer(t *testing.T) {
	requireLandlock(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("no go on PATH: the suite runs with the go tool")
	}
	ws := visibleDir(t)
	files := map[string]string{
		"go.mod":        "module example.com/hello\n\ngo 1.22\n",
		"main.go":       "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello from\", greet()) }\n",
		"greet.go":      "package main\n\nfunc greet() string { return \"the container\" }\n",
		"greet_test.go": "package main\n\nimport \"testing\"\n\nfunc TestGreet(t *testing.T) {\n\tif greet() != \"the container\" {\n\t\tt.Fatal(greet())\n\t}\n}\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The host's build cache, named in writable as docs/sandbox.md says
	// (`writable: [~/.cache/go-build]`): a cold cache in the workspace
	// compiles the standard library again, minutes at a load of 40.
	cache, err := exec.Command(goBin, "env", "GOCACHE").Output()
	if err != nil || strings.TrimSpace(string(cache)) == "" {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	gocache := strings.TrimSpace(string(cache))
	script := `set -e
go build -o hello . && ./hello
go test -count=1 . 2>&1 | tail -1
go vet .
echo build-ok`
	for _, tc := range []struct {
		name     string
		cache    string
		writable []string
	}{
		{"cache in writable", gocache, []string{gocache}},
	} {
		p := Policy{Mode: WorkspaceWrite, Workspace: ws, DenyNetwork: true, Writable: tc.writable}
		env := append(os.Environ(), "GOCACHE="+tc.cache, "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off",
			"PATH="+filepath.Dir(goBin)+":"+os.Getenv("PATH"))
		out, code := runEnv(t, p, ws, env, script)
		if code != 0 || !strings.Contains(out, "hello from the container") || !strings.Contains(out, "ok  \texample.com/hello") || !strings.Contains(out, "build-ok") {
			t.Errorf("%s: exit %d:\n%s", tc.name, code, out)
		}
	}
}
