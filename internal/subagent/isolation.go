package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/internal/worktree"
)

// isolation is the manager's table of its isolated children (`isolation:
// worktree`, docs/subagents.md): each has a git worktree of the parent's
// repository as its workspace, removed (its branch kept) after
// subagents.idleTimeout, when merged or dropped, or when the manager
// closes.
type isolation struct {
	mu   sync.Mutex
	byID map[string]*isolated
}

type isolated struct {
	repo        *worktree.Repo
	description string // the commit message of its next commit
	busy        bool   // a run of it is under way
	timer       *time.Timer
}

// isoTimeout bounds reins's own git work on a child's worktree (create,
// commit, check), whatever the caller's context says: a settled child's
// work is committed even when its parent was cancelled.
const isoTimeout = 2 * time.Minute

// maxDiffBytes bounds the diff the worktree tool returns.
const maxDiffBytes = 40 << 10

func (m *Manager) isoEntry(id string) *isolated {
	m.iso.mu.Lock()
	defer m.iso.mu.Unlock()
	return m.iso.byID[id]
}

// isolate gives req its worktree when it asks for one (the call's
// isolation or its agent file's) or continues a child that had one: req's
// cwd and sandbox workspace become the worktree (the same folder inside
// it as the parent's cwd in the repository). An error is the caller's and
// comes before anything starts: outside a repository or without git,
// isolation is refused, never silently dropped.
func (m *Manager) isolate(ctx context.Context, req *Request, p Params) error {
	want := p.Isolation
	if want == "" && req.Agent != nil && req.Continues == "" {
		want = req.Agent.Isolation
	}
	if want != "" && want != config.IsolationWorktree {
		return fmt.Errorf("isolation %q is not known (the one isolation is worktree)", clipID(want))
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), isoTimeout)
	defer cancel()
	if req.Continues != "" {
		return m.isolateAgain(ctx, req, p.Description, want != "")
	}
	if want == "" {
		return nil
	}
	repo, err := worktree.Open(ctx, m.Cwd, m.Sandbox)
	if err != nil {
		return err
	}
	tree, err := repo.Create(ctx, req.ChildID, p.Description)
	if err != nil {
		m.logf("subagent %s: worktree: %v", req.ChildID, err)
		return fmt.Errorf("isolation: worktree: the child's worktree could not be made (%s)", errKind(err))
	}
	if err := m.moveInto(req, repo, tree); err != nil {
		repo.Drop(ctx, req.ChildID)
		return err
	}
	m.iso.mu.Lock()
	if m.iso.byID == nil {
		m.iso.byID = map[string]*isolated{}
	}
	m.iso.byID[req.ChildID] = &isolated{repo: repo, description: p.Description, busy: true}
	m.iso.mu.Unlock()
	return nil
}

// isolateAgain puts a continuation of an isolated child back in its
// worktree, made again from its branch when it was removed. A child of an
// earlier run of this session (a resumed parent) is known by its branch.
func (m *Manager) isolateAgain(ctx context.Context, req *Request, description string, asked bool) error {
	m.iso.mu.Lock()
	ic := m.iso.byID[req.ChildID]
	if ic != nil {
		ic.description = description
		if ic.timer != nil {
			ic.timer.Stop()
			ic.timer = nil
		}
		ic.busy = true
	}
	m.iso.mu.Unlock()
	var repo *worktree.Repo
	if ic != nil {
		repo = ic.repo
	} else {
		r, err := worktree.Open(ctx, m.Cwd, m.Sandbox)
		if err == nil {
			if got, serr := r.Resolve(ctx, req.ChildID); serr == nil && got == req.ChildID {
				repo = r
			} else if r.Dropped(ctx, req.ChildID) {
				// Never a silent fallback to the shared workspace.
				return fmt.Errorf("child %s ran with isolation: worktree and its work was dropped; start a new subagent", req.ChildID)
			}
		}
		if repo == nil {
			if asked {
				return fmt.Errorf("child %s was not started with isolation: worktree; a continuation runs where its child ran", req.ChildID)
			}
			return nil
		}
	}
	tree, err := repo.Ensure(ctx, req.ChildID)
	if err == nil {
		err = m.moveInto(req, repo, tree)
	}
	if err != nil {
		m.logf("subagent %s: worktree: %v", req.ChildID, err)
		m.isoIdle(req.ChildID)
		return fmt.Errorf("isolation: worktree: child %s's worktree could not be restored (%s)", req.ChildID, errKind(err))
	}
	if ic == nil {
		m.iso.mu.Lock()
		if m.iso.byID == nil {
			m.iso.byID = map[string]*isolated{}
		}
		ic = &isolated{repo: repo, description: description, busy: true}
		m.iso.byID[req.ChildID] = ic
		m.iso.mu.Unlock()
	}
	return nil
}

