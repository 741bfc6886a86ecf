package mcpserve

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/tool"
)

func TestWithin(t *testing.T) {
	for _, tt := range []struct {
		path, dir string
		want      bool
	}{
		{"/w", "/w", true},
		{"/w/a/b", "/w", true},
		{"/w/..a", "/w", true}, // a folder named "..a" is inside
		{"/w/../x", "/w", false},
		{"/x", "/w", false},
		{"/wx", "/w", false},
		{"/", "/w", false},
	} {
		if got := within(filepath.Clean(tt.path), tt.dir); got != tt.want {
			t.Errorf("within(%q, %q) = %v, want %v", tt.path, tt.dir, got, tt.want)
		}
	}
}

// TestFIFO: beyond n, acquirers get their slot in the order they came; a
// waiter that gives up leaves the line without taking a slot.
func TestFIFO(t *testing.T) {
	q := &fifo{n: 1}
	ctx := context.Background()
	if err := q.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 3)
	cctx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error, 1)
	enqueue := func(i int, c context.Context) {
		want := len(q.waiting()) + 1
		go func() {
			err := q.acquire(c)
			if i < 0 {
				gaveUp <- err
				return
			}
			got <- i
		}()
		for len(q.waiting()) != want {
			time.Sleep(time.Millisecond)
		}
	}
	enqueue(1, ctx)
	enqueue(-1, cctx)
	enqueue(2, ctx)
	cancel()
	if err := <-gaveUp; err == nil {
		t.Fatal("a cancelled waiter got a slot")
	}
	for want := 1; want <= 2; want++ {
		q.release()
		if i := <-got; i != want {
			t.Fatalf("slot went to %d, want %d", i, want)
		}
	}
	q.release()
	if q.used != 0 || len(q.waiting()) != 0 {
		t.Fatalf("used %d, waiting %d after all released", q.used, len(q.waiting()))
	}
}

func (q *fifo) waiting() []chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]chan struct{}(nil), q.wait...)
}

// TestCapOutput: a cut output's marker reads on at the right offset of
// the rendered result, which child_output pages through.
func TestCapOutput(t *testing.T) {
	text := strings.Repeat("ab", 30)
	for _, r := range []outcome.Result{
		{StopReason: outcome.StopCompleted},
		{StopReason: outcome.StopMaxTokens, Diagnostic: "d"},
	} {
		r.Output = textBlocks(text)
		rendered, _ := outcome.RenderText(r)
		out := capOutput("child-1", text, rendered, 10)
		head, marker, ok := strings.Cut(out, "\n[output truncated")
		if !ok || head != text[:10] || !strings.Contains(marker, "child_output") {
			t.Fatalf("%s: %q", r.StopReason, out)
		}
		var call struct {
			Offset int `json:"offset"`
		}
		i := strings.Index(marker, "{")
		j := strings.Index(marker, "}")
		if err := json.Unmarshal([]byte(marker[i:j+1]), &call); err != nil {
			t.Fatal(err)
		}
		if rest := rendered[call.Offset:]; !strings.HasPrefix(rest, text[10:]) {
			t.Errorf("%s: offset %d reads %q, want the text after the cut", r.StopReason, call.Offset, rest)
		}
	}
	if out := capOutput("child-1", "short", "short", 10); out != "short" {
		t.Errorf("uncut: %q", out)
	}
}

// TestForegroundBecomesJob: a foreground run that outlasts the wait (50 s;
// here shortened) comes back as a running job, which job_kill stops: the
// run ends aborted, isError, with the contract.
func TestForegroundBecomesJob(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	t.Setenv("REINS_HOME", home)
	script := filepath.Join(dir, "s.yaml")
	os.WriteFile(script, []byte("replies:\n  - {match: STALL, fault: stall, repeat: true}\nfallback: {echo: true, text: 'mock: '}\n"), 0o644)
	t.Setenv("REINS_MOCK_SCRIPT", script)
	h, err := harness.New(harness.Options{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	s := New(Options{Base: h, Harness: harness.Options{Cwd: dir}, Model: "mock/echo", MaxSteps: 10,
		Permission: tool.WorkspaceWrite, Version: "test", MaxWait: 200 * time.Millisecond})
	st, ct := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- s.serve(context.Background(), st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	call := func(name string, args map[string]any) (*mcp.CallToolResult, Result) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		var r Result
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &r)
		return res, r
	}
	res, r := call("run", map[string]any{"prompt": "STALL now"})
	if res.IsError || r.StopReason != StopRunning || r.Job == "" || r.Child == "" {
		t.Fatalf("a run beyond the wait: isError %v %+v", res.IsError, r)
	}
	res, r2 := call("job_output", map[string]any{"id": r.Job, "wait": 0.1})
	if r2.StopReason != StopRunning || r2.Job != r.Job {
		t.Fatalf("job_output of a stalled job: %+v", r2)
	}
	res, r2 = call("job_kill", map[string]any{"id": r.Job})
	if !res.IsError || r2.StopReason != outcome.StopAborted || r2.Child != r.Child {
		t.Fatalf("job_kill: isError %v %+v", res.IsError, r2)
	}
	res, r2 = call("run", map[string]any{"prompt": "quick"})
	if res.IsError || r2.Output != "mock: quick" {
		t.Fatalf("a quick run: %+v", r2)
	}
	cs.Close()
	if err := <-served; err != nil {
		t.Fatalf("Serve after the client closed: %v", err)
	}
}

func textBlocks(s string) []llm.Block { return []llm.Block{{Type: llm.BlockText, Text: s}} }
