package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reinsdev/reins/internal/engine/temporal"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/internal/worker"
	"github.com/spf13/cobra"
)

type workerFlags struct {
	cwd, config, baseURL, sandbox, permission string
	parallel                                  int
	roots                                     []string
}

// newWorkerCmd is `reins worker` (which execs it).
func newWorkerCmd(stderr io.Writer) *cobra.Command {
	var f workerFlags
	c := &cobra.Command{
		Use:   "worker",
		Short: "Run child runs for parents on a Temporal cluster (subagents.engine: temporal)",
		Long: "worker polls the task queue of subagents.temporal {address, namespace, taskQueue}\n" +
			"and runs each child it is given with this machine's config, agents, trust and keys,\n" +
			"writing the child's session log here. It runs until SIGINT or SIGTERM.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.parallel < 0 {
				return &exitError{code: exitUsage, msg: "--parallel: want a positive number"}
			}
			perm, err := tool.ParsePermission(f.permission)
			if err != nil {
				return &exitError{code: exitUsage, msg: "--permission: " + err.Error()}
			}
			if f.sandbox != "" && f.sandbox != "on" && f.sandbox != "off" {
				return &exitError{code: exitUsage, msg: "--sandbox: want on or off"}
			}
			h, err := harness.New(harness.Options{Cwd: f.cwd, ConfigFile: f.config, Sandbox: f.sandbox})
			if err != nil {
				return err
			}
			defer h.Close()
			if n := h.UntrustedNotice(); n != "" {
				fmt.Fprintln(stderr, "reins: "+termsafe.Escape(n))
			}
			for _, w := range h.Warnings {
				if strings.HasPrefix(w.Message, "skipped: ") {
					fmt.Fprintln(stderr, "reins: warning: "+w.String())
				}
			}
			par := f.parallel
			if par == 0 {
				par = h.Config.Subagents.MaxParallel
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			tc := h.Config.Subagents.Temporal
			fmt.Fprintf(stderr, "reins worker: task queue %s on %s (namespace %s), %d at once\n",
				termsafe.Escape(tc.TaskQueue), termsafe.Escape(tc.Address), termsafe.Escape(tc.Namespace), par)
			opts := harness.Options{Home: h.Home, ConfigFile: f.config, Sandbox: f.sandbox}
			// The folders a submitted task may name as its cwd: this
			// worker's workspace and every --root (workspace.Check).
			roots := []string{h.Cwd}
			for _, r := range f.roots {
				abs, err := filepath.Abs(r)
				if err != nil {
					return &exitError{code: exitUsage, msg: "--root: " + err.Error()}
				}
				if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
					return &exitError{code: exitUsage, msg: "--root " + termsafe.Escape(r) + ": not a directory"}
				}
				roots = append(roots, abs)
			}
			// One harness per workspace, kept while its files stay as they
			// were (internal/worker); the engine is given the function that
			// runs a child in it.
			hs := &worker.Harnesses{Options: opts, Logf: h.Logf}
			defer hs.Close()
			child := &worker.Child{Harnesses: hs, BaseURL: f.baseURL, Logf: h.Logf}
			r := &temporal.Runner{Child: child.Run, MaxPermission: perm, Roots: roots, Logf: h.Logf}
			// The fence kills this worker when it stops renewing its
			// lease (frozen, or cut from the cluster): no child of it runs
			// on while its retry starts elsewhere.
			lease, stopFence, err := startFence(stderr)
			if err != nil {
				return &exitError{code: exitFailed, msg: "the worker's fence: " + err.Error()}
			}
			defer stopFence()
			if err := temporal.Serve(ctx, tc, par, r.Run, lease, h.Logf); err != nil && ctx.Err() == nil {
				return &exitError{code: exitFailed, msg: err.Error()}
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.cwd, "cwd", "", "the folder whose config names the cluster (default: the current directory)")
	fl.StringVar(&f.config, "config", "", "an extra config file, applied last (also to every child)")
	fl.StringVar(&f.baseURL, "base-url", "", "the base URL of the children's model provider")
	fl.StringVar(&f.sandbox, "sandbox", "", "on or off: confine every process a child starts (default from config: on)")
	fl.StringVar(&f.permission, "permission", string(tool.WorkspaceWrite), "the widest permission mode a child gets here: a parent's wider mode is narrowed to it")
	fl.StringArrayVar(&f.roots, "root", nil, "a folder (with its subfolders) a submitted child may run in, besides --cwd; repeatable (not needed with --permission full-access)")
	fl.IntVar(&f.parallel, "parallel", 0, "most children running at once (default: subagents.maxParallel)")
	return c
}

// startFence starts `reins-temporal fence` for this process and returns
// the writer of its renewals and the function that ends it (it ends by
// itself when this process dies: its stdin closes).
func startFence(stderr io.Writer) (io.Writer, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(exe, "fence", "--pid", strconv.Itoa(os.Getpid()), "--lease", temporal.Lease.String())
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return in, func() { in.Close(); cmd.Wait() }, nil
}

// newFenceCmd is the fence of one worker (started by the worker itself).
func newFenceCmd(stdin io.Reader, stderr io.Writer) *cobra.Command {
	var pid int
	var lease time.Duration
	c := &cobra.Command{
		Use:    "fence",
		Short:  "Kill a worker whose lease lapsed (started by the worker itself)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if pid <= 1 || lease <= 0 {
				return &exitError{code: exitUsage, msg: "fence: want --pid and --lease"}
			}
			if temporal.Fence(stdin, pid, lease) {
				fmt.Fprintf(stderr, "reins worker fence: the worker renewed no lease for %s (frozen, or cut from the cluster): killed it\n", lease)
			}
			return nil
		},
	}
	c.Flags().IntVar(&pid, "pid", 0, "the worker's process id")
	c.Flags().DurationVar(&lease, "lease", temporal.Lease, "how long the worker may go without renewing")
	return c
}
