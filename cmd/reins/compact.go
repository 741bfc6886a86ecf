package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/trust"
)

type compactFlags struct {
	config  string
	model   string
	baseURL string
}

func newCompactCmd(s *streams) *cobra.Command {
	var f compactFlags
	c := &cobra.Command{
		Use:   "compact SESSION",
		Short: "Summarize a session's older history now, so the next turn starts small",
		Long: "compact asks the session's model to summarize everything but its first prompt and its latest\n" +
			"step, and records the summary in the log (context/compacted); a resumed session sends the\n" +
			"summary instead of the messages it replaces. The log keeps every message.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return compactMain(cmd.Context(), s, &f, args[0])
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.config, "config", "", "an extra config file, applied last")
	fl.StringVarP(&f.model, "model", "m", "", "the model that writes the summary (default: the session's own)")
	fl.StringVar(&f.baseURL, "base-url", "", "the provider's base URL")
	return c
}

func compactMain(ctx context.Context, s *streams, f *compactFlags, arg string) error {
	root := sessionsRoot()
	id, err := resolveSessionArg(root, arg)
	if err != nil {
		return err
	}
	ld, err := session.Load(filepath.Join(root, id, session.FileName))
	if err != nil {
		return &exitError{Code: exitFailed, Msg: err.Error()}
	}
	cwd := ld.Header.Cwd
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return &exitError{Code: exitUsage, Msg: fmt.Sprintf("compact %s: the session's workspace %s is gone", id, trust.Quote(cwd))}
	}
	h, err := harness.New(harness.Options{Cwd: cwd, ConfigFile: f.config})
	if err != nil {
		return err
	}
	defer h.Close()
	noticeUntrusted(s, h)
	spec := f.model
	if spec == "" && ld.Header.Provider != "" && ld.Header.Model != "" {
		spec = ld.Header.Provider + "/" + ld.Header.Model
	}
	m, err := h.ResolveModel(spec, f.baseURL)
	if err != nil {
		return err
	}
	sess, err := h.NewSession(harness.SessionOptions{Model: m, Resume: id})
	if err != nil {
		var inUse *session.InUseError
		if errors.As(err, &inUse) {
			return &exitError{Code: exitUsage, Msg: inUse.Error()}
		}
		return err
	}
	ctx, cancel := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer cancel()
	res, compacted := sess.Agent.Compact(ctx)
	closeErr := sess.Close()
	if logErr := sess.Agent.LogError(); logErr != nil || closeErr != nil {
		if logErr == nil {
			logErr = closeErr
		}
		return &exitError{Code: exitFailed, Msg: fmt.Sprintf("%s: %v", llm.CodeLogWrite, logErr)}
	}
	switch {
	case compacted:
		fmt.Fprintf(s.out, "compacted %s: the older history is summarized; the next turn sends the summary\n", id)
	case res.Reason == session.ReasonCompleted:
		fmt.Fprintf(s.out, "nothing to compact in %s: it holds its first prompt and one step at most\n", id)
	case res.Failure != nil:
		msg := fmt.Sprintf("compact %s: the summary request failed: %s (%s)", id, res.Failure.Code, res.Failure.Message)
		return &exitError{Code: exitFailed, Msg: withProviderMessage(msg, res.Failure, m, h)}
	default:
		return &exitError{Code: exitFailed, Msg: fmt.Sprintf("compact %s: %s", id, res.Reason)}
	}
	return nil
}
