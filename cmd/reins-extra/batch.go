package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/reinsdev/reins/internal/batch"
	"github.com/reinsdev/reins/internal/batchrun"
	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/smallfile"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/spf13/cobra"
)

type batchFlags struct {
	cli.SessionFlags
	cli.BudgetFlags
	maxTokens int
	parallel  int
	agent     string
	out       string
	resume    bool
}

func newBatchCmd(s *streams) *cobra.Command {
	var f batchFlags
	c := &cobra.Command{
		Use:   "batch [flags] FILE.jsonl",
		Short: cli.ExtraShort("batch"),
		Long: "batch runs every task of FILE.jsonl (lines {id, prompt, agent?, cwd?}) as a child run\n" +
			"under the subagent result contract, at most --parallel at once, on the configured\n" +
			"engine (subagents.engine). Results ({id, stopReason, output, diagnostic?, usage})\n" +
			"go to --out (default stdout) in input order; --resume skips the ids --out holds.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return batchMain(cmd.Context(), s, &f, args[0])
		},
	}
	fl := c.Flags()
	f.SessionFlags.Register(fl, "workspace directory; a task's cwd is relative to it (default: the current directory)")
	fl.IntVar(&f.maxTokens, "max-tokens", 0, "most output tokens per model request (0: the provider's default)")
	fl.IntVar(&f.parallel, "parallel", 4, "most tasks running at once")
	fl.StringVar(&f.agent, "agent", "", "the agent definition of tasks that name none (default: general)")
	fl.StringVarP(&f.out, "out", "o", "", "write the results to this file (default: stdout); needed by --resume")
	fl.BoolVar(&f.resume, "resume", false, "keep the results --out holds and run only the tasks it lacks")
	// The budget covers the batch as a whole: every task and its children.
	f.BudgetFlags.Register(fl)
	return c
}

func batchMain(ctx context.Context, s *streams, f *batchFlags, file string) error {
	perm, err := f.Check()
	if err != nil {
		return err
	}
	switch {
	case f.maxTokens < 0:
		return &cli.ExitError{Code: cli.ExitUsage, Msg: "--max-tokens: want 0 (the provider's default) or a positive number"}
	case f.parallel < 1:
		return &cli.ExitError{Code: cli.ExitUsage, Msg: "--parallel: want a positive number"}
	case f.resume && f.out == "":
		return &cli.ExitError{Code: cli.ExitUsage, Msg: "--resume needs --out FILE: the results of the earlier run"}
	}
	tf, err := smallfile.Open(file, os.O_RDONLY)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitUsage, Msg: err.Error()}
	}
	tasks, err := batch.ReadTasks(tf)
	tf.Close()
	if err != nil {
		return &cli.ExitError{Code: cli.ExitUsage, Msg: file + ": " + err.Error()}
	}

	// Child-written text is JSON-escaped, and escaped for a terminal too
	// (termsafe.JSON): the same bytes whether they land on one or in a file.
	var out io.Writer = termsafe.JSONWriter{W: s.out}
	if f.out != "" {
		rf, todo, err := batch.OpenResults(f.out, file, f.resume, tasks)
		if err != nil {
			code := cli.ExitFailed
			if re, ok := errors.AsType[*batch.ResultsError](err); ok && re.Usage {
				code = cli.ExitUsage
			}
			return &cli.ExitError{Code: code, Msg: err.Error()}
		}
		defer rf.Close()
		out, tasks = termsafe.JSONWriter{W: rf}, todo
	}

	hopts := harness.Options{Cwd: f.Cwd, ConfigFile: f.Config, Sandbox: f.Sandbox, Effort: f.EffortOf(), Wire: f.Wire, Network: f.Network}
	base, err := harness.New(hopts)
	if err != nil {
		return err
	}
	defer base.Close()
	// The engine is the batch's: its config names it, for every task.
	// And one budget for the whole batch (config budget: or the flags): once
	// it runs out, no task or child starts, running ones stop, and each
	// affected result ends aborted with category budget.
	tree, stop, err := f.BudgetFlags.StartTree(base, f.Model, f.BaseURL)
	if err != nil {
		return err
	}
	defer stop()

	// Every workspace is checked before any task runs: a bad cwd, agent
	// or model stops the batch at once.
	places := batchrun.NewWorkspaces(batchrun.WorkspaceOptions{
		Base: base, Harness: hopts, Notice: func(h *harness.Harness) { cli.NoticeUntrusted(s.err, h); cli.WarnBroken(s.err, h) },
		Model: f.Model, BaseURL: f.BaseURL, MaxSteps: f.MaxSteps, MaxTokens: f.maxTokens, Parallel: f.parallel,
		Permission: perm, Engine: base.Engine, Budget: tree,
	})
	defer places.Close()
	if err := places.Check(tasks, f.agent); err != nil {
		if _, ok := errors.AsType[*batchrun.AgentError](err); ok {
			return &cli.ExitError{Code: cli.ExitUsage, Msg: err.Error()}
		}
		return err
	}

	ctx, sigs := cli.WatchSignals(ctx, errors.New("interrupted"), nil, os.Interrupt, syscall.SIGTERM)
	defer sigs.Stop()

	keyOf := func(string) string { return "" }
	if f.out != "" {
		if keyOf, err = batch.Keys(base.Home, f.out, f.resume); err != nil {
			return &cli.ExitError{Code: cli.ExitFailed, Msg: "--out: " + err.Error()}
		}
	}

	bar := batch.NewBar(s.err, cli.IsTerminal(s.err), len(tasks))
	failed := 0
	run := func(ctx context.Context, t batch.Task) batch.Result { return places.Run(ctx, t, keyOf(t.ID)) }
	err = batch.Run(ctx, tasks, out, batch.Options{Parallel: f.parallel, Progress: func(p batch.Progress) {
		failed = p.Failed
		bar.Update(p)
	}}, run)
	bar.Done()
	sig := sigs.Stop()
	switch {
	case sig == os.Interrupt:
		return &cli.ExitError{Code: cli.ExitInterrupt, Msg: "interrupted; run again with --resume to finish the batch"}
	case sig == syscall.SIGTERM:
		return &cli.ExitError{Code: 128 + int(syscall.SIGTERM)}
	case err != nil:
		return &cli.ExitError{Code: cli.ExitFailed, Msg: "writing the results: " + err.Error()}
	case failed > 0:
		msg := fmt.Sprintf("%d of %d tasks did not complete", failed, len(tasks))
		if spent, ok := tree.Err().(*budget.Exhausted); ok {
			msg += "; " + spent.Error()
		}
		return &cli.ExitError{Code: cli.ExitFailed, Msg: msg}
	}
	return nil
}
