package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/batch"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// writeTasks writes n tasks t001..tN whose prompts are "task i"; the
// prompt of each index in stall is "task i stall".
func writeTasks(t *testing.T, dir string, n int, stall ...int) string {
	t.Helper()
	var b strings.Builder
	for i := 1; i <= n; i++ {
		p := fmt.Sprintf("task %d", i)
		for _, s := range stall {
			if s == i {
				p += " stall"
			}
		}
		fmt.Fprintf(&b, "{\"id\":\"t%03d\",\"prompt\":%q}\n", i, p)
	}
	path := filepath.Join(dir, "tasks.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readResults(t *testing.T, path string) []batch.Result {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []batch.Result
	for _, l := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var r batch.Result
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatalf("result line %q: %v", l, err)
		}
		out = append(out, r)
	}
	return out
}

// checkAll requires one completed result per task, in input order, with
// the mock model's echo of the task's prompt.
func checkAll(t *testing.T, res []batch.Result, n int) {
	t.Helper()
	if len(res) != n {
		t.Fatalf("%d results, want %d", len(res), n)
	}
	seen := map[string]bool{}
	for i, r := range res {
		// Each result names its own session (issue 31).
		if r.SessionID == "" || seen[r.SessionID] {
			t.Fatalf("result %d = %+v: no sessionId of its own", i, r)
		}
		seen[r.SessionID] = true
		want := fmt.Sprintf("t%03d", i+1)
		if r.ID != want || r.StopReason != "completed" || !strings.HasPrefix(r.Output, fmt.Sprintf("mock: task %d", i+1)) || r.Usage.InputTokens == 0 {
			t.Fatalf("result %d = %+v, want id %s completed with the echo of its prompt", i, r, want)
		}
	}
}

