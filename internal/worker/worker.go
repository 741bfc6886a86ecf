// Package worker is the composition root of a Temporal worker's children:
// what the engine's Runner (internal/engine/temporal) is given to run a
// checked task with. It keeps one harness per workspace and trust state
// (config layers, agent files, MCP servers, telemetry), loaded once and
// loaded again only when one of the files it was made from changes, not
// once per task (issue 49), and runs each child under a worker session
// that stands in for the remote parent, so the child's session log is
// written here and nests under it in `reins log`.
//
// The engine places runs and builds no sessions: this package sits above
// internal/harness so that internal/engine need not import it
// (internal/importrules).
package worker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/engine/temporal"
	"github.com/reinsdev/reins/internal/engine/wire"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/internal/trust"
)

// MaxIdle bounds the harnesses kept while no task uses them: a worker
// whose tasks name many workspaces holds a bounded number open.
const MaxIdle = 16

// Harnesses are a worker's harnesses, one per workspace and network
// policy. Get hands out the current one; a harness whose files changed
// since it was made is closed once its last task released it.
type Harnesses struct {
	// Options are what every harness is made with; Cwd is the task's.
	Options harness.Options
	// Logf receives a line for each harness made again.
	Logf func(format string, args ...any)

	// reporters are the running children's heartbeat reporters, by the
	// id of the worker session each child's session nests under: every
	// harness's observer hands a child's events to its own task's
	// reporter (a harness is shared by the tasks of its workspace).
	reporters sync.Map // string → temporal.Reporter

	mu    sync.Mutex
	open  map[key]*entry
	made  int // harnesses made, for the tests
	clock uint64
}

// key is what a harness is kept under: its workspace, and whether the
// network is denied (a harness-wide policy a task may narrow).
type key struct {
	cwd         string
	denyNetwork bool
}

type entry struct {
	h     *harness.Harness
	print string // config.Fingerprint when h was made
	users int
	stale bool   // replaced: closed when users reaches 0
	used  uint64 // clock of the last Get, for the idle bound
}

// fingerprint is the state of what a harness of cwd is made from.
func (hs *Harnesses) fingerprint(cwd string) string {
	home := hs.Options.Home
	if home == "" {
		home = harness.DefaultHome(hs.getenv())
	}
	return config.Fingerprint(config.LoadOptions{Home: home, Cwd: cwd, Extra: hs.Options.ConfigFile}, trust.New(home).Path())
}

func (hs *Harnesses) getenv() func(string) string {
	if hs.Options.Getenv != nil {
		return hs.Options.Getenv
	}
	return os.Getenv
}

// Get returns the harness of workspace cwd (absolute) for one task, made
// again when its files changed; release gives it back.
func (hs *Harnesses) Get(cwd string, denyNetwork bool) (h *harness.Harness, release func(), err error) {
	k := key{filepath.Clean(cwd), denyNetwork}
	print := hs.fingerprint(k.cwd)
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.open == nil {
		hs.open = map[key]*entry{}
	}
	hs.clock++
	e := hs.open[k]
	if e != nil && e.print != print {
		if hs.Logf != nil {
			hs.Logf("worker: %s: its config, agents or trust changed; loading them again", k.cwd)
		}
		e.stale = true
		delete(hs.open, k)
		hs.closeIfIdle(e)
		e = nil
	}
	if e == nil {
		o := hs.Options
		o.Cwd = k.cwd
		nh, err := harness.New(o)
		if err != nil {
			return nil, nil, err
		}
		// A parent that denies the network denies it to its children here too.
		nh.Sandbox.DenyNetwork = nh.Sandbox.DenyNetwork || denyNetwork
		own := nh.Observe
		nh.Observe = func(hd session.Header, e session.Event) {
			if own != nil {
				own(hd, e)
			}
			if hd.ParentSession == "" {
				return
			}
			if r, ok := hs.reporters.Load(hd.ParentSession); ok {
				r.(temporal.Reporter).Push(e)
			}
		}
		e = &entry{h: nh, print: print}
		hs.open[k] = e
		hs.made++
	}
	e.users++
	e.used = hs.clock
	hs.trim()
	var once sync.Once
	return e.h, func() { once.Do(func() { hs.release(e) }) }, nil
}

func (hs *Harnesses) release(e *entry) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	e.users--
	hs.closeIfIdle(e)
	hs.trim()
}

// closeIfIdle closes a replaced harness nobody uses. Called with mu held.
func (hs *Harnesses) closeIfIdle(e *entry) {
	if e.stale && e.users == 0 {
		e.h.Close()
	}
}