// moveInto makes tree req's workspace: the folder inside it that is to
// the worktree what the parent's cwd is to the repository.
func (m *Manager) moveInto(req *Request, repo *worktree.Repo, tree *worktree.Tree) error {
	cwd := tree.Dir
	if real, err := filepath.EvalSymlinks(m.Cwd); err == nil {
		if rel, err := filepath.Rel(repo.Root, real); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			cwd = filepath.Join(tree.Dir, rel)
			if err := os.MkdirAll(cwd, 0o755); err != nil {
				return err
			}
		}
	}
	req.Cwd = cwd
	req.Sandbox.Workspace = cwd
	return nil
}

// errKind is the safe summary of a worktree error for the model: the
// sentinel's text, else that git failed (git's own message goes to the
// host log only).
func errKind(err error) string {
	for _, e := range []error{worktree.ErrNoGit, worktree.ErrNotRepo, worktree.ErrOldGit, worktree.ErrNoChild, worktree.ErrBadID} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	var ge *worktree.GitError
	if errors.As(err, &ge) {
		return "git " + ge.Op + " failed; see the host log"
	}
	return "see the host log"
}

// settleIsolated commits an isolated child's work on its branch when its
// run settled, and puts the branch, the change's size and whether it
// merges into its result. The worktree stays for a continuation until
// subagents.idleTimeout.
func (m *Manager) settleIsolated(req Request, res outcome.Result) outcome.Result {
	m.iso.mu.Lock()
	ic := m.iso.byID[req.ChildID]
	m.iso.mu.Unlock()
	if ic == nil {
		return res
	}
	ctx, cancel := context.WithTimeout(context.Background(), isoTimeout)
	defer cancel()
	branch := worktree.Branch(req.ChildID)
	if _, err := ic.repo.Commit(ctx, req.ChildID, ic.description); err != nil {
		m.logf("subagent %s: worktree commit: %v", req.ChildID, err)
		res.Worktree = "worktree: branch " + branch + "; the child's changes could not be committed (" + errKind(err) + "); its worktree is kept"
		m.isoIdle(req.ChildID)
		return res
	}
	st, err := ic.repo.Stat(ctx, req.ChildID)
	if err != nil {
		m.logf("subagent %s: worktree stat: %v", req.ChildID, err)
		res.Worktree = "worktree: branch " + branch + "; committed"
	} else {
		res.Worktree = st.Line()
	}
	if m.Engine != nil && strings.Contains(res.Diagnostic, engineSetupFailed) {
		res.Worktree += workerHint
	}
	m.isoIdle(req.ChildID)
	return res
}

// engineSetupFailed is the part of a diagnostic that says a worker of the
// engine could not set a child up (docs/engine.md: its cwd, agent or model
// does not exist there).
var engineSetupFailed = "stage: " + string(outcome.StageEngine) + "; category: " + string(outcome.CategoryConfiguration)

// workerHint ends the worktree line of an isolated child a worker could
// not set up. On the temporal engine the child's cwd is its worktree's
// path on the parent's machine: a worker sees that folder only on this
// machine or through a file system shared at the same path, and serves it
// only inside its --cwd or --root folders; anywhere else it refuses the
// run (never a silent run elsewhere), and this says the likely why.
const workerHint = "; the worker could not set the child up: an isolated child needs a worker that sees its worktree's folder (this machine, or a file system shared at the same path) inside the worker's --cwd or --root folders"