// TestBatchKilledAndResumed runs 200 tasks against the mock model; task
// 120 stalls, so the results file stops at 119 lines in input order while
// the tasks behind it finish and wait. reins is then killed with SIGKILL;
// --resume (with a model that no longer stalls) keeps the 119, runs the
// other 81, and the file holds all 200 in order. No process is left.
func TestBatchKilledAndResumed(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	tasks := writeTasks(t, dir, 200, 120)
	script := filepath.Join(dir, "stall.yaml")
	os.WriteFile(script, []byte("replies:\n  - {match: stall, fault: stall, repeat: true}\nfallback: {echo: true, text: 'mock: '}\n"), 0o644)
	out := filepath.Join(dir, "results.jsonl")

	cmd := reinsCmd(t, home, "batch", "-m", "mock/echo", "--parallel", "8", "-o", out, tasks)
	cmd.Env = append(cmd.Env, "REINS_MOCK_SCRIPT="+script)
	mark := markOf(cmd.Env)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	defer func() { cmd.Process.Kill(); <-done }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(out)
		if bytes.Count(b, []byte("\n")) >= 119 {
			break
		}
		select {
		case <-done:
			t.Fatalf("batch ended before the stall: %v", cmd.ProcessState)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("results never reached task 119: %d lines", bytes.Count(b, []byte("\n")))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	if left := testutil.LeftBehind(mark, testutil.OrphanWait); len(left) > 0 {
		t.Fatalf("alive after the batch was killed: %v", left)
	}
	before := readResults(t, out)
	if len(before) != 119 {
		t.Fatalf("%d results after the kill, want 119 (the stalled task 120 holds the rest back)", len(before))
	}
	// A torn last line, as a kill in the middle of a write would leave.
	f, _ := os.OpenFile(out, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"id":"t120","stopR`)
	f.Close()

	var stderr bytes.Buffer
	cmd = reinsCmd(t, home, "batch", "-m", "mock/echo", "--parallel", "8", "-o", out, "--resume", tasks)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("resume: %v\n%s", err, stderr.String())
	}
	checkAll(t, readResults(t, out), 200)
	if !strings.Contains(stderr.String(), "81/81 done, 0 not completed") {
		t.Errorf("progress on stderr: %q", stderr.String())
	}
}

// Failed tasks keep their real stop reason and a fixed diagnostic; the
// batch exits 1 naming how many did not complete, and stdout carries the
// results when --out is not given.
func TestBatchResultContract(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	os.WriteFile(tasks, []byte(`{"id":"ok","prompt":"fine"}
{"id":"cut","prompt":"limit please"}
{"id":"bad","prompt":"break please"}
`), 0o644)
	script := filepath.Join(dir, "s.yaml")
	os.WriteFile(script, []byte(`replies:
  - {match: limit, text: partial answer, finish: length, repeat: true}
  - {match: break, status: 400, body: '{"error":{"message":"SECRET-PROVIDER-TEXT"}}', repeat: true}
fallback: {echo: true, text: 'mock: '}
`), 0o644)
	cmd := reinsCmd(t, home, "batch", "-m", "mock/echo", tasks)
	cmd.Env = append(cmd.Env, "REINS_MOCK_SCRIPT="+script)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	code, stderr := exitCode(t, cmd)
	if code != 1 || !strings.Contains(stderr, "2 of 3 tasks did not complete") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	p := filepath.Join(dir, "out.jsonl")
	os.WriteFile(p, stdout.Bytes(), 0o644)
	res := readResults(t, p)
	if len(res) != 3 || res[0].StopReason != "completed" || res[0].Output != "mock: fine" || res[0].Diagnostic != "" {
		t.Fatalf("results %+v", res)
	}
	if res[1].StopReason != "max-tokens" || res[1].Output != "partial answer" {
		t.Errorf("max-tokens task: %+v", res[1])
	}
	if res[2].StopReason != "error" || !strings.HasPrefix(res[2].Diagnostic, "Subagent failure (provider: inprocess; stage: run; category: INVALID_REQUEST") {
		t.Errorf("error task: %+v", res[2])
	}
	if strings.Contains(stdout.String(), "SECRET-PROVIDER-TEXT") {
		t.Errorf("provider text reached the results: %s", stdout.String())
	}
}

func TestBatchUsageErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	os.WriteFile(good, []byte(`{"id":"a","prompt":"p"}`+"\n"), 0o644)
	badAgent := filepath.Join(dir, "agent.jsonl")
	os.WriteFile(badAgent, []byte(`{"id":"a","prompt":"p","agent":"nobody"}`+"\n"), 0o644)
	badCwd := filepath.Join(dir, "cwd.jsonl")
	os.WriteFile(badCwd, []byte(`{"id":"a","prompt":"p","cwd":"no/such/dir"}`+"\n"), 0o644)
	dup := filepath.Join(dir, "dup.jsonl")
	os.WriteFile(dup, []byte(`{"id":"a","prompt":"p"}`+"\n"+`{"id":"a","prompt":"q"}`+"\n"), 0o644)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"resume without out", []string{"--resume", good}, "--resume needs --out"},
		{"parallel 0", []string{"--parallel", "0", good}, "--parallel"},
		{"no file", []string{filepath.Join(dir, "none.jsonl")}, "no such file"},
		{"unknown agent", []string{badAgent}, `task a: no agent "nobody"`},
		{"unknown default agent", []string{"--agent", "ghost", good}, `task a: no agent "ghost"`},
		{"bad cwd", []string{badCwd}, "not a directory"},
		{"duplicate id", []string{dup}, `line 2: id "a" already used on line 1`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stderr := exitCode(t, reinsCmd(t, t.TempDir(), append([]string{"batch", "-m", "mock/echo"}, tt.args...)...))
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.want)
			}
		})
	}
}

