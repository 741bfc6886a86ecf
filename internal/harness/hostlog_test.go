package harness

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostLogBounded: a line over the cap is cut and marked; the file is
// rotated at its size bound keeping one reins.log.1, and the line that
// starts a rotated file says how much older log was dropped (issue 14 #7).
func TestHostLogBounded(t *testing.T) {
	home := t.TempDir()
	h := &Harness{Home: home}
	defer h.Close()
	h.Logf("child stdout: %s", strings.Repeat("y", 100<<10))
	line := strings.Repeat("x", 1000)
	for range 3 * MaxHostLogBytes / 1000 {
		h.Logf("child stdout: %s", line)
	}
	h.Logf("the last line")
	h.Close()
	dir := filepath.Join(home, "logs")
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
		fi, _ := e.Info()
		if fi.Size() > MaxHostLogBytes {
			t.Errorf("%s is %d bytes, bound %d", e.Name(), fi.Size(), MaxHostLogBytes)
		}
	}
	if strings.Join(names, " ") != "reins.log reins.log.1" {
		t.Errorf("log files %v, want reins.log and reins.log.1", names)
	}
	f, err := os.Open(filepath.Join(dir, "reins.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var first, last string
	for sc.Scan() {
		if first == "" {
			first = sc.Text()
		}
		last = sc.Text()
		if len(sc.Text()) > MaxHostLogLine+200 {
			t.Errorf("a line of %d bytes, cap %d", len(sc.Text()), MaxHostLogLine)
		}
	}
	if !strings.Contains(first, "dropped") || !strings.Contains(first, "bytes") {
		t.Errorf("the rotated file starts %.200q, want a line counting the dropped log", first)
	}
	if !strings.HasSuffix(last, "the last line") {
		t.Errorf("last line %.200q", last)
	}
}

// TestHostLogCutsLongLines: the cut line keeps its start and says how many
// bytes were cut.
func TestHostLogCutsLongLines(t *testing.T) {
	home := t.TempDir()
	h := &Harness{Home: home}
	h.Logf("child stdout: %s", strings.Repeat("y", 100<<10))
	h.Close()
	b, err := os.ReadFile(filepath.Join(home, "logs", "reins.log"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxHostLogLine+200 || !strings.Contains(string(b), "child stdout: yyy") || !strings.Contains(string(b), "bytes cut]") {
		t.Errorf("logged %d bytes: %.100q ... %q", len(b), b, b[max(0, len(b)-80):])
	}
}
