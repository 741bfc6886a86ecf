package wrap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/proc"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func writeFile(path, body string) error { return os.WriteFile(path, []byte(body), 0o644) }

// fakePi writes an executable `pi` (a bash script) into a fresh directory
// and returns the directory, to be put first on the child's PATH.
func fakePi(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pi"), []byte("#!/bin/bash\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fixture is one run's META and environment. mark is a unique value in
// the child's environment: every process of the run inherits it, so a
// scan of /proc finds anything left behind.
type fixture struct {
	meta Meta
	env  []string
	mark string
	dir  string
}

var markSeq sync.Mutex
var markN int

func newFixture(t *testing.T, binDir string) *fixture {
	t.Helper()
	dir := t.TempDir()
	markSeq.Lock()
	markN++
	mark := fmt.Sprintf("%d-%d-%s", os.Getpid(), markN, strings.ReplaceAll(t.Name(), "/", "_"))
	markSeq.Unlock()
	f := &fixture{
		meta: Meta{
			RunID: "run-1", Mode: "single", Agent: "scout", AgentSource: "builtin", Task: "inspect auth", Cwd: dir,
			RequestedModel: "openai/gpt-5", ResolvedModel: "openai/gpt-5", StartedAt: "2026-04-09T00:00:00.000Z",
			SessionPath: filepath.Join(dir, "child-session.jsonl"), EventsPath: filepath.Join(dir, "events.jsonl"),
			ResultPath: filepath.Join(dir, "result.json"), StdoutPath: filepath.Join(dir, "stdout.log"),
			StderrPath: filepath.Join(dir, "stderr.log"), TranscriptPath: filepath.Join(dir, "transcript.log"),
			SystemPromptPath: filepath.Join(dir, "system-prompt.md"),
		},
		env:  []string{"PATH=" + binDir + ":/usr/bin:/bin", "REINS_WRAP_TEST_MARK=" + mark},
		mark: mark,
		dir:  dir,
	}
	t.Cleanup(func() { noLeftovers(t, "REINS_WRAP_TEST_MARK="+mark) })
	return f
}

// fastLadder keeps teardown tests short. Its waits are upper bounds; a
// test whose verdict names the signal that ended a child sets a long Term
// instead, so that a slow death by SIGTERM is not taken for SIGKILL.
var fastLadder = proc.Ladder{Grace: 100 * time.Millisecond, Term: 200 * time.Millisecond, Reap: 5 * time.Second}

func (f *fixture) opts() Options {
	return Options{Env: f.env, Grace: 50 * time.Millisecond, Ladder: fastLadder, Confine: supervised}
}

// noLeftovers fails when a live process carries the marker.
func noLeftovers(t *testing.T, marker string) {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range ents {
		data, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(data, []byte{0}) {
			if string(kv) == marker {
				cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
				t.Errorf("process %s (%q) left behind", e.Name(), bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))
			}
		}
	}
}

func readResult(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("result.json: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("result.json: %v\n%s", err, data)
	}
	return m
}

func readEvents(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("events.jsonl line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func wantResult(t *testing.T, got map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if fmt.Sprint(got[k]) != fmt.Sprint(v) {
			t.Errorf("result.json %s = %v, want %v", k, got[k], v)
		}
	}
}

// The seed's regression: a toolUse assistant message is not the end. With
// a grace (50 ms) far shorter than the gap before the tool call (400 ms),
// a wrapper that started cleanup on toolUse would tear the child down
// before its tool call and final answer.
func TestToolUseIsNotTerminal(t *testing.T) {
	bin := fakePi(t, `
echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"starting"}],"model":"openai/gpt-5","stopReason":"toolUse"}}'
sleep 0.4
echo '{"type":"tool_execution_start","toolName":"read","args":{"path":"src/auth.ts"}}'
sleep 0.3
echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"final"}],"model":"openai/gpt-5","stopReason":"stop"}}'
sleep 0.5
exit 0`)
	f := newFixture(t, bin)
	res, err := Run(context.Background(), f.meta, f.opts())
	if err != nil {
		t.Fatal(err)
	}
	got := readResult(t, f.meta.ResultPath)
	wantResult(t, got, map[string]any{"exitCode": 0, "stopReason": "stop", "rawStopReason": "stop", "finalText": "final",
		"runId": "run-1", "resolvedModel": "openai/gpt-5", "startedAt": "2026-04-09T00:00:00.000Z"})
	if got["endedAt"] == nil || got["endedAt"] == "" {
		t.Error("result.json lacks endedAt")
	}
	var sawCall bool
	for _, e := range readEvents(t, f.meta.EventsPath) {
		if e["type"] == "tool_call" && e["toolName"] == "read" {
			sawCall = true
		}
	}
	if !sawCall {
		t.Error("events.jsonl holds no tool_call")
	}
	if !res.Terminal || res.StopReason != StopStop {
		t.Errorf("result: terminal %v, stop %q", res.Terminal, res.StopReason)
	}
}

