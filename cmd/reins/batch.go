package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/outcome"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/reinsdev/reins/internal/batch"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/smallfile"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/spf13/cobra"
)

type batchFlags struct {
	sessionFlags
	budgetFlags
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
		Short: "Run one child per task line, in parallel; results as JSONL in input order",
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
	f.sessionFlags.register(fl, "workspace directory; a task's cwd is relative to it (default: the current directory)")
	fl.IntVar(&f.maxTokens, "max-tokens", 0, "most output tokens per model request (0: the provider's default)")
	fl.IntVar(&f.parallel, "parallel", 4, "most tasks running at once")
	fl.StringVar(&f.agent, "agent", "", "the agent definition of tasks that name none (default: general)")
	fl.StringVarP(&f.out, "out", "o", "", "write the results to this file (default: stdout); needed by --resume")
	fl.BoolVar(&f.resume, "resume", false, "keep the results --out holds and run only the tasks it lacks")
	// The budget covers the batch as a whole: every task and its children.
	f.budgetFlags.register(fl)
	return c
}

// batchPlace is one workspace of a batch: its harness and the batch
// session whose children the tasks there are.
type batchPlace struct {
	h       *harness.Harness
	sess    *harness.Session
	running int // tasks of it running now
	// turn is the one turn the batch session's events are written in
	// (turn/start when it opens, turn/end when it closes), so its log
	// has a turn like every other session's; aborted makes that turn end
	// aborted (a task was cut by an interrupt or the budget).
	turn    int
	aborted atomic.Bool
}

