// Package demo is `reins demo`: a keyless end-to-end run on the scripted
// mock model (harness.DemoScript) through the real OpenAI-wire adapter,
// narrated as it happens. It exists so that a new user sees the harness's
// promises (a retried empty completion, a tool call, a child cut off by
// max-tokens whose partial answer reaches the parent, a background job)
// without a key.
package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/logview"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/termsafe"
)

// Failed is a demo that did not get through: its mock model did not
// start, or its run did not complete. Other errors are the workspace's or
// the session log's.
type Failed struct{ Msg string }

func (f *Failed) Error() string { return f.Msg }

// Run runs the demo in a temporary workspace, writing its narration and
// where the session log is to w.
func Run(ctx context.Context, w io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ws, err := os.MkdirTemp("", "reins-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	for name, body := range harness.DemoFiles() {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			return err
		}
	}

	addrc := make(chan string, 1)
	srvErr := make(chan error, 1)
	go func() {
		srvErr <- mock.ListenAndServe(ctx, "127.0.0.1:0", harness.DemoScript(), func(a string) { addrc <- a })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-srvErr:
		return &Failed{Msg: "starting the mock model: " + err.Error()}
	}
	defer func() { cancel(); <-srvErr }()

	h, err := harness.New(harness.Options{Cwd: ws})
	if err != nil {
		return err
	}
	defer h.Close()
	m, err := h.ResolveModel("openai/reins-demo", "http://"+addr+"/v1")
	if err != nil {
		return err
	}
	// A quick, deterministic policy so the demo shows its retry at once.
	m.Retry.InitialDelay, m.Retry.Jitter = 200*time.Millisecond, 0

	fmt.Fprintf(w, "reins demo: mock model (OpenAI wire) on http://%s, workspace %s\n", addr, ws)
	fmt.Fprintf(w, "task: %s\n\n", harness.DemoPrompt)
	var fold outcome.Fold
	sess, err := h.NewSession(harness.SessionOptions{
		Model: m,
		Observe: func(_ session.Header, e session.Event) {
			fold.Push(e)
			narrate(w, e)
		},
	})
	if err != nil {
		return err
	}
	res := sess.Run(ctx, harness.DemoPrompt)
	if err := sess.Close(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nanswer (%s):\n%s\n\n", outcome.StopReasonOf(res.Reason), termsafe.Escape(llm.BlocksText(fold.Collect())))
	fmt.Fprintf(w, "usage: %s\n", logview.UsageText(res.Usage))
	fmt.Fprintf(w, "session log: %s\nrender it:   reins log %s\n", sess.Log.Path(), sess.Log.Header().ID)
	// What a newcomer does next: a real model on a real project.
	fmt.Fprintln(w, "next:        set a provider's key (ANTHROPIC_API_KEY, OPENAI_API_KEY, DEEPSEEK_API_KEY, GEMINI_API_KEY, or a preset's: reins models), then run reins in a project; reins doctor says which model it will use")
	if res.Reason != session.ReasonCompleted {
		return &Failed{Msg: "the demo run did not complete"}
	}
	return nil
}

// narrate prints the demo's events as they happen.
func narrate(w io.Writer, e session.Event) {
	// Model text and tool names are escaped for the terminal; the
	// newlines of the formats (and of an answer) are kept.
	say := func(format string, args ...any) {
		fmt.Fprint(w, termsafe.Escape(fmt.Sprintf(format, args...)))
	}
	switch d := e.Payload.(type) {
	case session.StepStart:
		say("step %d\n", d.Step+1)
	case session.LLMRetry:
		say("  the model answered with nothing (%s): retry %d/%d in %d ms\n", d.Failure.Code, d.Retry, d.MaxRetries, d.DelayMs)
	case session.AssistantMessage:
		for _, b := range d.Message.Content {
			switch b.Type {
			case llm.BlockReasoning:
				say("  thinking: %s\n", termsafe.Clip(b.Text, 100))
			case llm.BlockText:
				say("  assistant: %s\n", b.Text)
			}
		}
	case session.ToolCall:
		say("  tool call: %s %s\n", d.Name, d.Arguments)
	case session.ToolResult:
		if d.IsError || strings.HasPrefix(d.CallID, "call_summary") || strings.HasPrefix(d.CallID, "call_continue") || strings.HasPrefix(d.CallID, "call_job") {
			say("  tool result for %s:\n", d.CallID)
			for _, l := range strings.Split(d.Content, "\n") {
				say("  │ %s\n", l)
			}
		} else {
			say("  tool result for %s: %d bytes\n", d.CallID, len(d.Content))
		}
	case session.UserMessage:
		if t := d.Message.Text(); strings.HasPrefix(t, "background job") {
			say("  notice: %s\n", strings.ReplaceAll(t, "\n", "\n          "))
		}
	case session.TurnStart:
		if d.Turn > 0 {
			say("turn %d (woken by a background job)\n", d.Turn+1)
		}
	case session.SubagentStart:
		mode := ""
		if d.Background {
			mode = " as background job"
		}
		if d.Continues != "" {
			say("  continuing child %s (%q) with its whole earlier conversation\n", d.Continues, d.Label)
			break
		}
		say("  delegating %q to subagent %s%s (child session %s)\n", d.Label, d.Agent, mode, d.ChildSession)
	case session.SubagentEnd:
		if d.Continues != "" {
			say("  continuation %s of %s finished: %s\n", d.RunID, d.Continues, d.StopReason)
			break
		}
		say("  subagent %s finished: %s\n", d.RunID, d.StopReason)
	}
}
