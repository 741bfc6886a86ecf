package measure

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		in             []float64
		med, min, maxv float64
	}{
		{[]float64{3}, 3, 3, 3},
		{[]float64{5, 1, 3}, 3, 1, 5},
		{[]float64{4, 1, 3, 2}, 2.5, 1, 4},
	} {
		s := Summarize(tc.in)
		if s.Median != tc.med || s.Min != tc.min || s.Max != tc.maxv || s.N != len(tc.in) {
			t.Errorf("Summarize(%v) = %+v", tc.in, s)
		}
	}
	if s := Summarize(nil); s.N != 0 || s.String(1) != "—" {
		t.Errorf("empty summary = %+v %q", s, s.String(1))
	}
}

// TestRunMeasuresMemory: a child that holds a known amount of memory
// must report at least that much, and its exit status must come back.
func TestRunMeasuresMemory(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	// head -c of /dev/zero into a shell variable would be bash-specific;
	// dd with a 32 MiB block holds the block in memory.
	cmd := exec.Command(sh, "-c", "dd if=/dev/zero of=/dev/null bs=32M count=1 2>/dev/null; exit 3")
	r, err := Run(context.Background(), cmd, Options{Timeout: time.Minute, Sample: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 3 {
		t.Errorf("exit code = %d, want 3", r.ExitCode)
	}
	if r.PeakKiB() < 32<<10 {
		t.Errorf("peak = %d KiB, want >= 32 MiB", r.PeakKiB())
	}
	if r.Wall <= 0 {
		t.Errorf("wall = %v", r.Wall)
	}
}

func TestRunTimeout(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	r, err := Run(context.Background(), cmd, Options{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !r.TimedOut || r.ExitCode != -1 {
		t.Errorf("result = %+v, want a timed-out kill", r)
	}
}