// A child's output reaches the results JSON-escaped, terminal controls
// included, and readable (no HTML escaping of code).
func TestBatchOutputEscaped(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	os.WriteFile(tasks, []byte(`{"id":"x","prompt":"hostile"}`+"\n"), 0o644)
	script := filepath.Join(dir, "s.yaml")
	os.WriteFile(script, []byte("replies:\n  - {match: hostile, text: \"a<b && \\e]0;pwned\\a\\e[2J \\u202e end\", repeat: true}\n"), 0o644)
	cmd := reinsCmd(t, home, "batch", "-m", "mock/echo", tasks)
	cmd.Env = append(cmd.Env, "REINS_MOCK_SCRIPT="+script)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if code, stderr := exitCode(t, cmd); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	line := stdout.String()
	if strings.ContainsAny(line, "\x1b\a\u202e") || !strings.Contains(line, "a<b && ") {
		t.Errorf("results line %q", line)
	}
	var r batch.Result
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil || r.Output != "a<b && \x1b]0;pwned\a\x1b[2J \u202e end" {
		t.Errorf("decoded %q (%v)", r.Output, err)
	}
}

// Ctrl-C: the batch exits 130, the running tasks are cancelled, the
// results file holds only real results (the stalled task and those behind
// it are not written), and --resume finishes the batch.
func TestBatchInterruptedAndResumed(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	tasks := writeTasks(t, dir, 60, 30)
	script := filepath.Join(dir, "stall.yaml")
	os.WriteFile(script, []byte("replies:\n  - {match: stall, fault: stall, repeat: true}\nfallback: {echo: true, text: 'mock: '}\n"), 0o644)
	out := filepath.Join(dir, "results.jsonl")
	cmd := reinsCmd(t, home, "batch", "-m", "mock/echo", "--parallel", "4", "-o", out, tasks)
	cmd.Env = append(cmd.Env, "REINS_MOCK_SCRIPT="+script)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer cmd.Process.Kill()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(out)
		if bytes.Count(b, []byte("\n")) >= 29 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("results never reached task 29\n%s", errb.Bytes())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("batch did not exit after SIGINT")
	}
	if ee, ok := err.(interface{ ExitCode() int }); !ok || ee.ExitCode() != 130 || !strings.Contains(errb.String(), "--resume") {
		t.Fatalf("exit %v, stderr %q", err, errb.String())
	}
	if n := len(readResults(t, out)); n != 29 {
		t.Fatalf("%d results after the interrupt, want 29", n)
	}
	cmd = reinsCmd(t, home, "batch", "-m", "mock/echo", "-o", out, "--resume", tasks)
	if code, stderr := exitCode(t, cmd); code != 0 {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	res := readResults(t, out)
	if len(res) != 60 || res[29].ID != "t030" || res[29].Output != "mock: task 30 stall" {
		t.Fatalf("%d results; t030 = %+v", len(res), res[29])
	}
}

// Tasks in many workspaces, interleaved: each child runs in its own cwd,
// and each workspace has its batch session, with its tasks as children.
func TestBatchWorkspaces(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	var b strings.Builder
	const dirs, per = 40, 3
	for i := range dirs {
		os.MkdirAll(filepath.Join(dir, "repos", fmt.Sprintf("r%02d", i)), 0o755)
	}
	for k := range per {
		for i := range dirs {
			fmt.Fprintf(&b, "{\"id\":\"r%02d-%d\",\"prompt\":\"task r%02d\",\"cwd\":\"repos/r%02d\"}\n", i, k, i, i)
		}
	}
	tasks := filepath.Join(dir, "tasks.jsonl")
	os.WriteFile(tasks, []byte(b.String()), 0o644)
	out := filepath.Join(dir, "r.jsonl")
	if code, stderr := exitCode(t, reinsCmd(t, home, "batch", "-m", "mock/echo", "--cwd", dir, "--parallel", "2", "-o", out, tasks)); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	res := readResults(t, out)
	if len(res) != dirs*per {
		t.Fatalf("%d results", len(res))
	}
	// Every child session's cwd is its task's workspace.
	ents, _ := os.ReadDir(filepath.Join(home, "sessions"))
	children, batches := 0, map[string]int{}
	for _, e := range ents {
		ld, err := session.Load(filepath.Join(home, "sessions", e.Name(), session.FileName))
		if err != nil {
			t.Fatal(err)
		}
		if ld.Header.Agent == "batch" {
			batches[ld.Header.Cwd]++
			continue
		}
		children++
		var prompt string
		for _, ev := range ld.Events {
			var um session.UserMessage
			if ev.Type == session.TypeUserMessage && ev.Decode(&um) == nil {
				prompt = um.Message.Text()
			}
		}
		if want := filepath.Join(dir, "repos", strings.TrimPrefix(prompt, "task ")); ld.Header.Cwd != want {
			t.Errorf("child %q ran in %s, want %s", prompt, ld.Header.Cwd, want)
		}
	}
	if children != dirs*per || len(batches) != dirs {
		t.Errorf("%d children, batch sessions in %d workspaces; want %d and %d", children, len(batches), dirs*per, dirs)
	}
}

