package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tool"
)

// onDisk returns the types of the events in the log file, as a process
// reading it (or a crash) would see them: buffered events do not count.
func onDisk(t *testing.T, path string) []string {
	t.Helper()
	ld, err := session.Load(path)
	if err != nil {
		t.Errorf("loading the live log: %v", err)
		return nil
	}
	var out []string
	for _, e := range ld.Events {
		if ld.Repair.ClosedTurn && e.Seq == int64(len(ld.Events)-1) {
			break // the loader's own turn/end
		}
		if e.Type != session.TypeAssistantChunk {
			out = append(out, e.Type)
		}
	}
	return out
}

// TestWriteAheadOfRequests (issue 13, finding 1): when the model is asked,
// the turn's start, its prompt and the step's start are in the file, not
// in a buffer a crash would lose.
func TestWriteAheadOfRequests(t *testing.T) {
	var a *Agent
	var seen [][]string
	sc := &script{}
	look := func(reply []llm.Chunk) func(context.Context, func(llm.Chunk) bool) {
		return func(ctx context.Context, yield func(llm.Chunk) bool) {
			seen = append(seen, onDisk(t, a.Log.Path()))
			chunks(reply...)(ctx, yield)
		}
	}
	sc.replies = append(sc.replies,
		look(callReply(llm.FinishToolCalls, llm.Block{ID: "c1", Name: "echo", Arguments: `{"say":"x"}`})),
		look(textReply("done")))
	a = newAgent(t, sc, echoTool{name: "echo"})
	if res := a.RunTurn(t.Context(), "IMPORTANT prompt"); res.Reason != session.ReasonCompleted {
		t.Fatalf("turn ended %s %+v", res.Reason, res.Failure)
	}
	want := [][]string{
		{"turn/start", "user/message", "step/start"},
		{"turn/start", "user/message", "step/start", "assistant/message", "tool/call", "tool/result", "step/end", "step/start"},
	}
	for i := range want {
		if i >= len(seen) || !equal(seen[i], want[i]) {
			t.Errorf("request %d: on disk %v, want %v", i, seen, want[i])
		}
	}
}

// failWrites makes every later write to the log at path fail, as a full
// disk or a dead device would: /dev/full is put under the Log's file
// descriptor.
func failWrites(t *testing.T, path string) {
	t.Helper()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("this test needs /dev/full (Linux): %v", err)
	}
	defer full.Close()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("this test needs /proc/self/fd (Linux): %v", err)
	}
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err != nil || target != path {
			continue
		}
		var fd int
		for _, c := range e.Name() {
			fd = fd*10 + int(c-'0')
		}
		if err := unix.Dup2(int(full.Fd()), fd); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("no descriptor open on %s", path)
}

// TestWriteErrorBeforeToolRuns (issue 13, finding 3): when the tool call
// cannot be put on disk, the tool does not run, and the turn ends error
// LOG_WRITE instead of acting on what the log does not hold.
func TestWriteErrorBeforeToolRuns(t *testing.T) {
	var a *Agent
	var ran atomic.Bool
	sc := &script{}
	sc.replies = append(sc.replies,
		func(ctx context.Context, yield func(llm.Chunk) bool) {
			failWrites(t, a.Log.Path()) // the disk fills while the model answers
			chunks(callReply(llm.FinishToolCalls, llm.Block{ID: "c1", Name: "effect", Arguments: `{}`})...)(ctx, yield)
		},
		chunks(textReply("done")...))
	a = newAgent(t, sc, effectTool{ran: &ran})
	res := a.RunTurn(t.Context(), "do it")
	if ran.Load() {
		t.Errorf("the tool ran although its call could not be written")
	}
	if res.Reason != session.ReasonError || res.Failure == nil || res.Failure.Code != logWrite {
		t.Errorf("turn ended %s %+v, want error %s", res.Reason, res.Failure, logWrite)
	}
}