func batchMain(ctx context.Context, s *streams, f *batchFlags, file string) error {
	perm, err := f.check()
	if err != nil {
		return err
	}
	switch {
	case f.maxTokens < 0:
		return &exitError{code: exitUsage, msg: "--max-tokens: want 0 (the provider's default) or a positive number"}
	case f.parallel < 1:
		return &exitError{code: exitUsage, msg: "--parallel: want a positive number"}
	case f.resume && f.out == "":
		return &exitError{code: exitUsage, msg: "--resume needs --out FILE: the results of the earlier run"}
	}
	tf, err := smallfile.Open(file, os.O_RDONLY)
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	tasks, err := batch.ReadTasks(tf)
	tf.Close()
	if err != nil {
		return &exitError{code: exitUsage, msg: file + ": " + err.Error()}
	}

	// Child-written text is JSON-escaped, and escaped for a terminal too
	// (termsafe.JSON): the same bytes whether they land on one or in a file.
	var out io.Writer = jsonSafe{s.out}
	if f.out != "" {
		rf, todo, err := openResults(f.out, file, f.resume, tasks)
		if err != nil {
			return err
		}
		defer rf.Close()
		out, tasks = jsonSafe{rf}, todo
	}

	base, err := harness.New(harness.Options{Cwd: f.cwd, ConfigFile: f.config, Sandbox: f.sandbox, Effort: f.effortOf(), Network: f.network})
	if err != nil {
		return err
	}
	defer base.Close()
	// The engine is the batch's: its config names it, for every task.
	bm, err := base.ResolveModel(f.model, f.baseURL)
	if err != nil {
		return err
	}
	limits, err := f.budgetFlags.limits(base, bm)
	if err != nil {
		return err
	}
	eng, closeEng, err := openEngine(base, bm)
	if err != nil {
		return err
	}
	defer closeEng()
	base.Engine = eng
	// One budget for the whole batch (config budget: or the flags): once
	// it runs out, no task or child starts, running ones stop, and each
	// affected result ends aborted with category budget.
	tree := budget.New(limits)
	defer tree.Stop()

	// Every workspace is checked before any task runs: a bad cwd, agent
	// or model stops the batch at once.
	places := &batchPlaces{s: s, f: f, base: base, perm: perm, eng: eng, budget: tree, left: map[string]int{}, open: map[string]*batchPlace{}}
	defer places.closeAll()
	// Each workspace's agents, read once; its harness is closed at once.
	checked := map[string]*config.Agents{}
	for i, t := range tasks {
		dir := base.Cwd
		if t.Cwd != "" {
			dir = t.Cwd
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(base.Cwd, dir)
			}
			dir = filepath.Clean(dir)
		}
		agents := checked[dir]
		if agents == nil {
			h, err := places.check(dir)
			if err != nil {
				return fmt.Errorf("task %s: %w", t.ID, err)
			}
			agents = h.Agents
			if h != base {
				h.Close()
			}
			checked[dir] = agents
		}
		if t.Agent == "" {
			tasks[i].Agent = f.agent
		}
		name := tasks[i].Agent
		if name == "" {
			name = "general"
		}
		if _, ok := agents.Get(name); !ok {
			return &exitError{code: exitUsage, msg: fmt.Sprintf("task %s: no agent %q in %s (see reins agents)", t.ID, name, dir)}
		}
		tasks[i].Cwd = dir
		places.left[dir]++
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var got os.Signal
	var sigMu sync.Mutex
	go func() {
		select {
		case sig := <-sigs:
			sigMu.Lock()
			got = sig
			sigMu.Unlock()
			cancel(errors.New("interrupted"))
		case <-ctx.Done():
		}
	}()

	keyOf := func(string) string { return "" }
	if f.out != "" {
		if keyOf, err = batchKeys(base.Home, f.out, f.resume); err != nil {
			return &exitError{code: exitFailed, msg: "--out: " + err.Error()}
		}
	}

	bar := newBatchBar(s.err, len(tasks))
	failed := 0
	run := func(ctx context.Context, t batch.Task) batch.Result {
		p, err := places.acquire(t.Cwd)
		defer places.release(t.Cwd, p)
		var r outcome.Result
		if err == nil {
			r, err = p.sess.Subagents.Run(ctx, subagent.Params{Description: taskLabel(t.ID), Prompt: t.Prompt, Agent: t.Agent, Key: keyOf(t.ID)})
			if err == nil && r.StopReason == outcome.StopAborted {
				p.aborted.Store(true)
			}
		}
		if err != nil {
			// Checked before the batch started (workspace, agent, model);
			// what is left is the file system or a refused start.
			base.Logf("batch task %s: %v", t.ID, err)
			r = outcome.Result{StopReason: outcome.StopError}
		}
		res := batch.FromSubagent(t.ID, r)
		if id, ok := places.children.LoadAndDelete(taskLabel(t.ID)); ok {
			res.SessionID = id.(string)
		}
		if runID, ok := places.runs.LoadAndDelete(taskLabel(t.ID)); ok && res.SessionID == "" {
			// A temporal child's session is on its worker, known only
			// with its result (the engine's ChildSession).
			if e, ok := places.eng.(interface{ ChildSession(string) string }); ok {
				res.SessionID = e.ChildSession(runID.(string))
			}
		}
		return res
	}
	err = batch.Run(ctx, tasks, out, batch.Options{Parallel: f.parallel, Progress: func(p batch.Progress) {
		failed = p.Failed
		bar.update(p)
	}}, run)
	bar.done()
	sigMu.Lock()
	sig := got
	sigMu.Unlock()
	switch {
	case sig == os.Interrupt:
		return &exitError{code: exitInterrupt, msg: "interrupted; run again with --resume to finish the batch"}
	case sig == syscall.SIGTERM:
		return &exitError{code: 128 + int(syscall.SIGTERM)}
	case err != nil:
		return &exitError{code: exitFailed, msg: "writing the results: " + err.Error()}
	case failed > 0:
		msg := fmt.Sprintf("%d of %d tasks did not complete", failed, len(tasks))
		if spent, ok := tree.Err().(*budget.Exhausted); ok {
			msg += "; " + spent.Error()
		}
		return &exitError{code: exitFailed, msg: msg}
	}
	return nil
}