// A child that lingers after its final answer, with a grandchild in its
// group, and both ignoring SIGTERM: the grace passes, the ladder ends
// with SIGKILL, and the run still counts as the clean stop it was.
func TestLingeringChildIsTornDown(t *testing.T) {
	bin := fakePi(t, `
trap '' TERM
echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason":"stop"}}'
sleep 1000 &
sleep 1000`)
	f := newFixture(t, bin)
	res, err := Run(context.Background(), f.meta, f.opts())
	if err != nil {
		t.Fatal(err)
	}
	got := readResult(t, f.meta.ResultPath)
	wantResult(t, got, map[string]any{"exitCode": 0, "stopReason": "stop", "finalText": "done", "tornDown": true})
	if res.Signal != "" {
		t.Errorf("signal = %q, want none (a torn-down stop reports exit code 0)", res.Signal)
	}
	noLeftovers(t, "REINS_WRAP_TEST_MARK="+f.mark)
}

// A child that answers, then exits by itself while a grandchild holds
// stdout open: the run ends and the grandchild is torn down with the group.
func TestGrandchildHoldingStdout(t *testing.T) {
	bin := fakePi(t, `
echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason":"stop"}}'
sleep 1000 &
exit 0`)
	f := newFixture(t, bin)
	res, err := Run(context.Background(), f.meta, f.opts())
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.StopReason != StopStop || res.FinalText != "done" {
		t.Errorf("got exit %d stop %q text %q", res.ExitCode, res.StopReason, res.FinalText)
	}
}

