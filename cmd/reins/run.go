package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/jsonstream"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/progress"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/trust"
	"github.com/spf13/cobra"
)

type runFlags struct {
	cli.OpenFlags
	cli.BudgetFlags
	streamJSON bool
	json       bool
}

func newRunCmd(s *streams) *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "run [flags] PROMPT... | -",
		Short: "Run one headless turn and print the final output",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cli.Presize()
			prompt, err := runPrompt(s, args)
			if err != nil {
				return err
			}
			return runMain(cmd.Context(), s, &f, prompt)
		},
	}
	fl := c.Flags()
	f.SessionFlags.Register(fl, "workspace directory (default: the current directory)")
	fl.StringVar(&f.Agent, "agent", "", "run as this agent definition")
	fl.BoolVar(&f.json, "json", false, "print one JSON object instead of the output text")
	fl.IntVar(&f.MaxTokens, "max-tokens", 0, "most output tokens per model request (0: the provider's default)")
	fl.StringVar(&f.Resume, "resume", "", "continue this session (any unique id prefix) with a new prompt, in its workspace unless --cwd")
	fl.BoolVarP(&f.Continue, "continue", "c", false, "continue the workspace's last active session that has a turn")
	// -y means what it means for the interactive reins; a headless run
	// never asks, so it changes nothing here.
	fl.BoolP("yes", "y", false, "do not ask before write, edit and bash (reins run never asks: accepted for the same command line as reins)")
	fl.BoolVar(&f.streamJSON, "stream-json", false, "write every event of the run and its children as JSON lines on stdout, then the --json object")
	f.BudgetFlags.Register(fl)
	return c
}

// runResult is the --json object of docs/cli.md.
type runResult struct {
	SessionID  string             `json:"sessionId"`
	StopReason outcome.StopReason `json:"stopReason"`
	Output     string             `json:"output"`
	Diagnostic string             `json:"diagnostic,omitempty"`
	Error      *session.Failure   `json:"error,omitempty"`
	// Usage and DurationMs are this run's turns by the one rule of reins
	// log and reins view (session.Tally): their usage with their
	// children's, and their wall time.
	Usage      llm.Usage `json:"usage"`
	DurationMs int64     `json:"durationMs"`
	// Model and Effort are what the run used (Model: PROVIDER/MODEL).
	Model  string     `json:"model,omitempty"`
	Effort llm.Effort `json:"effort,omitempty"`
}

// openSession is cli.OpenSession, with its notices on s.err.
func openSession(s *streams, f *runFlags) (*harness.Harness, harness.SessionOptions, *config.Agent, error) {
	h, opts, ag, err := cli.OpenSession(s.err, &f.OpenFlags)
	if err == nil {
		var mu sync.Mutex
		h.ChildNotice = func(line string) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintln(s.err, "reins: "+line)
		}
	}
	return h, opts, ag, err
}