// trim closes the least recently used idle harnesses beyond MaxIdle.
// Called with mu held.
func (hs *Harnesses) trim() {
	for {
		idle := 0
		var oldest *entry
		var oldestKey key
		for k, e := range hs.open {
			if e.users > 0 {
				continue
			}
			idle++
			if oldest == nil || e.used < oldest.used {
				oldest, oldestKey = e, k
			}
		}
		if idle <= MaxIdle {
			return
		}
		delete(hs.open, oldestKey)
		oldest.h.Close()
	}
}

// Close closes every harness; those in use are closed when released.
func (hs *Harnesses) Close() {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	for k, e := range hs.open {
		delete(hs.open, k)
		e.stale = true
		hs.closeIfIdle(e)
	}
}

// Child runs checked tasks in the harnesses of hs: it is the
// temporal.Child of `reins worker`.
type Child struct {
	Harnesses *Harnesses
	// BaseURL is the worker's --base-url, for models of its provider.
	BaseURL string
	Logf    func(format string, args ...any)
}

func (c *Child) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

// Run is a temporal.Child.
func (c *Child) Run(ctx context.Context, t temporal.Task, perm tool.Permission, bud *budget.Budget) (temporal.Outcome, error) {
	h, release, err := c.Harnesses.Get(t.Cwd, t.DenyNetwork)
	if err != nil {
		return temporal.Outcome{}, err
	}
	defer release()
	if _, ok := h.Agents.Get(t.Agent); !ok {
		return temporal.Outcome{}, fmt.Errorf("no agent %q on this worker", t.Agent)
	}
	m, err := h.ResolveModel(t.Model, c.BaseURL)
	if err != nil {
		return temporal.Outcome{}, err
	}
	// The child's own session, from the stand-in's subagent/start.
	var (
		childMu sync.Mutex
		child   string
	)
	sess, err := h.NewSession(harness.SessionOptions{
		Model: m, MaxSteps: t.MaxSteps, MaxTokens: t.MaxTokens, Permission: perm, Tools: t.Tools, Budget: bud,
		Parent: t.ParentSession, Depth: t.Depth - 1, Agent: "worker",
		Observe: func(_ session.Header, e session.Event) {
			if st, ok := e.Payload.(session.SubagentStart); ok && st.ChildSession != "" {
				childMu.Lock()
				if child == "" {
					child = st.ChildSession
				}
				childMu.Unlock()
			}
		},
	})
	if err != nil {
		return temporal.Outcome{}, err
	}
	defer func() {
		if err := sess.Close(); err != nil {
			c.logf("worker: session %s close: %v", sess.Log.Header().ID, err)
		}
	}()
	// The child's events (its session's parent is the stand-in) feed the
	// heartbeat's selection, through the one fold.
	if r := temporal.ReporterOf(ctx); r != nil {
		id := sess.Log.Header().ID
		r.SetWorker(id)
		c.Harnesses.reporters.Store(id, r)
		defer c.Harnesses.reporters.Delete(id)
	}
	// A fork or a continuation starts from the conversation it was
	// shipped; an empty one (nil) is a new child.
	var seed []session.Event
	if len(t.Seed) > 0 {
		seed = t.Seed
	}
	res, err := sess.Subagents.Run(ctx, subagent.Params{Description: t.Description, Prompt: t.Prompt, Agent: t.Agent, Seed: seed})
	if err != nil {
		return temporal.Outcome{}, err
	}
	childMu.Lock()
	defer childMu.Unlock()
	out := temporal.Outcome{Result: res, WorkerSession: sess.Log.Header().ID, ChildSession: child}
	if t.Provider == "" || t.Provider == config.ProviderInProcess {
		out.History = c.history(h, child)
	}
	return out, nil
}

// history is the conversation of the child's log on this worker, shipped
// back for its next continuation: nil when it is larger than
// wire.MaxSeed (that continuation is refused not-continuable) or cannot
// be read.
func (c *Child) history(h *harness.Harness, child string) []session.Event {
	if child == "" {
		return nil
	}
	ld, err := session.Load(filepath.Join(h.SessionsDir(), child, session.FileName))
	if err != nil {
		c.logf("worker: child %s: its log for a continuation: %v", child, err)
		return nil
	}
	conv, err := subagent.Conversation(ld.Events)
	if err != nil || wire.SeedSize(conv) > wire.MaxSeed {
		c.logf("worker: child %s: its conversation is not shipped back (%d events, err %v)", child, len(conv), err)
		return nil
	}
	return conv
}