// `reins run --continue` after a batch in the same folder continues the
// folder's last real session, never the batch's own session.
func TestContinueSkipsBatchSession(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	run := reinsCmd(t, home, "run", "-m", "mock/echo", "--cwd", dir, "--json", "first session")
	var first bytes.Buffer
	run.Stdout = &first
	if code, stderr := exitCode(t, run); code != 0 {
		t.Fatalf("run: %d %s", code, stderr)
	}
	var r1 runResult
	json.Unmarshal(first.Bytes(), &r1)
	tasks := writeTasks(t, t.TempDir(), 2)
	if code, stderr := exitCode(t, reinsCmd(t, home, "batch", "-m", "mock/echo", "--cwd", dir, tasks)); code != 0 {
		t.Fatalf("batch: %d %s", code, stderr)
	}
	cont := reinsCmd(t, home, "run", "-m", "mock/echo", "--cwd", dir, "--json", "-c", "again")
	var second bytes.Buffer
	cont.Stdout = &second
	if code, stderr := exitCode(t, cont); code != 0 {
		t.Fatalf("continue: %d %s", code, stderr)
	}
	var r2 runResult
	json.Unmarshal(second.Bytes(), &r2)
	if r2.SessionID != r1.SessionID || r1.SessionID == "" {
		t.Errorf("--continue picked %q, want the run's session %q", r2.SessionID, r1.SessionID)
	}
}

// TestBatchBudget: --budget-tokens covers the batch as a whole. Tasks run
// one at a time against the mock model (about 2,100 tokens each); once the
// budget is spent no task starts: the rest end aborted with category
// budget, in input order, and reins exits 1 saying which budget ran out.
func TestBatchBudget(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	tasks := writeTasks(t, dir, 6)
	out := filepath.Join(dir, "out.jsonl")
	code, stderr := exitCode(t, reinsCmd(t, home, "batch", "-m", "mock/echo", "--parallel", "1", "--budget-tokens", "5000", "-o", out, tasks))
	if code != 1 || !strings.Contains(stderr, "the tokens budget ran out") {
		t.Fatalf("exit %d, stderr %q; want 1 and the budget named", code, stderr)
	}
	res := readResults(t, out)
	if len(res) != 6 {
		t.Fatalf("%d results, want 6", len(res))
	}
	completed, used := 0, 0
	for i, r := range res {
		if r.ID != fmt.Sprintf("t%03d", i+1) {
			t.Fatalf("result %d has id %s: not in input order", i, r.ID)
		}
		used += r.Usage.InputTokens + r.Usage.OutputTokens
		switch r.StopReason {
		case "completed":
			if i != completed {
				t.Errorf("task %s completed after a task the budget stopped", r.ID)
			}
			completed++
		case "aborted":
			if !strings.Contains(r.Diagnostic, "category: budget") {
				t.Errorf("task %s: diagnostic %q, want category budget", r.ID, r.Diagnostic)
			}
		default:
			t.Errorf("task %s: stop reason %s", r.ID, r.StopReason)
		}
	}
	t.Logf("batch budget: %d tokens used of 5000, %d of 6 tasks completed", used, completed)
	// At most one response of overshoot: the task under way when the
	// budget ran out finishes its answer; none starts after.
	if completed == 0 || completed > 3 {
		t.Errorf("%d tasks completed under a 5,000-token budget at ~2,100 a task", completed)
	}
}
