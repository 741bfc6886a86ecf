package sdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/sdkserver/sdkfake"
	"github.com/reinsdev/reins/sdk"
)

const canary = "CANARY-7f3a9c-sdk"

// options start this test binary as the runtime, with short teardown
// waits; nothing asserts on durations.
func options(t *testing.T, env ...string) (sdk.Options, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mark := sdkfake.NewMark(t.Name())
	return sdk.Options{
		Command: exe, Args: []string{"sdk", "--model", "mock/echo"},
		Env:            append(os.Environ(), append(env, sdkfake.EnvMark+"="+mark, sdkfake.EnvCanary+"="+canary)...),
		RequestTimeout: 20 * time.Second,
		CancelGrace:    200 * time.Millisecond, ShutdownTimeout: time.Second,
		TeardownGrace: 200 * time.Millisecond, TeardownTerm: 200 * time.Millisecond,
	}, mark
}

func fake(t *testing.T, scenario string, env ...string) (sdk.Options, string) {
	return options(t, append(env, sdkfake.EnvScenario+"="+scenario)...)
}

// noLeftovers fails when a process carrying the test's mark is alive.
func noLeftovers(t *testing.T, mark string) {
	t.Helper()
	if pids := sdkfake.Leftovers(mark); len(pids) > 0 {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatalf("processes left behind: %v", pids)
	}
}

func start(t *testing.T, o sdk.Options, mark string) *sdk.Client {
	t.Helper()
	c, err := sdk.Start(context.Background(), o)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		noLeftovers(t, mark)
	})
	return c
}

func TestRunRealRuntime(t *testing.T) {
	o, mark := options(t)
	var mu sync.Mutex
	var methods []string
	o.OnNotification = func(method string, _ json.RawMessage) {
		mu.Lock()
		methods = append(methods, method)
		mu.Unlock()
	}
	c := start(t, o, mark)
	if info := c.ServerInfo(); info.Name != "reins" {
		t.Errorf("server info %+v", info)
	}
	res, err := c.Run(context.Background(), "hello there")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != "completed" || sdk.Text(res.Output) != "mock: hello there" || res.SessionID == "" {
		t.Errorf("result %+v", res)
	}
	var types []string
	for i, e := range res.Events {
		types = append(types, e.Type)
		if e.Seq != int64(i) {
			t.Errorf("event %d has seq %d", i, e.Seq)
		}
	}
	if len(types) < 3 || types[0] != "turn/start" || types[len(types)-1] != "turn/end" {
		t.Errorf("event types %v", types)
	}
	mu.Lock()
	defer mu.Unlock()
	if methods[0] != sdk.NotifySessionStatus || methods[len(methods)-1] != sdk.NotifySessionStatus {
		t.Errorf("notifications %v", methods)
	}
}

// A run's idle status reaches OnNotification before Run returns: a host
// that counts notifications sees the whole run once Run is back. The
// callback holds the idle status for up to half a second, watching for
// Run to return meanwhile; with the order right it cannot, so the verdict
// never depends on speed (the hold only lengthens a passing run).
func TestIdleNotifiedBeforeRunReturns(t *testing.T) {
	o, mark := options(t)
	returned, handled := make(chan struct{}), make(chan struct{})
	var early atomic.Bool
	o.OnNotification = func(method string, params json.RawMessage) {
		var p sdk.SessionStatusParams
		if method != sdk.NotifySessionStatus || json.Unmarshal(params, &p) != nil || p.Status != sdk.StatusIdle {
			return
		}
		select {
		case <-returned:
			early.Store(true)
		case <-time.After(500 * time.Millisecond):
		}
		close(handled)
	}
	c := start(t, o, mark)
	if _, err := c.Run(context.Background(), "hello there"); err != nil {
		t.Fatal(err)
	}
	close(returned)
	select {
	case <-handled:
	case <-time.After(20 * time.Second):
		t.Fatal("no idle status reached OnNotification")
	}
	if early.Load() {
		t.Fatal("Run returned before OnNotification had the idle status")
	}
}

// Prompts to one session queue and run in order.
func TestPromptQueue(t *testing.T) {
	o, mark := options(t)
	c := start(t, o, mark)
	ctx := context.Background()
	first, err := c.Prompt(ctx, "", []sdk.Block{{Type: "text", Text: "one"}})
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Prompt(ctx, first.SessionID, []sdk.Block{{Type: "text", Text: "two"}})
	if err != nil {
		t.Fatal(err)
	}
	if second.SessionID != first.SessionID || second.MessageID == first.MessageID {
		t.Fatalf("receipts %+v %+v", first, second)
	}
	r2, err := second.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r1, err := first.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sdk.Text(r1.Output) != "mock: one" || sdk.Text(r2.Output) != "mock: two" {
		t.Errorf("outputs %q %q", sdk.Text(r1.Output), sdk.Text(r2.Output))
	}
	if len(r1.Events) == 0 || len(r2.Events) == 0 || r2.Events[0].Seq <= r1.Events[len(r1.Events)-1].Seq {
		t.Errorf("second run's events do not follow the first's")
	}
}

