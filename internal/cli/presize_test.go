package cli

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestPresizeKeepsItsFrame reads the compiler's assembly for this package:
// Presize does its work only while its frame holds presizeBytes (a
// compiler that dropped the array would leave the stack to grow deep in a
// run again, silently).
func TestPresizeKeepsItsFrame(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "build", "-gcflags=-S", "-o", "/dev/null", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-S: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`/internal/cli\.Presize STEXT.* locals=0x([0-9a-f]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no Presize function in the assembly:\n%.2000s", out)
	}
	locals, err := strconv.ParseInt(string(m[1]), 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	if locals < presizeBytes {
		t.Errorf("Presize has %d bytes of locals, want at least %d", locals, presizeBytes)
	}
}
