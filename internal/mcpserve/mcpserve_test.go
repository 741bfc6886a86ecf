package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
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

// inMemory is a server on dir (REINS_HOME home, the mock model scripted
// by script) serving until ctx ends, and the MCP Go SDK's client (opts)
// connected to it over in-memory transports.
type inMemory struct {
	s      *Server
	h      *harness.Harness
	cs     *mcp.ClientSession
	served chan error
}

func newInMemory(t *testing.T, ctx context.Context, dir, home, script string, maxWait time.Duration, opts *mcp.ClientOptions) *inMemory {
	t.Helper()
	t.Setenv("REINS_HOME", home)
	sp := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(sp, []byte(script), 0o644)
	t.Setenv("REINS_MOCK_SCRIPT", sp)
	h, err := harness.New(harness.Options{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	m := &inMemory{h: h, served: make(chan error, 1)}
	m.s = New(Options{Base: h, Harness: harness.Options{Cwd: dir}, Model: "mock/echo", MaxSteps: 10,
		Permission: tool.WorkspaceWrite, Version: "test", MaxWait: maxWait})
	st, ct := mcp.NewInMemoryTransports()
	go func() { m.served <- m.s.serve(ctx, st) }()
	if m.cs, err = mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, opts).Connect(context.Background(), ct, nil); err != nil {
		t.Fatal(err)
	}
	return m
}

// serveInMemory is newInMemory with a plain client; call makes a tool
// call and decodes its contract.
func serveInMemory(t *testing.T, dir, home, script string, maxWait time.Duration) (call func(string, map[string]any) (*mcp.CallToolResult, Result), stop func()) {
	t.Helper()
	m := newInMemory(t, context.Background(), dir, home, script, maxWait, nil)
	cs, served, h := m.cs, m.served, m.h
	call = func(name string, args map[string]any) (*mcp.CallToolResult, Result) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		var r Result
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &r)
		return res, r
	}
	stop = func() {
		cs.Close()
		if err := <-served; err != nil {
			t.Errorf("Serve after the client closed: %v", err)
		}
		h.Close()
	}
	return call, stop
}

// TestForegroundBecomesJob: a foreground run that outlasts the wait (50 s;
// here shortened) comes back as a running job, which job_kill stops: the
// run ends aborted, isError, with the contract.
func TestForegroundBecomesJob(t *testing.T) {
	call, stop := serveInMemory(t, t.TempDir(), t.TempDir(),
		"replies:\n  - {match: STALL, fault: stall, repeat: true}\nfallback: {echo: true, text: 'mock: '}\n", 200*time.Millisecond)
	defer stop()
	res, r := call("run", map[string]any{"prompt": "STALL now"})
	if res.IsError || r.StopReason != StopRunning || r.Job == "" || r.Child == "" {
		t.Fatalf("a run beyond the wait: isError %v %+v", res.IsError, r)
	}
	res, r2 := call("job_output", map[string]any{"id": r.Job, "wait": 0.1})
	if r2.StopReason != StopRunning || r2.Job != r.Job {
		t.Fatalf("job_output of a stalled job: %+v", r2)
	}
	res, r2 = call("job_kill", map[string]any{"id": r.Job})
	if !res.IsError || r2.StopReason != string(outcome.StopAborted) || r2.Child != r.Child {
		t.Fatalf("job_kill: isError %v %+v", res.IsError, r2)
	}
	res, r2 = call("run", map[string]any{"prompt": "quick"})
	if res.IsError || r2.Output != "mock: quick" {
		t.Fatalf("a quick run: %+v", r2)
	}
}

func textBlocks(s string) []llm.Block { return []llm.Block{{Type: llm.BlockText, Text: s}} }

// TestLongOutputPages: a result over subagents.maxResultBytes is cut with
// a marker naming child_output, which reads the rest from its offset.
func TestLongOutputPages(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("subagents:\n  maxResultBytes: 1024\n"), 0o600)
	call, stop := serveInMemory(t, dir, home, "fallback: {echo: true, text: 'mock: '}\n", 0)
	defer stop()
	long := strings.Repeat("0123456789", 300)
	res, r := call("run", map[string]any{"prompt": long})
	if res.IsError || !strings.HasPrefix(r.Output, "mock: 0123") || !strings.Contains(r.Output, "read the rest with child_output") || len(r.Output) > 1024+300 {
		t.Fatalf("a long result: %d bytes %q…", len(r.Output), r.Output[:min(80, len(r.Output))])
	}
	// Follow the markers page by page: the pages join byte-exact.
	got, page := "", r.Output
	for range 10 {
		head, marker, cut := strings.Cut(page, "\n[output truncated")
		got += head
		if !cut {
			break
		}
		var at struct {
			Offset int `json:"offset"`
		}
		m := marker[strings.Index(marker, "{"):]
		json.Unmarshal([]byte(m[:strings.Index(m, "}")+1]), &at)
		res, _ = call("child_output", map[string]any{"child": r.Child, "offset": at.Offset})
		if res.IsError {
			t.Fatalf("child_output from %d: %q", at.Offset, textOf(res))
		}
		page, _, _ = strings.Cut(textOf(res), "\nchild: ")
	}
	if got != "mock: "+long {
		t.Errorf("the pages joined: %d bytes, want %d", len(got), len("mock: "+long))
	}
}