// isoIdle marks an isolated child idle and starts its worktree's idle
// timer: after subagents.idleTimeout the worktree is removed, the branch
// kept.
func (m *Manager) isoIdle(id string) {
	idle := m.Limits.IdleTimeout
	if idle <= 0 {
		idle = config.DefaultIdleTimeout
	}
	m.iso.mu.Lock()
	defer m.iso.mu.Unlock()
	ic := m.iso.byID[id]
	if ic == nil {
		return
	}
	ic.busy = false
	if ic.timer != nil {
		ic.timer.Stop()
	}
	var t *time.Timer
	t = time.AfterFunc(idle, func() {
		m.iso.mu.Lock()
		defer m.iso.mu.Unlock()
		if ic.busy || ic.timer != t {
			return
		}
		ic.timer = nil
		ctx, cancel := context.WithTimeout(context.Background(), isoTimeout)
		defer cancel()
		if err := ic.repo.Remove(ctx, id); err != nil {
			m.logf("subagent %s: worktree removal after the idle timeout: %v", id, err)
		}
	})
	ic.timer = t
}

// abandonIsolated undoes isolate for a child that never started: a new
// child's worktree and branch are dropped, a continuation's worktree goes
// back to idle.
func (m *Manager) abandonIsolated(req Request) {
	ic := m.isoEntry(req.ChildID)
	if ic == nil {
		return
	}
	if req.Continues != "" {
		m.isoIdle(req.ChildID)
		return
	}
	m.iso.mu.Lock()
	delete(m.iso.byID, req.ChildID)
	m.iso.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), isoTimeout)
	defer cancel()
	if err := ic.repo.Drop(ctx, req.ChildID); err != nil {
		m.logf("subagent %s: dropping the worktree of a child that never started: %v", req.ChildID, err)
	}
}

// closeIsolated removes the worktrees of every isolated child (the parent
// is closing); their branches stay for `reins worktree list|merge|drop`.
func (m *Manager) closeIsolated() {
	m.iso.mu.Lock()
	var ids []string
	for id, ic := range m.iso.byID {
		if ic.timer != nil {
			ic.timer.Stop()
			ic.timer = nil
		}
		ids = append(ids, id)
	}
	repos := map[string]*worktree.Repo{}
	for _, id := range ids {
		repos[id] = m.iso.byID[id].repo
	}
	m.iso.byID = nil
	m.iso.mu.Unlock()
	for id, repo := range repos {
		ctx, cancel := context.WithTimeout(context.Background(), isoTimeout)
		if err := repo.Remove(ctx, id); err != nil {
			m.logf("subagent %s: worktree removal at close: %v", id, err)
		}
		cancel()
	}
}

// isoRepo is the repository of this session's isolated child id (a child
// of an earlier run of a resumed session is known by its branch), or an
// error for the model.
func (m *Manager) isoRepo(ctx context.Context, id string) (*worktree.Repo, error) {
	if ic := m.isoEntry(id); ic != nil {
		if ic.busy {
			return nil, fmt.Errorf("child %s is still running; wait for its result", id)
		}
		return ic.repo, nil
	}
	if m.kids.get(id) == nil {
		return nil, fmt.Errorf("no child %q in this session", clipID(id))
	}
	repo, err := worktree.Open(ctx, m.Cwd, m.Sandbox)
	if err == nil {
		var got string
		if got, err = repo.Resolve(ctx, id); err == nil && got != id {
			err = worktree.ErrNoChild
		}
	}
	if err != nil {
		return nil, fmt.Errorf("child %s has no worktree branch (it did not run with isolation: worktree, or it was dropped)", id)
	}
	return repo, nil
}

