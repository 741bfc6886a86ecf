package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestReadTasks(t *testing.T) {
	long := `{"prompt":"` + strings.Repeat("x", MaxLineBytes) + `"}`
	for _, tt := range []struct {
		name, src string
		ids       []string
		err       string // a substring of the error; "" means none
	}{
		{"ids and line numbers", "{\"id\":\"a\",\"prompt\":\"p\"}\n\n{\"prompt\":\"q\",\"agent\":\"x\",\"cwd\":\"sub\"}\n", []string{"a", "3"}, ""},
		{"no final newline", `{"id":"a","prompt":"p"}`, []string{"a"}, ""},
		{"empty file", "", nil, ""},
		{"unknown key", `{"id":"a","prompt":"p","model":"m"}`, nil, "line 1: want a JSON object"},
		{"no prompt", "{\"id\":\"a\",\"prompt\":\"  \"}", nil, "line 1: no prompt"},
		{"duplicate id", "{\"id\":\"a\",\"prompt\":\"p\"}\n{\"id\":\"a\",\"prompt\":\"q\"}\n", nil, `line 2: id "a" already used on line 1`},
		{"not an object", "[1,2]\n", nil, "line 1"},
		{"two values", `{"prompt":"p"} {"prompt":"q"}`, nil, "more than one JSON value"},
		{"long line", long + "\n", nil, fmt.Sprintf("line 1: longer than %d bytes", MaxLineBytes)},
		{"long id", `{"id":"` + strings.Repeat("i", MaxIDBytes+1) + `","prompt":"p"}`, nil, "id longer than"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadTasks(strings.NewReader(tt.src))
			if tt.err != "" {
				var le *LineError
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.As(err, &le) {
					t.Fatalf("err = %v, want a LineError containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, tk := range got {
				ids = append(ids, tk.ID)
			}
			if fmt.Sprint(ids) != fmt.Sprint(tt.ids) {
				t.Errorf("ids %v, want %v", ids, tt.ids)
			}
		})
	}
}

func TestReadTasksCount(t *testing.T) {
	var b strings.Builder
	for i := range MaxTasks + 1 {
		fmt.Fprintf(&b, "{\"id\":\"%d\",\"prompt\":\"p\"}\n", i)
	}
	_, err := ReadTasks(strings.NewReader(b.String()))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d tasks", MaxTasks)) {
		t.Fatalf("err = %v", err)
	}
}

func tasks(n int) []Task {
	var ts []Task
	for i := range n {
		ts = append(ts, Task{ID: fmt.Sprintf("t%03d", i), Prompt: fmt.Sprintf("p%d", i)})
	}
	return ts
}

func decode(t *testing.T, b []byte) []Result {
	t.Helper()
	var out []Result
	for _, l := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var r Result
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, r)
	}
	return out
}

// Results come in input order whatever order the tasks finish in, and the
// parallelism limit holds.
func TestRunOrderAndParallel(t *testing.T) {
	ts := tasks(200)
	var running, peak atomic.Int32
	// Each task waits for the one after it to start, where the limit
	// allows: finishing order is far from input order.
	started := make([]chan struct{}, len(ts))
	for i := range started {
		started[i] = make(chan struct{})
	}
	run := func(ctx context.Context, tk Task) Result {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		var i int
		fmt.Sscanf(tk.ID, "t%d", &i)
		close(started[i])
		if i%4 != 3 && i+1 < len(ts) {
			<-started[i+1]
		}
		return FromSubagent("", outcome.Result{StopReason: outcome.StopCompleted, Output: []llm.Block{llm.Block{Type: llm.BlockText, Text: "out " + tk.Prompt}}})
	}
	var out bytes.Buffer
	var last Progress
	err := Run(context.Background(), ts, &out, Options{Parallel: 4, Progress: func(p Progress) { last = p }}, run)
	if err != nil {
		t.Fatal(err)
	}
	res := decode(t, out.Bytes())
	if len(res) != len(ts) {
		t.Fatalf("%d results, want %d", len(res), len(ts))
	}
	for i, r := range res {
		if r.ID != ts[i].ID || r.Output != "out "+ts[i].Prompt || r.StopReason != outcome.StopCompleted {
			t.Fatalf("result %d = %+v", i, r)
		}
	}
	if p := peak.Load(); p > 4 {
		t.Errorf("peak parallelism %d, want <= 4", p)
	}
	if last != (Progress{Done: 200, Total: 200}) {
		t.Errorf("last progress %+v", last)
	}
}

