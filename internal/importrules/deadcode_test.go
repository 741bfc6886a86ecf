package importrules

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/testutil"
)

// TestReinsKeepsDeadCodeElimination: no function linked into reins calls
// reflect's Method or MethodByName with a name known only at run time.
// One such call (text/template's, linked by cobra's SetVersionTemplate)
// makes the linker keep every exported method of every type: 2.2 MB more
// binary, 1.2 MiB more resident in every reins process (BENCHMARKS.md,
// sixth session). The linker marks such functions <ReflectMethod> in its
// -dumpdep output.
func TestReinsKeepsDeadCodeElimination(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-ldflags=-dumpdep", "-o", "/dev/null", "./cmd/reins")
	cmd.Dir = testutil.RepoRoot(t)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build -ldflags=-dumpdep: %v\n%s", err, out.Bytes())
	}
	seen := map[string]bool{}
	for line := range strings.Lines(out.String()) {
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
