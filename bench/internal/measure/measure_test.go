//go:build linux

package measure

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestMain doubles as the measured child: with MEASURE_TEST_HOLD set it
// holds that many MiB of touched memory for a moment and exits 3.
func TestMain(m *testing.M) {
	if os.Getenv("MEASURE_TEST_HOLD") != "" {
		b := make([]byte, 48<<20)
		for i := range b {
			if i%4096 == 0 {
				b[i] = 1
			}
		}
		time.Sleep(100 * time.Millisecond)
		os.Stdout.Write(b[:1])
		os.Exit(3)
	}
	os.Exit(m.Run())
}

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

// TestRunMeasuresMemory: a child holding 48 MiB must report at least that
// much, its exit status must come back, and a small child must not inherit
// the measuring process's own peak (the vfork maxrss trap the package
// avoids).
func TestRunMeasuresMemory(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "MEASURE_TEST_HOLD=1")
	r, err := Run(context.Background(), cmd, Options{Timeout: time.Minute, Sample: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 3 {
		t.Errorf("exit code = %d, want 3", r.ExitCode)
	}
	if r.PeakKiB() < 48<<10 {
		t.Errorf("peak = %d KiB, want >= 48 MiB", r.PeakKiB())
	}

	// Grow this process well past what sleep uses, then measure sleep.
	ballast := make([]byte, 96<<20)
	for i := 0; i < len(ballast); i += 4096 {
		ballast[i] = 1
	}
	r, err = Run(context.Background(), exec.Command("sleep", "0.05"), Options{Timeout: time.Minute, Sample: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r.PeakKiB() == 0 || r.PeakKiB() > 32<<10 {
		t.Errorf("sleep's peak = %d KiB, want a few MiB (not the parent's %d MiB)", r.PeakKiB(), len(ballast)>>20)
	}
	_ = ballast[len(ballast)-1]
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