// Worktree runs the worktree tool's action on child id: diff, merge (into
// the parent's working tree) or drop.
func (m *Manager) Worktree(ctx context.Context, env *tool.Env, action, id string, args json.RawMessage) tool.Result {
	m.init()
	repo, err := m.isoRepo(ctx, id)
	if err != nil {
		return tool.Errorf("Error: %s", err.Error())
	}
	branch := worktree.Branch(id)
	switch action {
	case "diff":
		st, err := repo.Stat(ctx, id)
		if err != nil {
			return tool.Errorf("Error: %s", errKind(err))
		}
		d, err := repo.Diff(ctx, id, maxDiffBytes)
		if err != nil {
			return tool.Errorf("Error: %s", errKind(err))
		}
		if d == "" {
			d = "(no changes)"
		}
		return tool.Result{Content: st.Line() + "\n" + d}
	case "merge":
		if env != nil && !env.Permission.Allows(tool.WorkspaceWrite) {
			return tool.Errorf("Error: merging writes the working tree, and this session is %s", env.Permission)
		}
		if env != nil && env.Approve != nil && !env.Approve(ctx, "worktree", args) {
			return tool.Errorf("Error: the merge of %s was not approved", branch)
		}
		m.stopIsoTimer(id)
		st, err := repo.Merge(ctx, id)
		var ce *worktree.ConflictError
		if errors.As(err, &ce) {
			m.isoIdle(id)
			return tool.Errorf("Error: %s does not merge cleanly into the working tree; nothing was changed.\n%s\nConflicted files: %s",
				branch, ce.Text, strings.Join(ce.Files, ", "))
		}
		if err != nil {
			m.logf("worktree merge %s: %v", id, err)
			m.isoIdle(id)
			return tool.Errorf("Error: the merge of %s failed (%s); the working tree was left unchanged", branch, errKind(err))
		}
		m.forgetIso(id)
		n := fmt.Sprintf("%d files", st.Files)
		if st.Files == 1 {
			n = "1 file"
		}
		return tool.Result{Content: fmt.Sprintf("merged %s into the working tree (not staged): %s changed, +%d -%d. Its worktree was removed; the branch stays.", branch, n, st.Added, st.Deleted)}
	case "drop":
		m.stopIsoTimer(id)
		if err := repo.Drop(ctx, id); err != nil {
			m.logf("worktree drop %s: %v", id, err)
			m.isoIdle(id)
			return tool.Errorf("Error: dropping %s failed (%s)", branch, errKind(err))
		}
		m.forgetIso(id)
		return tool.Result{Content: fmt.Sprintf("dropped child %s: its worktree and branch %s are deleted", id, branch)}
	}
	return tool.Errorf("Error: worktree action %q is not known (diff, merge or drop)", clipID(action))
}

func (m *Manager) stopIsoTimer(id string) {
	m.iso.mu.Lock()
	defer m.iso.mu.Unlock()
	if ic := m.iso.byID[id]; ic != nil {
		if ic.timer != nil {
			ic.timer.Stop()
			ic.timer = nil
		}
		ic.busy = true // no continuation or removal while the merge runs
	}
}

func (m *Manager) forgetIso(id string) {
	m.iso.mu.Lock()
	defer m.iso.mu.Unlock()
	delete(m.iso.byID, id)
}

type worktreeTool struct{ m *Manager }

func (worktreeTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{
		Name: "worktree",
		Description: "Act on the work of a subagent that ran with isolation: worktree (its result names its branch reins/<child-id>): " +
			"diff shows its change, merge applies it to the working tree (a conflict is reported and changes nothing), drop discards it.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"action":{"type":"string","enum":["diff","merge","drop"]},` +
			`"child":{"type":"string","description":"The child id, from the child: line of its result."}},` +
			`"required":["action","child"],"additionalProperties":false}`),
	}
}

// Needs is read-only: diff and drop change no file of the workspace;
// merge checks the session's mode itself and asks its approval.
func (worktreeTool) Needs() tool.Permission { return tool.ReadOnly }

func (t worktreeTool) Run(ctx context.Context, env *tool.Env, args json.RawMessage) tool.Result {
	var p struct {
		Action string `json:"action"`
		Child  string `json:"child"`
	}
	if err := json.Unmarshal(args, &p); err != nil || p.Action == "" || p.Child == "" {
		return tool.Errorf("Error: worktree needs {\"action\": \"diff|merge|drop\", \"child\": \"child-…\"}")
	}
	return t.m.Worktree(ctx, env, p.Action, p.Child, args)
}

// isolatedRequest is request, then isolate: the child's worktree exists
// (or isolation was refused) before anything is published.
func (m *Manager) isolatedRequest(ctx context.Context, p Params) (Request, Provider, error) {
	req, prov, err := m.request(p)
	if err != nil {
		return req, prov, err
	}
	if err := m.isolate(ctx, &req, p); err != nil {
		m.childIdle(req) // a continuation refused here leaves its child free
		return Request{}, nil, err
	}
	return req, prov, nil
}

// isoBranch is child id's branch when it is isolated, else "".
func (m *Manager) isoBranch(id string) string {
	if m.isoEntry(id) == nil {
		return ""
	}
	return worktree.Branch(id)
}