// TestWriteErrorAtTurnEnd (issue 13, finding 3): a turn whose events could
// not be written does not report completed.
func TestWriteErrorAtTurnEnd(t *testing.T) {
	var a *Agent
	sc := &script{}
	sc.replies = append(sc.replies, func(ctx context.Context, yield func(llm.Chunk) bool) {
		failWrites(t, a.Log.Path())
		chunks(textReply("done")...)(ctx, yield)
	})
	a = newAgent(t, sc)
	res := a.RunTurn(t.Context(), "hi")
	if res.Reason != session.ReasonError || res.Failure == nil || res.Failure.Code != logWrite {
		t.Errorf("turn ended %s %+v, want error %s", res.Reason, res.Failure, logWrite)
	}
}

// effectTool records that it ran: a tool with an effect outside the log.
type effectTool struct{ ran *atomic.Bool }

func (e effectTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "effect", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (effectTool) Needs() tool.Permission { return tool.ReadOnly }
func (e effectTool) Run(context.Context, *tool.Env, json.RawMessage) tool.Result {
	e.ran.Store(true)
	return tool.Result{Content: "done"}
}

// logWrite is the failure code of a turn whose log could not be written.
const logWrite = "LOG_WRITE"

// fsyncWatch records how much of the log file each completed fsync
// covered.
type fsyncWatch struct {
	mu     sync.Mutex
	synced int64
}

func (w *fsyncWatch) fsync(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	w.mu.Lock()
	w.synced = max(w.synced, fi.Size())
	w.mu.Unlock()
	return nil
}

func (w *fsyncWatch) covered() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.synced
}

// probeTool records, when it runs, whether its call is in the file and
// whether an fsync covers the whole file.
type probeTool struct {
	name      string
	path      func() string
	watch     *fsyncWatch
	onDisk    *atomic.Bool
	synced    *atomic.Bool
	traceless bool
}

func (p probeTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: p.name, Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (probeTool) Needs() tool.Permission { return tool.ReadOnly }
func (p probeTool) Run(context.Context, *tool.Env, json.RawMessage) tool.Result {
	fi, err := os.Stat(p.path())
	if err != nil {
		return tool.Result{Content: err.Error(), IsError: true}
	}
	ld, err := session.Load(p.path())
	if err == nil {
		for _, e := range ld.Events {
			p.onDisk.Store(p.onDisk.Load() || e.Type == session.TypeToolCall)
		}
	}
	p.synced.Store(p.watch.covered() >= fi.Size())
	return tool.Result{Content: "ok"}
}

type tracelessProbe struct{ probeTool }

func (tracelessProbe) Traceless() {}

// TestCallsDurableBeforeTheyRun: a call whose effect can outlive a power
// loss runs only once an fsync covers it; a call that leaves no trace
// (tool.Traceless: reading files) runs once it is written; and the
// turn's end is covered by an fsync when RunTurn returns.
func TestCallsDurableBeforeTheyRun(t *testing.T) {
	for _, traceless := range []bool{false, true} {
		var a *Agent
		w := &fsyncWatch{}
		var onDisk, synced atomic.Bool
		p := probeTool{name: "probe", path: func() string { return a.Log.Path() }, watch: w, onDisk: &onDisk, synced: &synced}
		var tl tool.Tool = p
		if traceless {
			tl = tracelessProbe{p}
		}
		l, err := session.Create(t.TempDir(), session.Header{ID: "s"}, session.Options{Fsync: w.fsync})
		if err != nil {
			t.Fatal(err)
		}
		sc := &script{}
		sc.replies = append(sc.replies,
			chunks(callReply(llm.FinishToolCalls, llm.Block{ID: "c1", Name: "probe", Arguments: `{}`})...),
			chunks(textReply("done")...))
		a = newAgent(t, sc, tl)
		a.Log = l
		if res := a.RunTurn(t.Context(), "go"); res.Reason != session.ReasonCompleted {
			t.Fatalf("traceless %v: turn ended %s %+v", traceless, res.Reason, res.Failure)
		}
		if !onDisk.Load() {
			t.Errorf("traceless %v: the call was not in the file when the tool ran", traceless)
		}
		if !traceless && !synced.Load() {
			t.Errorf("a tool with effects ran before an fsync covered its call")
		}
		fi, err := os.Stat(l.Path())
		if err != nil {
			t.Fatal(err)
		}
		if w.covered() < fi.Size() {
			t.Errorf("traceless %v: RunTurn returned with %d of %d bytes synced", traceless, w.covered(), fi.Size())
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
