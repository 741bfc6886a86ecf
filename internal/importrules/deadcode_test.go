package importrules

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/testutil"
)

// linkerDeps is the linker's -dumpdep output for a command: one
// "from -> to" line per reachable reference, the from side marked
// <ReflectMethod> where a function calls reflect's Method or MethodByName.
// Built once per command for the tests below.
var linkerDeps = struct {
	sync.Mutex
	out map[string]string
}{out: map[string]string{}}

// dumpdep is the linker's dependency dump for ./cmd/<cmd>.
func dumpdep(t *testing.T, cmd string) string {
	t.Helper()
	linkerDeps.Lock()
	defer linkerDeps.Unlock()
	if out, ok := linkerDeps.out[cmd]; ok {
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, "go", "build", "-ldflags=-dumpdep", "-o", "/dev/null", "./cmd/"+cmd)
	c.Dir = testutil.RepoRoot(t)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		t.Fatalf("go build -ldflags=-dumpdep ./cmd/%s: %v\n%s", cmd, err, out.String())
	}
	linkerDeps.out[cmd] = out.String()
	return out.String()
}

// TestReinsKeepsDeadCodeElimination: no function linked into reins calls
// reflect's Method or MethodByName with a name known only at run time.
// One such call (text/template's, linked by cobra's SetVersionTemplate)
// makes the linker keep every exported method of every type: 2.2 MB more
// binary, 1.2 MiB more resident in every reins process (BENCHMARKS.md,
// sixth session).
func TestReinsKeepsDeadCodeElimination(t *testing.T) {
	seen := map[string]bool{}
	for line := range strings.Lines(dumpdep(t, "reins")) {
		from, _, ok := strings.Cut(line, " -> ")
		if !ok || !strings.Contains(from, "<ReflectMethod>") {
			continue
		}
		if fn := strings.TrimSpace(strings.Replace(from, "<ReflectMethod>", "", 1)); !seen[fn] {
			seen[fn] = true
			t.Errorf("%s calls reflect's Method/MethodByName: the linker now keeps every exported method in reins", fn)
		}
	}
}

// mayInit are reins's packages allowed initialisation code: the sandbox's
// init is the supervisor's entry point (a re-executed reins becomes the
// supervisor before main runs).
var mayInit = map[string]bool{module + "internal/sandbox": true}

// TestReinsPackagesHaveNoInit: no other package of reins, reins-tui or reins-extra
// (main included) has initialisation code. Every package initialiser runs
// at every start and maps the 64 KB of the binary around it: removing them took
// `reins version` from 8.5 to 7.7 MiB and 100 idle `reins sdk` from 907 to
// 830 MiB (BENCHMARKS.md, sixth session). Build package values on first
// use with internal/lazy, or as constants and tables the compiler lays
// out.
func TestReinsPackagesHaveNoInit(t *testing.T) {
	for _, cmd := range []string{"reins", "reins-tui", "reins-extra"} {
		t.Run(cmd, func(t *testing.T) { checkNoInit(t, dumpdep(t, cmd)) })
	}
}

func checkNoInit(t *testing.T, deps string) {
	seen := map[string]bool{}
	for line := range strings.Lines(deps) {
		from, _, _ := strings.Cut(line, " -> ")
		pkg, ok := strings.CutSuffix(strings.TrimSpace(from), ".init")
		if !ok || strings.ContainsAny(pkg, "( ") || seen[pkg] || mayInit[pkg] || pkg != "main" && !strings.HasPrefix(pkg, module) {
			continue
		}
		seen[pkg] = true
		t.Errorf("%s has initialisation code (package variables built by calls, map literals, func init): build them on first use (internal/lazy)", pkg)
	}
}