// TestHostileCalls: a cwd that leaves the workspace through a symlink or
// "..", a mode wider than the server's, unknown arguments, a negative
// timeout and an unknown agent are refused before any child starts;
// a narrower mode is taken.
func TestHostileCalls(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	os.Symlink(outside, filepath.Join(dir, "escape"))
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	call, stop := serveInMemory(t, dir, t.TempDir(), "fallback: {echo: true, text: 'mock: '}\n", 0)
	defer stop()
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"prompt": "x", "cwd": "escape"}, "outside this server's workspace"},
		{map[string]any{"prompt": "x", "cwd": "../.."}, "outside this server's workspace"},
		{map[string]any{"prompt": "x", "cwd": outside}, "outside this server's workspace"},
		{map[string]any{"prompt": "x", "cwd": "nowhere"}, "no such folder"},
		{map[string]any{"prompt": "x", "permission": "full-access"}, "wider than this server's"},
		{map[string]any{"prompt": "x", "permission": "root"}, "permission"},
		{map[string]any{"prompt": "x", "sneaky": true}, "run takes"},
		{map[string]any{"prompt": "x", "timeout": -1}, "timeout"},
		{map[string]any{"prompt": "  "}, "needs a prompt"},
		{map[string]any{"prompt": "x", "agent": "nobody"}, "unknown agent"},
	} {
		res, r := call("run", tt.args)
		if !res.IsError || r.StopReason != "error" || r.Child != "" || !strings.Contains(textOf(res), tt.want) {
			t.Errorf("run %v: isError %v %+v %q, want %q", tt.args, res.IsError, r, textOf(res), tt.want)
		}
	}
	res, r := call("run", map[string]any{"prompt": "narrow", "cwd": "sub", "permission": "read-only"})
	if res.IsError || r.Output != "mock: narrow" {
		t.Errorf("a narrower call in a subfolder: %+v %q", r, textOf(res))
	}
	for _, name := range []string{"job_output", "job_kill"} {
		if res, _ := call(name, map[string]any{"id": strings.Repeat("x", 5000)}); !res.IsError || len(textOf(res)) > 200 {
			t.Errorf("%s of a huge unknown id: %d bytes", name, len(textOf(res)))
		}
	}
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestForgetJobs: past maxJobs the oldest finished jobs go; running ones
// stay whatever their age.
func TestForgetJobs(t *testing.T) {
	s := &Server{jobs: map[string]*call{}}
	running := &call{done: make(chan struct{})}
	for i := range maxJobs + 10 {
		c := &call{done: make(chan struct{})}
		if i == 0 {
			c = running
		} else {
			close(c.done)
		}
		s.asJob(c)
	}
	if len(s.jobs) != maxJobs || s.jobs["job-1"] != running || s.jobs["job-2"] != nil || s.jobs[fmt.Sprintf("job-%d", maxJobs+10)] == nil {
		t.Errorf("%d jobs held; job-1 running kept: %v; job-2 forgotten: %v", len(s.jobs), s.jobs["job-1"] == running, s.jobs["job-2"] == nil)
	}
}

// TestCancelEndsServe: the command's context ending (SIGTERM, Ctrl-C)
// while a foreground call waits on a stalled child ends the child and
// Serve, though the client keeps its end open and the call's wait (an
// hour here) is far off: the SDK waits for calls in flight, so the
// children must stop first.
func TestCancelEndsServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m := newInMemory(t, ctx, t.TempDir(), t.TempDir(), "replies:\n  - {match: STALL, fault: stall, repeat: true}\n", time.Hour, nil)
	defer m.h.Close()
	s, cs, served := m.s, m.cs, m.served
	defer cs.Close()
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"prompt": "STALL"}})
	// Cancel once the child runs (its call is in flight).
	for {
		s.mu.Lock()
		n := s.callSeq
		s.mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-served:
	case <-time.After(5 * time.Minute): // a bound, not a speed: without the fix it waits the hour
		t.Fatal("Serve did not end after its context did: the call in flight kept it")
	}
}