func TestUnknownSessionIsAnErrorResponse(t *testing.T) {
	o, mark := options(t)
	c := start(t, o, mark)
	_, err := c.Prompt(context.Background(), "no-such-session", []sdk.Block{{Type: "text", Text: "x"}})
	var pe *sdk.ProtocolError
	if !errors.As(err, &pe) || pe.Reason != sdk.ReasonErrorResponse || pe.Code != sdk.CodeInvalidParams {
		t.Fatalf("error %#v", err)
	}
	// The connection survives an error response.
	if _, err := c.Run(context.Background(), "still here"); err != nil {
		t.Fatal(err)
	}
}

// Failures of the handshake: each is typed, none carries the runtime's
// text in Error(), and Start leaves no process behind.
func TestStartFailures(t *testing.T) {
	tests := []struct {
		scenario string
		env      []string
		check    func(t *testing.T, err error)
	}{
		{sdkfake.ScenarioExitBeforeInit, nil, func(t *testing.T, err error) {
			var te *sdk.TransportClosedError
			if !errors.As(err, &te) || !te.Exited || te.ExitCode != 5 || te.Signal != "" {
				t.Fatalf("error %#v", err)
			}
			if !strings.Contains(te.Stderr, canary) {
				t.Errorf("stderr tail %q lacks the runtime's stderr", te.Stderr)
			}
			if err.Error() != "sdk: runtime transport closed (exit code 5)" {
				t.Errorf("Error() = %q", err.Error())
			}
		}},
		{sdkfake.ScenarioMalformedInit, nil, func(t *testing.T, err error) {
			var pe *sdk.ProtocolError
			if !errors.As(err, &pe) || pe.Reason != sdk.ReasonMalformedFrame {
				t.Fatalf("error %#v", err)
			}
		}},
		{sdkfake.ScenarioErrorInit, nil, func(t *testing.T, err error) {
			var pe *sdk.ProtocolError
			if !errors.As(err, &pe) || pe.Reason != sdk.ReasonErrorResponse || pe.Code != sdk.CodeInvalidParams || pe.Method != sdk.MethodInitialize {
				t.Fatalf("error %#v", err)
			}
			if !strings.Contains(pe.Message, canary) {
				t.Errorf("message %q", pe.Message)
			}
		}},
		{sdkfake.ScenarioHangInit, []string{sdkfake.EnvStubborn + "=1", sdkfake.EnvGrandchild + "=1"}, func(t *testing.T, err error) {
			var re *sdk.RequestTimeoutError
			if !errors.As(err, &re) || re.Method != sdk.MethodInitialize {
				t.Fatalf("error %#v", err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.scenario, func(t *testing.T) {
			o, mark := fake(t, tc.scenario, tc.env...)
			if tc.scenario == sdkfake.ScenarioHangInit {
				o.RequestTimeout = 300 * time.Millisecond
			}
			c, err := sdk.Start(context.Background(), o)
			if err == nil {
				c.Close()
				t.Fatal("Start succeeded")
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("Error() carries runtime text: %q", err.Error())
			}
			tc.check(t, err)
			noLeftovers(t, mark)
		})
	}
}

func TestSpawnError(t *testing.T) {
	_, err := sdk.Start(context.Background(), sdk.Options{Command: "/nonexistent/reins"})
	var se *sdk.SpawnError
	if !errors.As(err, &se) {
		t.Fatalf("error %#v", err)
	}
}

// A runtime that dies mid-run: the partial events come back with a
// transport error naming the exit code or the signal — also when a
// grandchild keeps the runtime's stdout open.
func TestCrashMidRun(t *testing.T) {
	tests := []struct {
		name, scenario string
		env            []string
		code           int
		signal         string
	}{
		{"exit", sdkfake.ScenarioCrashExit, nil, 3, ""},
		{"exit with grandchild", sdkfake.ScenarioCrashExit, []string{sdkfake.EnvGrandchild + "=1"}, 3, ""},
		{"signal", sdkfake.ScenarioCrashSignal, nil, -1, "SIGKILL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, mark := fake(t, tc.scenario, tc.env...)
			c := start(t, o, mark)
			res, err := c.Run(context.Background(), "go")
			var te *sdk.TransportClosedError
			if !errors.As(err, &te) || !te.Exited || te.ExitCode != tc.code || te.Signal != tc.signal {
				t.Fatalf("error %#v", err)
			}
			if strings.Contains(err.Error(), canary) || !strings.Contains(te.Stderr, canary) {
				t.Errorf("Error() %q, stderr tail %q", err.Error(), te.Stderr)
			}
			if res == nil || res.SessionID != "fake-session" || len(res.Events) == 0 || res.StopReason != "" {
				t.Errorf("partial result %+v", res)
			}
			// Later requests fail with the same error at once.
			if _, err2 := c.Run(context.Background(), "again"); err2 != err {
				t.Errorf("second run: %v", err2)
			}
		})
	}
}

func TestMalformedFrameMidRun(t *testing.T) {
	o, mark := fake(t, sdkfake.ScenarioMalformedRun)
	c := start(t, o, mark)
	res, err := c.Run(context.Background(), "go")
	var pe *sdk.ProtocolError
	if !errors.As(err, &pe) || pe.Reason != sdk.ReasonMalformedFrame {
		t.Fatalf("error %#v", err)
	}
	if len(res.Events) == 0 {
		t.Errorf("partial events lost")
	}
}

// A runtime that never answers the prompt: cancelling the context returns
// its cause; a request timeout returns RequestTimeoutError; either way
// Close tears down even a runtime that ignores stdin EOF and SIGTERM.
func TestHangOnPrompt(t *testing.T) {
	t.Run("cancel", func(t *testing.T) {
		o, mark := fake(t, sdkfake.ScenarioHangPrompt, sdkfake.EnvStubborn+"=1", sdkfake.EnvGrandchild+"=1")
		c := start(t, o, mark)
		ctx, cancel := context.WithCancelCause(context.Background())
		cause := errors.New("the caller gave up")
		go func() {
			time.Sleep(50 * time.Millisecond)
			cancel(cause)
		}()
		_, err := c.Run(ctx, "go")
		if err != cause {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		o, mark := fake(t, sdkfake.ScenarioHangPrompt)
		// A bound the handshake passes even on a slow machine.
		o.RequestTimeout = 5 * time.Second
		c := start(t, o, mark)
		_, err := c.Run(context.Background(), "go")
		var re *sdk.RequestTimeoutError
		if !errors.As(err, &re) || re.Method != sdk.MethodSessionPrompt {
			t.Fatalf("error %#v", err)
		}
	})
}

// Cancelling a run the runtime accepted sends session/cancel and returns
// the partial result with the cause.
func TestCancelAcceptedRun(t *testing.T) {
	o, mark := fake(t, sdkfake.ScenarioHangRun)
	c := start(t, o, mark)
	p, err := c.Prompt(context.Background(), "", []sdk.Block{{Type: "text", Text: "go"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := p.Wait(ctx)
	if !errors.Is(err, context.Canceled) || res.SessionID != "fake-session" {
		t.Fatalf("Wait: %+v, %v", res, err)
	}
}

func TestUsageOnlyTerminalMessage(t *testing.T) {
	o, mark := fake(t, sdkfake.ScenarioUsageOnly)
	c := start(t, o, mark)
	res, err := c.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != "max-tokens" {
		t.Errorf("stop reason %q", res.StopReason)
	}
}

func TestCloseIdempotent(t *testing.T) {
	o, mark := options(t)
	c, err := sdk.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(context.Background(), "after close"); !errors.Is(err, sdk.ErrClosed) {
		t.Errorf("run after close: %v", err)
	}
	noLeftovers(t, mark)
}

func TestFrameReader(t *testing.T) {
	long := strings.Repeat("x", 100)
	in := "a\r\n" + long + "\n\nb\n" + "tail-without-newline"
	fr := sdk.NewFrameReaderSize(strings.NewReader(in), 10)
	var got []string
	for {
		line, err := fr.Next()
		if errors.Is(err, sdk.ErrFrameTooLong) {
			got = append(got, "<too long>")
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(line))
	}
	want := []string{"a", "<too long>", "", "b"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("frames %q, want %q", got, want)
	}
}

func TestErrorTextsAreFixed(t *testing.T) {
	errs := []error{
		&sdk.ProtocolError{Method: "initialize", Reason: sdk.ReasonErrorResponse, Code: -32602, Message: canary},
		&sdk.TransportClosedError{Exited: true, Signal: "SIGKILL", Stderr: canary},
		&sdk.TransportClosedError{Stderr: canary},
	}
	want := []string{
		"sdk: protocol error: error response to initialize (code -32602)",
		"sdk: runtime transport closed (signal SIGKILL)",
		"sdk: runtime transport closed",
	}
	for i, err := range errs {
		if got := err.Error(); got != want[i] || bytes.Contains([]byte(got), []byte(canary)) {
			t.Errorf("Error() = %q, want %q", got, want[i])
		}
	}
}
