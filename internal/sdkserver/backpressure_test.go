package sdkserver_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/sdkserver"
	"github.com/reinsdev/reins/sdk"
)

// TestShutdownWithBlockedStdout: a client that sends initialize, a prompt
// with a long streamed answer and shutdown, and never reads stdout. The
// runtime's outgoing queue stays bounded and Serve returns: shutdown has a
// deadline even when stdout accepts nothing (issue 14 #17).
func TestShutdownWithBlockedStdout(t *testing.T) {
	text := strings.Repeat("0123456789abcdef", 64<<10) // 1 MiB
	url, _ := mockServer(t, "replies:\n  - {match: talk, text: '"+text+"', chunk: 1024}\n")
	cwd, home := workspace(t)
	srv := sdkserver.New(sdkserver.Config{Home: home, Cwd: cwd, Model: "openai/test", BaseURL: url,
		Getenv: func(string) string { return "" }, OutboxBytes: 64 << 10, ShutdownTimeout: 50 * time.Millisecond})
	outR, outW := io.Pipe() // nobody reads outR until Serve has returned
	in := strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"content":[{"type":"text","text":"talk"}]}}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"shutdown","params":{}}` + "\n")
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.Serve(context.Background(), in, outW)
	}()
	select {
	case <-served:
	case <-time.After(60 * time.Second): // a hang guard, not a timing bound
		outR.Close()
		<-served
		t.Fatal("Serve did not return while stdout was blocked")
	}
	if q := srv.QueuedBytes(); q > 64<<10+sdk.MaxFrameBytes {
		t.Errorf("%d bytes still queued: the outgoing queue is not bounded", q)
	}
	outR.Close() // releases the writer still blocked in Write
}

// TestCancelKillsBackgroundJobs: session/cancel while the session waits on
// a background job ends the job too (killed, with subagent/finished and a
// job/notice), and the session goes idle aborted (issue 14 #17).
func TestCancelKillsBackgroundJobs(t *testing.T) {
	c, srv := newConn(t, `
replies:
  - match: start-job
    toolCalls:
      - {id: c1, name: subagent, arguments: {description: stuck, prompt: CHILD-STALL, run_in_background: true}}
  - {match: CHILD-STALL, fault: stall, repeat: true}
  - {match: Started background job, text: waiting}
`)
	c.initialize()
	sid, msg := c.prompt("", "start-job")
	// The first turn ends (its turn/end is streamed) while the job's
	// request stalls.
	c.until(func(f map[string]any) bool {
		ev, _ := params(f)["event"].(map[string]any)
		return params(f)["sessionId"] == sid && ev["type"] == "turn/end"
	})
	for srv.InFlight() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	c.request(sdk.MethodSessionCancel, sdk.CancelParams{SessionID: sid})
	frames := c.until(isIdle(msg))
	var finished map[string]any
	var notice string
	for _, f := range frames {
		if f["method"] == sdk.NotifySubagentFinished {
			finished = params(f)
		}
		if ev, _ := params(f)["event"].(map[string]any); ev["type"] == "job/notice" {
			d, _ := ev["data"].(map[string]any)
			notice, _ = d["status"].(string)
		}
	}
	if finished == nil || notice != "killed" {
		t.Errorf("subagent/finished %v, job/notice status %q: want the job killed", finished, notice)
	}
	if r := params(last(frames))["stopReason"]; r != "aborted" {
		t.Errorf("idle stopReason %v, want aborted", r)
	}
}
