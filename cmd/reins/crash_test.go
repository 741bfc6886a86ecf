package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// crashScript is a run long enough to be killed anywhere: seven model
// requests streamed in small delayed chunks, six of them asking for tools
// (read, write, ls and glob together, grep, edit, read), and one step
// streaming ~96 KiB of text, more than the log buffers before writing out,
// so events reach the disk mid-step too, not only at step ends.
func crashScript() *mock.Script {
	args := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return b
	}
	slow := func(r mock.Reply) mock.Reply {
		r.Chunk, r.ChunkDelay = 4, mock.Duration(2*time.Millisecond)
		return r
	}
	var big strings.Builder
	for i := 0; big.Len() < 96<<10; i++ {
		fmt.Fprintf(&big, "line %d of a long answer that fills the log's buffer; ", i)
	}
	return &mock.Script{Replies: []mock.Reply{
		slow(mock.Reply{Reasoning: "First I read the notes.", Text: "Reading notes.txt now.",
			ToolCalls: []mock.ToolCall{{ID: "c1", Name: "read", Arguments: args(map[string]string{"path": "notes.txt"})}}}),
		slow(mock.Reply{Text: "Writing the summary file.",
			ToolCalls: []mock.ToolCall{{ID: "c2", Name: "write", Arguments: args(map[string]string{"path": "out/summary.txt", "content": "milk\neggs\n"})}}}),
		slow(mock.Reply{Text: "Listing what is there.",
			ToolCalls: []mock.ToolCall{
				{ID: "c3", Name: "ls", Arguments: args(map[string]string{})},
				{ID: "c4", Name: "glob", Arguments: args(map[string]string{"pattern": "**/*.txt"})},
			}}),
		{Text: big.String(), Chunk: 256, ChunkDelay: mock.Duration(time.Millisecond),
			ToolCalls: []mock.ToolCall{{ID: "c5", Name: "grep", Arguments: args(map[string]string{"pattern": "milk"})}}},
		slow(mock.Reply{Text: "Fixing a word.",
			ToolCalls: []mock.ToolCall{{ID: "c6", Name: "edit", Arguments: args(map[string]string{"path": "out/summary.txt", "old_string": "eggs", "new_string": "bread"})}}}),
		slow(mock.Reply{Text: "Checking the result.",
			ToolCalls: []mock.ToolCall{{ID: "c7", Name: "read", Arguments: args(map[string]string{"path": "out/summary.txt"})}}}),
		slow(mock.Reply{Text: "All done: the summary lists milk and bread."}),
	}}
}

// crashRun is one reins run against a fresh crashScript server in a
// fresh home and workspace.
type crashRun struct {
	t    *testing.T
	srv  *mock.Server
	home string
	cmd  *exec.Cmd
	done chan error
}

