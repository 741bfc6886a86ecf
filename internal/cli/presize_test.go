package cli

import (
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// TestPresizeKeepsItsFrame reads the compiler's assembly for this package:
// Presize does its work only while presize's frame holds presizeBytes (a
// compiler that dropped the array would leave the stack to grow deep in a
// run again, silently).
func TestPresizeKeepsItsFrame(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the package (-short)")
	}
	out, err := exec.Command("go", "build", "-gcflags=-S", "-o", "/dev/null", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-S: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`/internal/cli\.presize STEXT.* locals=0x([0-9a-f]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no presize function in the assembly:\n%.2000s", out)
	}
	locals, err := strconv.ParseInt(string(m[1]), 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	if locals < presizeBytes {
		t.Errorf("presize has %d bytes of locals, want at least %d", locals, presizeBytes)
	}
}