// openResults opens the results file: truncated for a new batch; for
// --resume kept up to its last whole result line, with the tasks it
// already holds left out of todo. The file may not be the task file, and
// only one batch writes it at a time (batch.LockResults): both are usage
// errors, found before anything is written.
func openResults(path, taskFile string, resume bool, tasks []batch.Task) (*os.File, []batch.Task, error) {
	if batch.SameFile(path, taskFile) {
		return nil, nil, &exitError{code: exitUsage, msg: "--out names the task file " + path + ": the results would replace the tasks"}
	}
	flag := os.O_WRONLY | os.O_CREATE
	if resume {
		flag = os.O_RDWR | os.O_CREATE
	}
	// Not O_TRUNC: the file is truncated only once it is ours.
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, nil, &exitError{code: exitUsage, msg: "--out: " + err.Error()}
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, &exitError{code: exitFailed, msg: "--out: " + err.Error()}
	}
	if !fi.Mode().IsRegular() {
		if resume {
			f.Close()
			return nil, nil, &exitError{code: exitUsage, msg: "--out " + path + ": --resume needs a regular file"}
		}
		return f, tasks, nil // a device or pipe (-o /dev/stdout): nothing to lock or truncate
	}
	if err := batch.LockResults(f); err != nil {
		f.Close()
		if errors.Is(err, batch.ErrResultsInUse) {
			return nil, nil, &exitError{code: exitUsage, msg: "--out " + path + ": " + err.Error()}
		}
		return nil, nil, &exitError{code: exitFailed, msg: "--out: " + err.Error()}
	}
	if !resume {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, nil, &exitError{code: exitFailed, msg: "--out: " + err.Error()}
		}
		return f, tasks, nil
	}
	done, good, err := batch.Finished(f)
	if err == nil {
		// A line a kill cut short is dropped; its task runs again.
		err = f.Truncate(good)
	}
	if err == nil {
		_, err = f.Seek(good, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, nil, &exitError{code: exitFailed, msg: "--out: " + err.Error()}
	}
	var todo []batch.Task
	for _, t := range tasks {
		if !done[t.ID] {
			todo = append(todo, t)
		}
	}
	return f, todo, nil
}

// batchPlaces are a batch's workspaces. Each is opened (its harness and
// its batch session, whose manager runs the tasks there) for a task and
// kept while tasks of it are left, but an idle one is closed once more
// than maxOpen are open: a batch across thousands of repositories holds a
// bounded number of logs and harnesses open, and a batch in one folder
// has one batch session.
type batchPlaces struct {
	s    *streams
	f    *batchFlags
	base *harness.Harness
	perm tool.Permission
	eng  subagent.Engine
	// budget is the batch's: every task's child charges it.
	budget *budget.Budget

	// children maps a task's label ("batch task ID") to its child
	// session, from the subagent/start events of the batch sessions, so
	// that each result names the session `reins log` shows.
	children sync.Map
	// runs maps a task's label to its run id, for an engine whose child
	// session is known only when the run settled (temporal).
	runs sync.Map

	mu   sync.Mutex
	left map[string]int // tasks not yet finished, by workspace
	open map[string]*batchPlace
}

// maxOpen is how many workspaces may stay open while idle.
func (ps *batchPlaces) maxOpen() int { return max(2*ps.f.parallel, 16) }

// harness is the harness of workspace dir: the base one for the batch's
// own cwd.
func (ps *batchPlaces) harness(dir string) (*harness.Harness, error) {
	if dir == ps.base.Cwd {
		return ps.base, nil
	}
	h, err := harness.New(harness.Options{Cwd: dir, ConfigFile: ps.f.config, Sandbox: ps.f.sandbox, Effort: ps.f.effortOf(), Network: ps.f.network})
	if err != nil {
		return nil, err
	}
	h.Engine = ps.eng
	return h, nil
}

// check opens dir's harness before the batch starts, says once what its
// untrusted or broken files are, and checks that the model resolves there.
func (ps *batchPlaces) check(dir string) (*harness.Harness, error) {
	h, err := ps.harness(dir)
	if err != nil {
		return nil, err
	}
	noticeUntrusted(ps.s, h)
	warnBroken(ps.s, h)
	if _, err := h.ResolveModel(ps.f.model, ps.f.baseURL); err != nil {
		if h != ps.base {
			h.Close()
		}
		return nil, err
	}
	return h, nil
}