func startCrashRun(t *testing.T, sc *mock.Script) *crashRun {
	t.Helper()
	url, srv, stop := mock.StartTest(sc)
	t.Cleanup(stop)
	home := t.TempDir()
	cmd := reinsCmd(t, home, "run", "--json", "--base-url", url, "-m", "openai/m", "summarise the notes")
	if err := os.WriteFile(filepath.Join(cmd.Dir, "notes.txt"), []byte("buy milk\nbuy eggs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(cmd.Dir, ".reins"), 0o755); err != nil {
		t.Fatal(err)
	}
	// No retry may hide a wire problem or add a sleep.
	cfg := "providers:\n  openai:\n    retry: {maxRetries: 0}\n"
	if err := os.WriteFile(filepath.Join(cmd.Dir, ".reins", "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.Trust(t, home, cmd.Dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &crashRun{t: t, srv: srv, home: home, cmd: cmd, done: make(chan error, 1)}
	go func() { r.done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-r.done
		r.done <- nil
	})
	return r
}

// logPath is the run's session log, "" until the session exists.
func (r *crashRun) logPath() string {
	m, _ := filepath.Glob(filepath.Join(r.home, "sessions", "*", session.FileName))
	if len(m) == 1 {
		return m[0]
	}
	return ""
}

// killPoint names when to SIGKILL a run: when reached returns true for
// the log's current bytes and the server's request count.
type killPoint struct {
	name    string
	reached func(log []byte, requests int) bool
	// script, when set, replaces crashScript: a run whose model stalls.
	script func() *mock.Script
}

// stalled is crashScript with reply i replaced by r: a model that stops
// answering there (a stalled connection, a slow reasoning model).
func stalled(i int, r mock.Reply) func() *mock.Script {
	return func() *mock.Script {
		sc := crashScript()
		sc.Replies[i] = r
		return sc
	}
}

func atRequest(n int) killPoint {
	return killPoint{fmt.Sprintf("request %d in flight", n), func(_ []byte, req int) bool { return req >= n }, nil}
}

func atLines(n int) killPoint {
	return killPoint{fmt.Sprintf("%d log lines", n), func(b []byte, _ int) bool { return bytes.Count(b, []byte("\n")) >= n }, nil}
}

func atBytes(n int) killPoint {
	return killPoint{fmt.Sprintf("%d log bytes", n), func(b []byte, _ int) bool { return len(b) >= n }, nil}
}

// killAt waits for kp, then SIGKILLs the run. It returns the log as read
// just before the kill (everything on disk then is at least this), and
// whether the kill hit a running process.
func (r *crashRun) killAt(kp killPoint) (before []byte, killed bool) {
	t := r.t
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-r.done:
			r.done <- err
			return nil, false // finished before the kill point
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("kill point %q never reached", kp.name)
		}
		var b []byte
		if p := r.logPath(); p != "" {
			b, _ = os.ReadFile(p)
		}
		if b != nil && kp.reached(b, r.srv.Count()) {
			if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			err := <-r.done
			r.done <- err
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
					return b, true
				}
			}
			return b, false
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestCrashConsistency SIGKILLs `reins run` at more than thirty points of a
// streaming run with tool steps — among them while the model stalls, before
// and after it streamed anything — and checks the promise of docs/session-log.md: the log only grows (what was on disk before the kill is a
// prefix of what is on disk after), it loads without a CorruptError, every
// complete line on disk is an intact loaded event, an incomplete tail is
// dropped, the last turn is closed interrupted (or stays closed normally
// when the kill came after its turn/end), the prompt of every started turn
// is on disk, and every model request the server saw had its step/start
// on disk first (write-ahead). Then `reins run --resume` continues the
// crashed session: the repair is written as loaded and a new turn follows.
func TestCrashConsistency(t *testing.T) {
	// A full run first: it must complete, and its size places the kill
	// points.
	ref := startCrashRun(t, crashScript())
	if err := <-ref.done; err != nil {
		t.Fatalf("uninterrupted run failed: %v", err)
	}
	ref.done <- nil
	full, err := os.ReadFile(ref.logPath())
	if err != nil {
		t.Fatal(err)
	}
	checkRepair(t, full, ref.logPath(), nil)
	lines, size := bytes.Count(full, []byte("\n")), len(full)
	if n := ref.srv.Count(); n != 7 {
		t.Fatalf("uninterrupted run made %d requests, want 7", n)
	}

	var points []killPoint
	for n := 1; n <= 7; n++ {
		points = append(points, atRequest(n))
	}
	for _, n := range []int{2, 4, 6, 12, 25, 40} {
		points = append(points, atLines(n))
	}
	for _, frac := range []float64{0.3, 0.5, 0.6, 0.8, 0.9} {
		points = append(points, atLines(int(frac*float64(lines))))
	}
	for _, frac := range []float64{0.05, 0.1, 0.2, 0.3, 0.4, 0.55, 0.7, 0.85, 0.93, 0.97} {
		points = append(points, atBytes(int(frac*float64(size))))
	}
	// The model stalls: the kill comes while reins waits on it, the case
	// where nothing forces a step end and only write-ahead and the group
	// commit put the turn on disk.
	hasChunk := func(b []byte, _ int) bool { return bytes.Contains(b, []byte(`"type":"assistant/chunk"`)) }
	points = append(points,
		killPoint{"first stream stalls before its headers", atRequest(1).reached, stalled(0, mock.Reply{Text: "never", Delay: mock.Duration(time.Hour)})},
		killPoint{"first stream stalls after its headers", atRequest(1).reached, stalled(0, mock.Reply{Fault: "stall"})},
		// The mock sends a role-only event first, so a long gap after the
		// first text chunk is the nearest thing to "a chunk, then silence":
		// the chunk reaches the disk by the group commit, not a step end.
		killPoint{"first stream stalls after a chunk", hasChunk, stalled(0, mock.Reply{Text: "Reading the notes, then more and more.", Chunk: 8, ChunkDelay: mock.Duration(2 * time.Second)})},
		killPoint{"third stream stalls after its headers", atRequest(3).reached, stalled(2, mock.Reply{Fault: "stall"})},
	)
	// Racing the exit: when it hits, the kill came after turn/end.
	points = append(points, killPoint{"turn/end on disk", func(b []byte, _ int) bool {
		return bytes.Contains(b, []byte(`"type":"turn/end"`))
	}, nil})

	// The kill points run two at a time: each is its own reins, server,
	// home and workspace.
	var (
		mu              sync.Mutex
		killed, partial int
	)
	t.Run("kill", func(t *testing.T) {
		for i, kp := range points {
			t.Run(fmt.Sprintf("%02d %s", i, kp.name), func(t *testing.T) {
				t.Parallel()
				sc := crashScript()
				if kp.script != nil {
					sc = kp.script()
				}
				r := startCrashRun(t, sc)
				before, hit := r.killAt(kp)
				if !hit {
					t.Logf("the run ended before the kill point")
					return
				}
				path := r.logPath()
				if bytes.Contains(before, []byte(`"type":"turn/end"`)) {
					t.Logf("killed after turn/end")
				}
				after, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if i%2 == 1 && bytes.HasSuffix(after, []byte("\n")) {
					// The log writes whole lines, so a kill rarely tears
					// one; a torn write (a kill inside a large write, a
					// power cut) is made by hand on every other point:
					// the first half of the last line, no newline.
					after = tearLastLine(t, path, after)
				}
				mu.Lock()
				killed++
				if len(after) > 0 && after[len(after)-1] != '\n' {
					partial++
				}
				mu.Unlock()
				ld := checkRepair(t, after, path, before)
				checkWriteAhead(t, ld, r.srv.Count())
				checkResume(t, r.home, ld)
			})
		}
	})
	t.Logf("%d of %d kill points hit a running reins; %d logs ended in a partial line", killed, len(points), partial)
	if killed < 30 {
		t.Errorf("only %d kill points hit a running reins, want at least 30", killed)
	}
	if partial == 0 {
		t.Errorf("no kill left a partial last line: the torn-write repair went untested")
	}
}

// checkWriteAhead checks what a crash must never lose: every started turn
// has its prompt (the first turn's is the task), and every model request
// the server saw (requests) had its step/start on disk before it was sent.
func checkWriteAhead(t *testing.T, ld *session.Loaded, requests int) {
	t.Helper()
	steps := 0
	open, prompted := false, false
	for _, e := range ld.Events {
		switch e.Type {
		case session.TypeTurnStart:
			open, prompted = true, false
		case session.TypeUserMessage:
			var m session.UserMessage
			if err := e.Decode(&m); err != nil {
				t.Fatal(err)
			}
			if open && strings.Contains(llmText(m), "summarise the notes") {
				prompted = true
			}
		case session.TypeStepStart:
			steps++
			if open && !prompted {
				t.Errorf("step/start (seq %d) of a turn whose prompt is not on disk", e.Seq)
			}
		case session.TypeTurnEnd:
			if !prompted {
				t.Errorf("a started turn lost its prompt (turn/end seq %d)", e.Seq)
			}
			open = false
		}
	}
	if steps < requests {
		t.Errorf("the model saw %d requests, the log holds %d step/start: a request went out before its step was on disk", requests, steps)
	}
	if requests > 0 && len(ld.Events) == 0 {
		t.Errorf("the model was asked, the log holds nothing")
	}
}

func llmText(m session.UserMessage) string {
	var b strings.Builder
	for _, bl := range m.Message.Content {
		b.WriteString(bl.Text)
	}
	return b.String()
}

// tearLastLine appends the first half of the last line of the log at path
// (whose bytes are b) without its newline, as a write cut short leaves it,
// and returns the new bytes.
func tearLastLine(t *testing.T, path string, b []byte) []byte {
	t.Helper()
	lines := bytes.SplitAfter(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	last := lines[len(lines)-1]
	half := last[:len(last)/2]
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(half); err != nil {
		t.Fatal(err)
	}
	return append(b, half...)
}

// checkRepair loads the log at path, whose bytes are after (before, if
// set, is what was on disk earlier), and checks the crash-repair promise.
func checkRepair(t *testing.T, after []byte, path string, before []byte) *session.Loaded {
	t.Helper()
	if !bytes.HasPrefix(after, before) {
		t.Fatalf("the log changed what was on disk before the kill (append-only broken)")
	}
	ld, err := session.Load(path)
	if err != nil {
		t.Fatalf("crashed log does not load: %v", err)
	}

	// Every complete line after the header is an intact event.
	lines := bytes.SplitAfter(after, []byte("\n"))
	var complete []session.Event
	for i, l := range lines[1:] {
		if !bytes.HasSuffix(l, []byte("\n")) {
			break
		}
		var e session.Event
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatalf("complete line %d is not an event: %v", i+2, err)
		}
		complete = append(complete, e)
	}
	if len(ld.Events) < len(complete) {
		t.Fatalf("%d events loaded from %d complete lines", len(ld.Events), len(complete))
	}
	for i, e := range complete {
		got := ld.Events[i]
		if got.Type != e.Type || got.Seq != e.Seq || !got.Time.Equal(e.Time) || !bytes.Equal(got.Data, e.Data) {
			t.Fatalf("line %d changed on load:\n disk %s %d %s\n load %s %d %s", i+2, e.Type, e.Seq, e.Data, got.Type, got.Seq, got.Data)
		}
	}
	extra := len(ld.Events) - len(complete)
	if ld.Repair.RewriteLast {
		extra-- // a complete event that had lost only its newline
	}
	if ld.Repair.ClosedTurn {
		extra--
	}
	if extra != 0 {
		t.Fatalf("load has %d events beyond the %d complete lines that no repair accounts for (%+v)", extra, len(complete), ld.Repair)
	}
	if tail := lines[len(lines)-1]; len(tail) > 0 && !ld.Repair.RewriteLast && ld.Repair.DroppedBytes != int64(len(tail)) {
		t.Fatalf("incomplete last line of %d bytes, repair %+v", len(tail), ld.Repair)
	}

	// The last turn is closed: by its own turn/end if the kill came after
	// it, else by an interrupted one.
	if len(ld.Events) == 0 {
		return ld
	}
	last := ld.Events[len(ld.Events)-1]
	var te session.TurnEnd
	if last.Type != session.TypeTurnEnd || last.Decode(&te) != nil {
		t.Fatalf("loaded log ends with %s, want a turn/end", last.Type)
	}
	endedOnDisk := len(complete) > 0 && complete[len(complete)-1].Type == session.TypeTurnEnd
	switch {
	case endedOnDisk && (ld.Repair.ClosedTurn || te.Reason == session.ReasonInterrupted):
		t.Fatalf("a turn closed on disk was closed again: %s", last.Data)
	case !endedOnDisk && (!ld.Repair.ClosedTurn || te.Reason != session.ReasonInterrupted):
		t.Fatalf("unclosed turn ended %s, want turn/end interrupted added by the loader", last.Data)
	}
	return ld
}

// checkResume continues the crashed session with a new prompt and checks
// the result: the run completes, the repaired events are on disk exactly
// as loaded before, and a new turn follows them and completes.
func checkResume(t *testing.T, home string, crashed *session.Loaded) {
	t.Helper()
	sc, err := mock.Parse([]byte("replies:\n  - {text: resumed fine, repeat: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	url, _, stop := mock.StartTest(sc)
	defer stop()
	cmd := reinsCmd(t, home, "run", "--json", "--resume", crashed.Header.ID, "--base-url", url, "-m", "openai/m", "carry on")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("resume failed: %v\n%s%s", err, stdout.Bytes(), stderr.Bytes())
	}
	if !bytes.Contains(stdout.Bytes(), []byte(`"output":"resumed fine"`)) {
		t.Errorf("resume output %s", stdout.Bytes())
	}
	ld, err := session.Load(filepath.Join(home, "sessions", crashed.Header.ID, session.FileName))
	if err != nil {
		t.Fatalf("resumed log does not load: %v", err)
	}
	if ld.Repair.Repaired() {
		t.Fatalf("resumed log needs repair: %+v", ld.Repair)
	}
	n := len(crashed.Events)
	if len(ld.Events) <= n {
		t.Fatalf("resume added no events")
	}
	for i, e := range crashed.Events {
		got := ld.Events[i]
		if got.Type != e.Type || got.Seq != e.Seq || !got.Time.Equal(e.Time) || !jsonEqual(got.Data, e.Data) {
			t.Fatalf("event %d differs from the crash load:\n was %s %s\n now %s %s", i, e.Type, e.Data, got.Type, got.Data)
		}
	}
	var ts session.TurnStart
	if first := ld.Events[n]; first.Type != session.TypeTurnStart || first.Decode(&ts) != nil {
		t.Fatalf("resume begins with %s, want turn/start", first.Type)
	}
	prev := -1
	for _, e := range crashed.Events {
		var s session.TurnStart
		if e.Type == session.TypeTurnStart && e.Decode(&s) == nil {
			prev = max(prev, s.Turn)
		}
	}
	if ts.Turn != prev+1 {
		t.Errorf("resumed turn %d, want %d", ts.Turn, prev+1)
	}
	// Tool calls the crash left without a result are answered, as errors,
	// before the new prompt: a provider refuses a history without them.
	for _, c := range danglingCalls(t, crashed.Events) {
		answered := false
		for _, e := range ld.Events[n:] {
			var r session.ToolResult
			if e.Type == session.TypeToolResult && e.Decode(&r) == nil && r.CallID == c && r.IsError {
				answered = true
			}
		}
		if !answered {
			t.Errorf("dangling tool call %s was not answered by the resumed turn", c)
		}
	}
	var te session.TurnEnd
	if last := ld.Events[len(ld.Events)-1]; last.Type != session.TypeTurnEnd || last.Decode(&te) != nil || te.Reason != session.ReasonCompleted || te.Turn != ts.Turn {
		t.Errorf("resumed turn ends %s %s, want turn/end completed", last.Type, last.Data)
	}
}

// danglingCalls returns the ids of the tool calls of logged assistant
// messages that have no tool/result.
func danglingCalls(t *testing.T, events []session.Event) []string {
	t.Helper()
	var calls []string
	done := map[string]bool{}
	for _, e := range events {
		switch e.Type {
		case session.TypeAssistantMessage:
			var m session.AssistantMessage
			if err := e.Decode(&m); err != nil {
				t.Fatal(err)
			}
			for _, b := range m.Message.Content {
				if b.ID != "" {
					calls = append(calls, b.ID)
				}
			}
		case session.TypeToolResult:
			var r session.ToolResult
			if err := e.Decode(&r); err != nil {
				t.Fatal(err)
			}
			done[r.CallID] = true
		}
	}
	var out []string
	for _, c := range calls {
		if !done[c] {
			out = append(out, c)
		}
	}
	return out
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