// A slow first task does not let finished results pile up without bound:
// no task beyond the window starts before the first is written.
func TestRunWindow(t *testing.T) {
	ts := tasks(300)
	release := make(chan struct{})
	var maxStarted atomic.Int32
	run := func(ctx context.Context, tk Task) Result {
		var i int
		fmt.Sscanf(tk.ID, "t%d", &i)
		for {
			m := maxStarted.Load()
			if int32(i) <= m || maxStarted.CompareAndSwap(m, int32(i)) {
				break
			}
		}
		if i == 0 {
			<-release
		}
		return Result{StopReason: outcome.StopCompleted}
	}
	done := make(chan error)
	var out bytes.Buffer
	go func() { done <- Run(context.Background(), ts, &out, Options{Parallel: 8}, run) }()
	// Wait until the window is full: tasks 1..63 done, 64 blocked.
	for maxStarted.Load() < 63 {
		select {
		case err := <-done:
			t.Fatalf("Run returned early: %v", err)
		default:
		}
		time.Sleep(time.Millisecond)
	}
	if m := maxStarted.Load(); m >= 64 {
		t.Errorf("task %d started while task 0 ran (window 64)", m)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := len(decode(t, out.Bytes())); n != 300 {
		t.Errorf("%d results", n)
	}
}

// Interrupting the batch starts nothing new and writes nothing more: the
// results file stays the prefix of real results, and the tasks the
// interruption cut short are left for --resume.
func TestRunCancel(t *testing.T) {
	ts := tasks(50)
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	run := func(ctx context.Context, tk Task) Result {
		// t000..t009 complete; t010 interrupts the batch and waits.
		if calls.Add(1) <= 10 {
			return Result{StopReason: outcome.StopCompleted}
		}
		cancel()
		<-ctx.Done()
		return Result{StopReason: outcome.StopAborted}
	}
	var out bytes.Buffer
	err := Run(ctx, ts, &out, Options{Parallel: 1}, run)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	res := decode(t, out.Bytes())
	if len(res) != 10 || calls.Load() != 11 {
		t.Fatalf("%d results for %d runs, want 10 for 11", len(res), calls.Load())
	}
	for i, r := range res {
		if r.ID != ts[i].ID || r.StopReason != outcome.StopCompleted {
			t.Fatalf("result %d = %+v", i, r)
		}
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n == 0 {
		return 0, errors.New("disk full")
	}
	w.n--
	return len(p), nil
}

// A results file that cannot be written stops the batch with the error.
func TestRunWriteError(t *testing.T) {
	var calls atomic.Int32
	run := func(ctx context.Context, tk Task) Result {
		calls.Add(1)
		return Result{StopReason: outcome.StopCompleted}
	}
	err := Run(context.Background(), tasks(500), &failWriter{n: 3}, Options{Parallel: 2}, run)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v", err)
	}
	if c := calls.Load(); c >= 500 {
		t.Errorf("%d tasks ran after the write failed", c)
	}
}

func TestFinished(t *testing.T) {
	a := `{"id":"a","stopReason":"completed","output":"x","usage":{}}` + "\n"
	b := `{"id":"b","stopReason":"error","output":"","usage":{}}` + "\n"
	for _, tt := range []struct {
		name, src string
		ids       string
		good      int
	}{
		{"whole", a + b, "[a b]", len(a + b)},
		{"torn tail", a + b[:20], "[a]", len(a)},
		{"garbage tail", a + "{nope}\n" + b, "[a]", len(a)},
		{"no stop reason", a + `{"id":"b"}` + "\n", "[a]", len(a)},
		{"empty", "", "[]", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			done, good, err := Finished(strings.NewReader(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, id := range []string{"a", "b"} {
				if done[id] {
					ids = append(ids, id)
				}
			}
			if fmt.Sprint(ids) != tt.ids && !(tt.ids == "[]" && len(ids) == 0) || good != int64(tt.good) {
				t.Errorf("done %v good %d, want %s %d", ids, good, tt.ids, tt.good)
			}
		})
	}
}

// FromSubagent keeps the contract: a completed run has no diagnostic, a
// partial answer keeps its real stop reason, an unknown reason is error.
func TestFromSubagent(t *testing.T) {
	r := FromSubagent("x", outcome.Result{StopReason: outcome.StopMaxTokens, Output: []llm.Block{llm.Block{Type: llm.BlockText, Text: "part"}}, Diagnostic: "d"})
	if r != (Result{ID: "x", StopReason: outcome.StopMaxTokens, Output: "part", Diagnostic: "d"}) {
		t.Errorf("%+v", r)
	}
	r = FromSubagent("y", outcome.Result{StopReason: "weird", Diagnostic: strings.Repeat("é", 3000)})
	if r.StopReason != outcome.StopError || len(r.Diagnostic) > outcome.MaxDiagnosticBytes {
		t.Errorf("%q %d", r.StopReason, len(r.Diagnostic))
	}
}
