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

// linkerDeps is the linker's -dumpdep output for reins: one "from -> to"
// line per reachable reference, the from side marked <ReflectMethod>
// where a function calls reflect's Method or MethodByName. Built once for
// the tests below.
var linkerDeps = struct {
	once sync.Once
	out  string
	err  error
}{}

func dumpdep(t *testing.T) string {
	t.Helper()
	linkerDeps.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-ldflags=-dumpdep", "-o", "/dev/null", "./cmd/reins")
		cmd.Dir = testutil.RepoRoot(t)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		linkerDeps.err = cmd.Run()
		linkerDeps.out = out.String()
	})
	if linkerDeps.err != nil {
		t.Fatalf("go build -ldflags=-dumpdep: %v\n%s", linkerDeps.err, linkerDeps.out)
	}
	return linkerDeps.out
}

// TestReinsKeepsDeadCodeElimination: no function linked into reins calls
// reflect's Method or MethodByName with a name known only at run time.
// One such call (text/template's, linked by cobra's SetVersionTemplate)
// makes the linker keep every exported method of every type: 2.2 MB more
// binary, 1.2 MiB more resident in every reins process (BENCHMARKS.md,
// sixth session).
func TestReinsKeepsDeadCodeElimination(t *testing.T) {
	seen := map[string]bool{}
	for line := range strings.Lines(dumpdep(t)) {
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

// TestReinsPackagesHaveNoInit: no other package of reins (main included)
// has initialisation code. Every package initialiser runs at every reins
// start and maps the 64 KB of the binary around it: removing them took
// `reins version` from 8.5 to 7.7 MiB and 100 idle `reins sdk` from 907 to
// 830 MiB (BENCHMARKS.md, sixth session). Build package values on first
// use with internal/lazy, or as constants and tables the compiler lays
// out.
func TestReinsPackagesHaveNoInit(t *testing.T) {
	seen := map[string]bool{}
	for line := range strings.Lines(dumpdep(t)) {
		from, _, _ := strings.Cut(line, " -> ")
		pkg, ok := strings.CutSuffix(strings.TrimSpace(from), ".init")
		if !ok || strings.ContainsAny(pkg, "( ") || seen[pkg] || mayInit[pkg] || pkg != "main" && !strings.HasPrefix(pkg, module) {
			continue
		}
		seen[pkg] = true
		t.Errorf("%s has initialisation code (package variables built by calls, map literals, func init): build them on first use (internal/lazy)", pkg)
	}
}