func (ps *batchPlaces) acquire(dir string) (*batchPlace, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if p := ps.open[dir]; p != nil {
		p.running++
		return p, nil
	}
	h, err := ps.harness(dir)
	if err != nil {
		return nil, err
	}
	m, err := h.ResolveModel(ps.f.model, ps.f.baseURL)
	if err == nil {
		var sess *harness.Session
		sess, err = h.NewSession(harness.SessionOptions{Model: m, MaxSteps: ps.f.maxSteps, MaxTokens: ps.f.maxTokens, Permission: ps.perm, Agent: "batch", Origin: session.OriginBatch, Budget: ps.budget,
			Observe: ps.observe})
		if err == nil {
			mgr := sess.Subagents
			mgr.Limits.MaxParallel = ps.f.parallel
			// The tasks are the batch session's children: depth 1, which
			// even subagents.maxDepth 0 must allow.
			mgr.Limits.MaxDepth = max(mgr.Limits.MaxDepth, 1)
			p := &batchPlace{h: h, sess: sess, running: 1, turn: sess.Log.NextTurn()}
			if _, err := sess.Log.Append(session.TypeTurnStart, session.TurnStart{Turn: p.turn}); err != nil {
				ps.base.Logf("batch session: turn/start: %v", err)
			}
			ps.open[dir] = p
			return p, nil
		}
	}
	if h != ps.base {
		h.Close()
	}
	return nil, err
}

// release counts a task of dir finished (p nil: it never opened) and
// closes the workspaces that are idle and either done or over maxOpen.
func (ps *batchPlaces) release(dir string, p *batchPlace) {
	ps.mu.Lock()
	ps.left[dir]--
	if p != nil {
		p.running--
	}
	var closing []*batchPlace
	for d, q := range ps.open {
		if q.running == 0 && (ps.left[d] <= 0 || len(ps.open) > ps.maxOpen()) {
			closing = append(closing, q)
			delete(ps.open, d)
		}
	}
	ps.mu.Unlock()
	for _, q := range closing {
		ps.close(q)
	}
}

func (ps *batchPlaces) close(p *batchPlace) {
	reason := session.ReasonCompleted
	if p.aborted.Load() {
		reason = session.ReasonAborted
	}
	if _, err := p.sess.Log.Append(session.TypeTurnEnd, session.TurnEnd{Turn: p.turn, Reason: reason}); err != nil {
		ps.base.Logf("batch session: turn/end: %v", err)
	}
	if err := p.sess.Close(); err != nil {
		ps.base.Logf("batch session close: %v", err)
	}
	if p.h != ps.base {
		p.h.Close()
	}
}

// closeAll closes what an interrupted batch left open.
func (ps *batchPlaces) closeAll() {
	ps.mu.Lock()
	open := ps.open
	ps.open = map[string]*batchPlace{}
	ps.mu.Unlock()
	for _, p := range open {
		ps.close(p)
	}
}

// batchBar is the progress bar on stderr: redrawn in place on a terminal,
// else one line at each tenth of the batch.
type batchBar struct {
	w     io.Writer
	tty   bool
	total int
	shown int // tenths printed (not a terminal)
	drawn bool
}

func newBatchBar(w io.Writer, total int) *batchBar {
	return &batchBar{w: w, tty: isTerminal(w), total: total}
}

const barWidth = 30

// update is called under batch.Run's lock, so calls never interleave.
func (b *batchBar) update(p batch.Progress) {
	if b.total == 0 {
		return
	}
	if !b.tty {
		tenth := p.Done * 10 / b.total
		if tenth <= b.shown {
			return
		}
		b.shown = tenth
		fmt.Fprintf(b.w, "reins batch: %d/%d done, %d not completed\n", p.Done, p.Total, p.Failed)
		return
	}
	fill := p.Done * barWidth / b.total
	fmt.Fprintf(b.w, "\r[%s%s] %d/%d, %d not completed", strings.Repeat("#", fill), strings.Repeat(".", barWidth-fill), p.Done, p.Total, p.Failed)
	b.drawn = true
}

func (b *batchBar) done() {
	if b.drawn {
		fmt.Fprintln(b.w)
	}
}

// taskLabel is the label of task id's child run.
func taskLabel(id string) string { return "batch task " + id }

// observe notes each task's child session as it starts.
func (ps *batchPlaces) observe(_ session.Header, e session.Event) {
	if e.Type != session.TypeSubagentStart {
		return
	}
	var st session.SubagentStart
	if json.Unmarshal(e.Data, &st) != nil {
		return
	}
	if st.ChildSession != "" {
		ps.children.Store(st.Label, st.ChildSession)
	} else if st.RunID != "" {
		ps.runs.Store(st.Label, st.RunID)
	}
}