func runMain(ctx context.Context, s *streams, f *runFlags, prompt string) error {
	h, opts, runAgent, err := openSession(s, f)
	if err != nil {
		return err
	}
	defer h.Close()
	m := opts.Model
	limits, err := f.BudgetFlags.Limits(h, m)
	if err != nil {
		return err
	}
	// The budget's time counts from here: the run's own start.
	tree := budget.New(limits)
	defer tree.Stop()
	opts.Budget = tree.Child(cli.AgentBudget(runAgent))
	defer opts.Budget.Stop()
	eng, closeEngine, err := cli.OpenEngine(h, m)
	if err != nil {
		return err
	}
	defer closeEngine()
	h.Engine = eng

	var (
		fold outcome.Fold
		// On a terminal the answer streams as it arrives (progress.Answer).
		answer = progress.NewAnswer(s.out, !f.json && !f.streamJSON && isTerminal(s.out))
		prog   = progress.New(s.err, isTerminal(s.err), os.Getenv("NO_COLOR") == "", answer)
		events *jsonstream.Stream
	)
	if f.streamJSON {
		// Every event of every session of the tree, in-process children's
		// (the harness's observer) and out-of-process children's (their
		// taps), in one ordered stream.
		events = jsonstream.New(s.out, runAgentName(runAgent))
		h.Observe, h.ObserveRemote = events.Observe, events.Observe
		defer events.Close(nil)
	}
	// A file tool's change shows before it runs, removed lines too.
	opts.BeforeRun = prog.BeforeRun(h.Cwd)
	var tally session.Tally // this run's turns (the log's lock orders the calls)
	opts.Observe = func(_ session.Header, e session.Event) {
		tally.Push(e)
		fold.Push(e)
		answer.Event(e)
		prog.Event(e)
	}
	sess, err := h.NewSession(opts)
	if err != nil {
		var inUse *session.InUseError
		if errors.As(err, &inUse) {
			return &exitError{Code: exitUsage, Msg: inUse.Error()}
		}
		return err
	}
	noticeMCP(s, h)

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if events != nil {
		// The reader of --stream-json went away: nobody can see the run
		// any more, so it ends as the user's abort, its log closed; the
		// failed write makes the exit status 1.
		stop := afterClose(events.Broken(), func() { cancel(agent.ErrAbortedByUser) })
		defer stop()
	}
	ctx, sigs := cli.WatchSignals(ctx, agent.ErrAbortedByUser, nil, os.Interrupt, syscall.SIGTERM)
	defer sigs.Stop()

	if exp, ok := sess.Slash(ctx, prompt); ok {
		// A custom command or a skill (docs/commands.md): its prompt, on
		// its model unless -m chose one.
		prompt = exp.Prompt
		if exp.Model != "" && f.Model == "" {
			if cm, _, err := h.CommandModel(sess.Agent, m, exp.Model); err == nil {
				m = cm // the run is this one turn: nothing to restore
			} else {
				fmt.Fprintf(s.err, "reins: the command's model %s is not one reins can use; running on %s/%s\n", trust.Quote(exp.Model), m.Provider, m.Name)
			}
		}
	}
	res := sess.Run(ctx, prompt)
	got := sigs.Stop()
	closeErr := sess.Close()

	out := runResult{
		SessionID:  sess.Log.Header().ID,
		StopReason: outcome.StopReasonOf(res.Reason),
		Output:     llm.BlocksText(fold.Collect()),
		Error:      res.Failure,
		Usage:      tally.Usage(),
		DurationMs: tally.DurationMs(),
		Model:      m.Provider + "/" + m.Name,
		Effort:     m.Effort,
	}
	// The log is the truth: a turn/end that could not be made durable (or a
	// log that failed as it was closed) is no completed run.
	logErr := sess.Agent.LogError()
	if closeErr != nil && logErr == nil {
		logErr = closeErr
	}
	if logErr != nil && (res.Failure == nil || res.Failure.Code != llm.CodeLogWrite) && got == nil {
		res.Reason = session.ReasonError
		res.Failure = &session.Failure{Code: llm.CodeLogWrite, Message: "the session log could not be written"}
		out.StopReason, out.Error = outcome.StopReasonOf(res.Reason), res.Failure
	}
	// A run a budget stopped says which budget ran out: in --json's error
	// (reins's own text) and on stderr.
	spent, _ := opts.Budget.Err().(*budget.Exhausted)
	if spent != nil && out.StopReason != outcome.StopCompleted && out.Error == nil {
		out.Error = &session.Failure{Code: budget.Code, Message: spent.Error()}
	}
	var werr error
	if events != nil {
		werr = events.Close(streamResult{Type: "result", runResult: out})
	} else if f.json {
		enc := json.NewEncoder(termsafe.JSONWriter{W: s.out})
		enc.SetEscapeHTML(false)
		werr = enc.Encode(out)
	} else {
		// The answer goes raw into a pipe or file (it is the product), but
		// escaped onto a terminal, which would act on its escape sequences;
		// there it has streamed already (progress.Answer.Done).
		werr = answer.Done(out.Output)
	}
	if logErr != nil {
		// Our own error, never provider text: it names the log and the
		// file system's complaint, whatever --json says on stdout.
		fmt.Fprintf(s.err, "reins: %s: %v\n", llm.CodeLogWrite, logErr)
	}
	if werr != nil {
		return &exitError{Code: exitFailed, Msg: "writing the result: " + werr.Error()}
	}
	// The exit status and --json's stopReason say the same thing: a
	// signal that arrived only after the run had completed (its turn/end
	// is on disk) does not turn it into an interrupted one.
	switch {
	case got == os.Interrupt && out.StopReason != outcome.StopCompleted:
		return &exitError{Code: exitInterrupt, Msg: resumeHint(out.SessionID)}
	case got == syscall.SIGTERM && out.StopReason != outcome.StopCompleted:
		return &exitError{Code: 128 + int(syscall.SIGTERM)}
	case out.StopReason != outcome.StopCompleted:
		msg := ""
		if spent != nil {
			msg = "stopped: " + spent.Error()
		} else if res.Failure != nil && !f.json && !f.streamJSON {
			msg = fmt.Sprintf("turn ended with %s: %s (%s)", res.Reason, res.Failure.Code, res.Failure.Message)
		} else if !f.json && !f.streamJSON {
			msg = "turn ended with " + string(res.Reason)
		}
		msg = withProviderMessage(msg, res.Failure, m, h)
		return &exitError{Code: exitFailed, Msg: msg}
	}
	return nil
}

// afterClose calls f once ch is closed, until stop is called; stop waits
// for a running f.
func afterClose(ch <-chan struct{}, f func()) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-ch:
			f()
		case <-quit:
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}