func TestTerminalErrorTornDownKeepsOwnStatus(t *testing.T) {
	bin := fakePi(t, `
echo '{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"500 upstream"}}'
exec sleep 1000`)
	f := newFixture(t, bin)
	// The verdict names the signal that ended the child, so the wait after
	// SIGTERM must not be what decides it: on a loaded machine sleep once
	// took longer than fastLadder's 200 ms to die and met SIGKILL. sleep
	// dies of SIGTERM, so the long bound costs nothing when things work.
	opts := f.opts()
	opts.Ladder.Term = time.Minute
	res, err := Run(context.Background(), f.meta, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopError || !res.Terminal || res.Signal != "SIGTERM" || res.ExitCode != 128+15 {
		t.Errorf("got stop %q terminal %v signal %q exit %d", res.StopReason, res.Terminal, res.Signal, res.ExitCode)
	}
	if !strings.Contains(res.ErrorMessage, "500 upstream") {
		t.Errorf("errorMessage %q lacks the child's error", res.ErrorMessage)
	}
}

func TestExitWithoutTerminalAnswer(t *testing.T) {
	bin := fakePi(t, `
echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"looking"}],"stopReason":"toolUse"}}'
echo '{"type":"tool_execution_start","toolName":"bash","args":{"command":"ls"}}'
echo 'fatal: something broke' >&2
exit 3`)
	f := newFixture(t, bin)
	res, err := Run(context.Background(), f.meta, f.opts())
	if err != nil {
		t.Fatal(err)
	}
	wantResult(t, readResult(t, f.meta.ResultPath), map[string]any{"exitCode": 3, "stopReason": "error", "rawStopReason": "toolUse", "finalText": "looking"})
	if res.Terminal || res.TornDown || res.Cancelled {
		t.Errorf("terminal %v tornDown %v cancelled %v", res.Terminal, res.TornDown, res.Cancelled)
	}
	if !strings.Contains(res.ErrorMessage, "fatal: something broke") {
		t.Errorf("errorMessage %q lacks the stderr tail", res.ErrorMessage)
	}
	if data, _ := os.ReadFile(f.meta.StderrPath); string(data) != "fatal: something broke\n" {
		t.Errorf("stderr.log = %q", data)
	}
}

func TestUnknownStopReasonIsNotTerminal(t *testing.T) {
	bin := fakePi(t, `
echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"hm"}],"stopReason":"pause_turn"}}'
sleep 0.3
echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"stopReason":"END_TURN"}}'
exit 0`)
	f := newFixture(t, bin)
	res, err := Run(context.Background(), f.meta, f.opts())
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopStop || res.RawStopReason != "END_TURN" || res.FinalText != "ok" {
		t.Errorf("got stop %q raw %q text %q", res.StopReason, res.RawStopReason, res.FinalText)
	}
}

// pi's automatic retry: an error message followed by auto_retry_start (or
// agent_end with willRetry) is not the end; the retried answer is.
func TestRetryPendingIsNotTerminal(t *testing.T) {
	for name, signal := range map[string]string{
		"auto_retry_start": `{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":400,"errorMessage":"500"}`,
		"agent_end":        `{"type":"agent_end","messages":[],"willRetry":true}`,
	} {
		t.Run(name, func(t *testing.T) {
			bin := fakePi(t, `
echo '{"type":"message_update","message":{"role":"assistant"},"assistantMessageEvent":{"type":"text_delta","delta":"junk"}}'
echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"junk"}],"stopReason":"error","errorMessage":"500"}}'
echo '`+signal+`'
sleep 1
echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"recovered"}],"stopReason":"stop"}}'
exit 0`)
			f := newFixture(t, bin)
			// The retry signal follows the error line at once; the grace
			// leaves the reader ample time to see it even on a loaded
			// machine, and is still far shorter than the retry's delay.
			opts := f.opts()
			opts.Grace = 300 * time.Millisecond
			res, err := Run(context.Background(), f.meta, opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.StopReason != StopStop || res.FinalText != "recovered" || res.ExitCode != 0 {
				t.Errorf("got stop %q text %q exit %d", res.StopReason, res.FinalText, res.ExitCode)
			}
		})
	}
}

// A retried attempt's text was never an answer: when the child dies while
// the retry is pending, nothing of it is output, and there is no terminal.
func TestRetryPendingThenDeath(t *testing.T) {
	bin := fakePi(t, `
echo '{"type":"message_update","message":{"role":"assistant"},"assistantMessageEvent":{"type":"text_delta","delta":"junk"}}'
echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"junk"}],"stopReason":"error","errorMessage":"500"}}'
echo '{"type":"auto_retry_start","attempt":1}'
exit 1`)
	f := newFixture(t, bin)
	res, err := Run(context.Background(), f.meta, f.opts())
	if err != nil {
		t.Fatal(err)
	}
	if res.Terminal || res.StopReason != StopError || res.FinalText != "" || res.Output != nil || res.ExitCode != 1 {
		t.Errorf("got terminal %v stop %q text %q output %v exit %d", res.Terminal, res.StopReason, res.FinalText, res.Output, res.ExitCode)
	}
}

// Retries that run out end with the last error as the terminal answer.
func TestRetriesExhausted(t *testing.T) {
	bin := fakePi(t, `
echo '{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"500"}}'
echo '{"type":"auto_retry_start","attempt":1}'
echo '{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"500"}}'
echo '{"type":"auto_retry_end","success":false,"attempt":1}'
exec sleep 1000`)
	f := newFixture(t, bin)
	res, err := Run(context.Background(), f.meta, f.opts())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Terminal || res.StopReason != StopError || !res.TornDown {
		t.Errorf("got terminal %v stop %q tornDown %v", res.Terminal, res.StopReason, res.TornDown)
	}
}

// JSON lines are read whole, far past a 64 KiB scanner limit.
func TestLongLine(t *testing.T) {
	bin := fakePi(t, `
big=$(head -c 1048576 /dev/zero | tr '\0' a)
echo '{"type":"agent_start","pad":"'"$big"'"}'
echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"'"$big"'"}],"stopReason":"stop"}}'`)
	f := newFixture(t, bin)
	res, err := Run(context.Background(), f.meta, f.opts())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.FinalText) != 1<<20 || res.StopReason != StopStop || res.ProtocolErrors != 0 {
		t.Errorf("final text %d bytes, stop %q, protocol errors %d", len(res.FinalText), res.StopReason, res.ProtocolErrors)
	}
	if fi, err := os.Stat(f.meta.StdoutPath); err != nil || fi.Size() < 2<<20 {
		t.Errorf("stdout.log: %v", err)
	}
}

func TestProtocolErrors(t *testing.T) {
	bin := fakePi(t, `
echo 'this is not json'
echo '{"type":"agent_start"}'
exit 0`)
	f := newFixture(t, bin)
	res, err := Run(context.Background(), f.meta, f.opts())
	if err != nil {
		t.Fatal(err)
	}
	if res.ProtocolErrors != 1 || res.StopReason != StopError || res.Terminal {
		t.Errorf("protocol errors %d, stop %q, terminal %v", res.ProtocolErrors, res.StopReason, res.Terminal)
	}
}

func TestMissingBinary(t *testing.T) {
	f := newFixture(t, t.TempDir()) // an empty directory: no pi on PATH
	res, err := Run(context.Background(), f.meta, f.opts())
	if err != nil {
		t.Fatal(err)
	}
	got := readResult(t, f.meta.ResultPath)
	wantResult(t, got, map[string]any{"exitCode": 127, "stopReason": "error", "finalText": "", "runId": "run-1"})
	if !strings.Contains(fmt.Sprint(got["errorMessage"]), "spawn failed") {
		t.Errorf("errorMessage = %v", got["errorMessage"])
	}
	if res.Spawned {
		t.Error("Spawned = true")
	}
	// Start says why, for the in-process provider.
	var se *SpawnError
	if _, err := Start(context.Background(), f.meta, f.opts()); !errors.As(err, &se) {
		t.Errorf("Start error = %v, want *SpawnError", err)
	}
}

func TestNotExecutable(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "pi"), []byte("#!/bin/bash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, bin)
	f.meta.Command = filepath.Join(bin, "pi")
	res, err := Run(context.Background(), f.meta, f.opts())
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == 0 || res.StopReason != StopError {
		t.Errorf("exit %d stop %q", res.ExitCode, res.StopReason)
	}
}

// A result path that cannot be written is an error before any child runs.
func TestUnwritableResultPath(t *testing.T) {
	started := filepath.Join(t.TempDir(), "started")
	bin := fakePi(t, "touch "+started+"\necho '{}'")
	f := newFixture(t, bin)
	blocker := filepath.Join(f.dir, "a-file")
	if err := writeFile(blocker, "x"); err != nil {
		t.Fatal(err)
	}
	f.meta.ResultPath = filepath.Join(blocker, "result.json")
	_, err := Run(context.Background(), f.meta, f.opts())
	var ae *ArtifactError
	if !errors.As(err, &ae) || ae.Artifact != "result" {
		t.Fatalf("error = %v, want a result *ArtifactError", err)
	}
	if _, err := os.Stat(started); err == nil {
		t.Error("the child ran although its result could not be written")
	}
	// A result path that is a directory is refused the same way.
	f.meta.ResultPath = f.dir
	if _, err := Run(context.Background(), f.meta, f.opts()); !errors.As(err, &ae) {
		t.Errorf("directory result path: error = %v", err)
	}
}

// Another artifact that cannot be opened: no child, a failing result.json.
func TestUnwritableEventsPath(t *testing.T) {
	started := filepath.Join(t.TempDir(), "started")
	bin := fakePi(t, "touch "+started+"\necho '{}'")
	f := newFixture(t, bin)
	blocker := filepath.Join(f.dir, "a-file")
	if err := writeFile(blocker, "x"); err != nil {
		t.Fatal(err)
	}
	f.meta.EventsPath = filepath.Join(blocker, "events.jsonl")
	res, err := Run(context.Background(), f.meta, f.opts())
	if err != nil {
		t.Fatal(err)
	}
	got := readResult(t, f.meta.ResultPath)
	wantResult(t, got, map[string]any{"stopReason": "error", "exitCode": 1})
	if !strings.Contains(res.ErrorMessage, "events") {
		t.Errorf("errorMessage %q does not name the artifact", res.ErrorMessage)
	}
	if _, err := os.Stat(started); err == nil {
		t.Error("the child ran although its events could not be written")
	}
}

func TestCancel(t *testing.T) {
	bin := fakePi(t, `
echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"partial"}],"stopReason":"toolUse"}}'
exec sleep 1000`)
	f := newFixture(t, bin)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := f.opts()
	opts.OnEvent = func(e Event) {
		if e.Type == EventAssistantText {
			cancel()
		}
	}
	res, err := Run(ctx, f.meta, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopAborted || !res.Cancelled || !res.TornDown || res.FinalText != "partial" || res.RawStopReason != "toolUse" {
		t.Errorf("got stop %q cancelled %v tornDown %v text %q raw %q", res.StopReason, res.Cancelled, res.TornDown, res.FinalText, res.RawStopReason)
	}
	noLeftovers(t, "REINS_WRAP_TEST_MARK="+f.mark)
}

// The child sees the command line and the task; a task that looks like a
// flag reaches it on stdin instead.
func TestChildCommandLine(t *testing.T) {
	out := t.TempDir()
	bin := fakePi(t, `
printf '%s\n' "$@" > `+out+`/args
cat > `+out+`/stdin
pwd > `+out+`/cwd
echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"stopReason":"stop"}}'`)
	f := newFixture(t, bin)
	if err := writeFile(f.meta.SystemPromptPath, "you are a scout"); err != nil {
		t.Fatal(err)
	}
	f.meta.Tools = []string{"read", "grep"}
	for _, task := range []string{"inspect auth", "-rf everything"} {
		f.meta.Task = task
		if _, err := Run(context.Background(), f.meta, f.opts()); err != nil {
			t.Fatal(err)
		}
		args, _ := os.ReadFile(filepath.Join(out, "args"))
		stdin, _ := os.ReadFile(filepath.Join(out, "stdin"))
		want := "--mode\njson\n-p\n--no-session\n--model\nopenai/gpt-5\n--tools\nread,grep\n--append-system-prompt\n" + f.meta.SystemPromptPath + "\n"
		wantStdin := ""
		if task == "inspect auth" {
			want += task + "\n"
		} else {
			wantStdin = task
		}
		if string(args) != want {
			t.Errorf("task %q: args\n%s\nwant\n%s", task, args, want)
		}
		if string(stdin) != wantStdin {
			t.Errorf("task %q: stdin %q, want %q", task, stdin, wantStdin)
		}
		if cwd, _ := os.ReadFile(filepath.Join(out, "cwd")); strings.TrimSpace(string(cwd)) != f.meta.Cwd {
			t.Errorf("cwd %q, want %q", cwd, f.meta.Cwd)
		}
	}
}

func TestEventsAndTranscript(t *testing.T) {
	bin := fakePi(t, `
echo '{"type":"session","version":3,"id":"x"}'
echo '{"type":"message_end","message":{"role":"user","content":[{"type":"text","text":"task"}]}}'
echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"read","arguments":{"path":"a"}}],"stopReason":"toolUse","usage":{"input":10,"output":2,"cacheRead":4,"cacheWrite":0,"totalTokens":16,"cost":{"total":0.5}}}}'
echo '{"type":"tool_execution_start","toolCallId":"c","toolName":"read","args":{"path":"a"}}'
echo '{"type":"tool_execution_end","toolCallId":"c","toolName":"read","result":{},"isError":true}'
echo '{"type":"message_end","message":{"role":"assistant","model":"m2","content":[{"type":"text","text":"answer"}],"stopReason":"stop","usage":{"input":20,"output":3,"cacheRead":0,"cacheWrite":1,"totalTokens":24,"cost":{"total":0.25}}}}'`)
	f := newFixture(t, bin)
	var seen []string
	opts := f.opts()
	opts.OnEvent = func(e Event) { seen = append(seen, e.Type) }
	res, err := Run(context.Background(), f.meta, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{EventAssistantText, EventToolCall, EventToolResult, EventAssistantText}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("OnEvent saw %v, want %v", seen, want)
	}
	evs := readEvents(t, f.meta.EventsPath)
	if len(evs) != 4 || evs[2]["isError"] != true || evs[3]["text"] != "answer" || evs[0]["rawStopReason"] != "toolUse" {
		t.Errorf("events.jsonl = %v", evs)
	}
	if res.Usage == nil || res.Usage.Input != 30 || res.Usage.Output != 5 || res.Usage.CacheRead != 4 ||
		res.Usage.CacheWrite != 1 || res.Usage.TotalTokens != 40 || res.Usage.Cost == nil || res.Usage.Cost.Total != 0.75 {
		t.Errorf("usage = %+v", res.Usage)
	}
	if res.ResolvedModel != "m2" {
		t.Errorf("resolvedModel = %q, want the child's m2", res.ResolvedModel)
	}
	tr, _ := os.ReadFile(f.meta.TranscriptPath)
	for _, s := range []string{"[tool call] read", "[tool result] read error", "[assistant stop] answer"} {
		if !strings.Contains(string(tr), s) {
			t.Errorf("transcript lacks %q:\n%s", s, tr)
		}
	}
}

func TestLoadMeta(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "meta.json")
	if err := writeFile(p, `{"runId":"r","task":"t","resultPath":"/x/r.json"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadMeta(p); err == nil || !strings.Contains(err.Error(), "eventsPath") {
		t.Errorf("incomplete META: error %v", err)
	}
	if err := writeFile(p, `not json`); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadMeta(p); err == nil {
		t.Error("bad JSON accepted")
	}
	if err := writeFile(p, `{"runId":"r","task":"t","resultPath":"a","eventsPath":"b","stdoutPath":"c","stderrPath":"d","transcriptPath":"e","tools":[]}`); err != nil {
		t.Fatal(err)
	}
	m, err := LoadMeta(p)
	if err != nil || m.Tools == nil || len(m.Tools) != 0 {
		t.Errorf("tools [] must mean none: %v %#v", err, m.Tools)
	}
}

// An artifact that fails mid-run (a full disk) is reported, and the child
// is still drained to its end: a wrapper that stopped reading would leave
// it blocked on a full pipe.
func TestArtifactWriteFailure(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Fatal("this test needs /dev/full (Linux):", err)
	}
	bin := fakePi(t, `
big=$(head -c 300000 /dev/zero | tr '\0' a)
echo '{"type":"agent_start","pad":"'"$big"'"}'
echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason":"stop"}}'`)
	f := newFixture(t, bin)
	f.meta.StdoutPath = "/dev/full"
	res, err := Run(context.Background(), f.meta, f.opts())
	if err != nil {
		t.Fatal(err)
	}
	var ae *ArtifactError
	if !errors.As(res.ArtifactErr, &ae) || ae.Artifact != "stdout" {
		t.Errorf("ArtifactErr = %v, want the stdout artifact's", res.ArtifactErr)
	}
	if res.StopReason != StopStop || res.FinalText != "done" {
		t.Errorf("stop %q text %q", res.StopReason, res.FinalText)
	}
	if got := readResult(t, f.meta.ResultPath); !strings.Contains(fmt.Sprint(got["errorMessage"]), "cannot write stdout artifact") {
		t.Errorf("result.json errorMessage = %v", got["errorMessage"])
	}
}

// supervised is what `reins wrap` passes as Options.Confine: the sandbox
// supervisor with full access (the package itself links no sandbox).
func supervised(termGrace time.Duration, path string, args ...string) (*exec.Cmd, error) {
	return sandbox.Command(sandbox.Policy{Mode: sandbox.FullAccess, TermGrace: termGrace}, path, args...)
}
