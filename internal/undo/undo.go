// Package undo keeps the undo history of an interactive session's turns
// (the terminal's /undo and /rewind, docs/interactive.md): for each turn,
// snapshots of the git working tree taken before it ran and when it ended
// (in a git repository, so files a shell command changed, created or
// deleted are covered; worktree.Repo.Snapshot, which never touches the
// user's index, HEAD or branches) and the before-images of the files
// write, edit, multi_edit and apply_patch changed
// (harness.Session.RecordChanges) with what the turn left in them, which
// cover a folder outside git and the files git ignores.
//
// A restore never loses the user's work: it puts a path back only where
// nothing but reins's turns changed it since the turn gone back to
// (Plan). A path changed between turns or after the last one — a file the
// user made or edited by hand, or another program — is listed and left
// as it is.
//
// The history is of one session (the one whose turns it last began, or
// the fork it was Adopted by) and lives in the running reins: the
// before-images are in memory (bounded), the snapshots are commits under
// refs/reins/undo/ that stay in the repository after reins exits, for a
// manual restore, until Prune removes them (the last maxTurns turns of a
// session, maxAge).
package undo

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/worktree"
)

// Bounds of what a history keeps.
const (
	maxTurns = 100                 // turns of a session kept; older ones are forgotten, their refs deleted
	maxAge   = 30 * 24 * time.Hour // snapshots older than this are deleted by Prune
	maxImage = 8 << 20             // bytes of one before-image; a larger file is not restorable
	maxBytes = 64 << 20            // bytes of every before-image together
)

// RefPrefix is where the snapshots are kept:
// RefPrefix<session>/<turn>/start and …/end.
const RefPrefix = "refs/reins/undo/"

// Turn is one turn of the history.
type Turn struct {
	// Prompt is what the user sent.
	Prompt string
	// Log and Number say where the turn is: the session log's path and
	// the turn's number in it (its turn/start), so a rewind can copy the
	// conversation before it.
	Log    string
	Number int
	// Snapshot is the git commit of the working tree before the turn, ""
	// outside git or when it could not be taken (SnapshotErr).
	Snapshot    string
	SnapshotErr error
	// End is the commit of the working tree when the turn ended: what
	// reins left. "" outside git, before End, or when it failed.
	End string

	session string
	ready   chan struct{}    // closed once Snapshot or SnapshotErr is set
	images  map[string]image // by path relative to the workspace
	after   map[string]state // the imaged paths as the turn left them (End)
	skipped []string         // files that changed but could not be imaged
	size    int
}

// ref is the name of the turn's snapshot which ("start" or "end").
func (t *Turn) ref(which string) string {
	return fmt.Sprintf("%s%s/%d/%s", RefPrefix, t.session, t.Number, which)
}

// image is a file as it was before a turn changed it.
type image struct {
	exists bool
	mode   fs.FileMode
	data   []byte
}

// state is what a file holds, to compare: absent, or its mode and
// content's hash. A state that is not known (unreadable, too large)
// equals no other.
type state struct {
	known, exists bool
	mode          fs.FileMode
	sum           [sha256.Size]byte
}

func (s state) same(o state) bool { return s.known && o.known && s == o }

func (im image) state() state {
	if !im.exists {
		return state{known: true}
	}
	return state{known: true, exists: true, mode: im.mode, sum: sha256.Sum256(im.data)}
}

// stateOf is what the file rel of root holds now.
func stateOf(root *os.Root, rel string) state {
	fi, err := root.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return state{known: true}
	case err != nil || !fi.Mode().IsRegular() || fi.Size() > maxImage:
		return state{}
	}
	data, err := root.ReadFile(rel)
	if err != nil {
		return state{}
	}
	return state{known: true, exists: true, mode: fi.Mode().Perm(), sum: sha256.Sum256(data)}
}

// History is the undo history of one workspace's interactive session. Its
// methods are safe for concurrent use.
type History struct {
	ws   string
	repo *worktree.Repo // nil outside git

	mu      sync.Mutex
	session string // whose turns these are
	turns   []*Turn
	size    int
}

// Open starts an empty history of the workspace ws (absolute): with git
// snapshots when ws is inside a git repository and git (2.38 or later)
// is installed. sb is the session's sandbox policy: the snapshots' git
// runs confined within it (worktree.Open).
func Open(ctx context.Context, ws string, sb sandbox.Policy) *History {
	h := &History{ws: ws}
	if r, err := worktree.Open(ctx, ws, sb); err == nil {
		h.repo = r
	}
	return h
}

// Git reports whether turns get a snapshot of the git working tree.
func (h *History) Git() bool { return h.repo != nil }

// Prune deletes the snapshot refs (every session's, under RefPrefix)
// older than maxAge at now, and those of a session's turns before its
// latest maxTurns; it returns how many refs it deleted. The commits stay
// in the repository, unreachable, until git gc prunes them
// (gc.pruneExpire, two weeks by default).
func (h *History) Prune(ctx context.Context, now time.Time) (int, error) {
	if h.repo == nil {
		return 0, nil
	}
	refs, err := h.repo.Refs(ctx, RefPrefix)
	if err != nil {
		return 0, err
	}
	var del []string
	turns := map[string][]int{} // session -> turn numbers with a ref
	type key struct {
		session string
		turn    int
	}
	byTurn := map[key][]string{}
	for _, r := range refs {
		if now.Sub(r.Time) > maxAge {
			del = append(del, r.Name)
			continue
		}
		// <session>/<turn>/start|end, or <session>/<turn> (before ends were kept).
		parts := strings.Split(strings.TrimPrefix(r.Name, RefPrefix), "/")
		if len(parts) < 2 {
			continue
		}
		n, err := strconv.Atoi(parts[1])
		if err != nil {
			continue
		}
		k := key{parts[0], n}
		if byTurn[k] == nil {
			turns[k.session] = append(turns[k.session], n)
		}
		byTurn[k] = append(byTurn[k], r.Name)
	}
	for s, ns := range turns {
		slices.Sort(ns)
		for _, n := range ns[:max(0, len(ns)-maxTurns)] {
			del = append(del, byTurn[key{s, n}]...)
		}
	}
	slices.Sort(del)
	return len(del), h.repo.DeleteRefs(ctx, del)
}

// Begin starts a turn of session; the turns of another session are
// forgotten (their snapshots stay). In git, the working tree is
// snapshotted (RefPrefix<session>/<turn>/start) on a goroutine of its
// own, so the snapshot overlaps the model's first request: Before waits
// for it, and every call that can change a file calls Before first
// (harness.Session.RecordChanges). Wait waits for it too, and End is
// called when the turn ends, before the next one. A snapshot that fails
// is recorded in the turn (the before-images still work).
func (h *History) Begin(ctx context.Context, session, prompt, log string, number int) {
	t := &Turn{Prompt: prompt, Log: log, Number: number, session: session, images: map[string]image{}, ready: make(chan struct{})}
	var dropped *Turn
	h.mu.Lock()
	if session != h.session {
		h.session, h.turns, h.size = session, nil, 0
	}
	h.turns = append(h.turns, t)
	if len(h.turns) > maxTurns {
		dropped = h.turns[0]
		h.size -= dropped.size
		h.turns = h.turns[1:]
	}
	h.mu.Unlock()
	if h.repo == nil {
		close(t.ready)
		return
	}
	go func() {
		defer close(t.ready)
		snap, err := h.repo.Snapshot(ctx, t.ref("start"), fmt.Sprintf("reins: the working tree before turn %d of %s", number, session))
		h.mu.Lock()
		t.Snapshot, t.SnapshotErr = snap, err
		h.mu.Unlock()
		if dropped != nil {
			// Its refs go with it; one that stays is pruned at the next start.
			h.repo.DeleteRefs(ctx, []string{dropped.ref("start"), dropped.ref("end")})
		}
	}()
}

// ready waits for the latest turn's snapshot to be taken, at most until
// ctx ends: a plan or a rewind never waits without a bound.
func (h *History) ready(ctx context.Context) error {
	t := h.latest()
	if t == nil {
		return nil
	}
	select {
	case <-t.ready:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the last turn's snapshot is still being taken: %w", context.Cause(ctx))
	}
}

// Wait waits for the latest turn's snapshot and returns its error.
func (h *History) Wait() error {
	t := h.latest()
	if t == nil {
		return nil
	}
	<-t.ready
	h.mu.Lock()
	defer h.mu.Unlock()
	return t.SnapshotErr
}

// End records what the latest turn left, as it ends: the files it imaged
// as they are now, and in git a snapshot of the working tree
// (RefPrefix<session>/<turn>/end). A restore puts back only what still
// matches it. ctx is not the turn's own (a cancelled turn ends too).
func (h *History) End(ctx context.Context) error {
	t := h.latest()
	if t == nil {
		return nil
	}
	select {
	case <-t.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	h.mu.Lock()
	t.after = map[string]state{}
	if root, err := os.OpenRoot(h.ws); err == nil {
		for rel := range t.images {
			t.after[rel] = stateOf(root, rel)
		}
		root.Close()
	}
	h.mu.Unlock()
	if h.repo == nil {
		return nil
	}
	end, err := h.repo.Snapshot(ctx, t.ref("end"), fmt.Sprintf("reins: the working tree after turn %d of %s", t.Number, t.session))
	h.mu.Lock()
	t.End = end
	h.mu.Unlock()
	return err
}

// latest is the running turn, nil before the first.
func (h *History) latest() *Turn {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.turns) == 0 {
		return nil
	}
	return h.turns[len(h.turns)-1]
}

// Before waits for the running turn's snapshot (or the end of ctx), then
// keeps the before-images of paths (absolute), the first of each path
// only: the file as the turn found it.
func (h *History) Before(ctx context.Context, paths []string) {
	t := h.latest()
	if t == nil {
		return
	}
	select {
	case <-t.ready:
	case <-ctx.Done():
		return
	}
	if len(paths) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	root, err := os.OpenRoot(h.ws)
	if err != nil {
		return
	}
	defer root.Close()
	for _, abs := range paths {
		rel, err := filepath.Rel(h.ws, abs)
		if err != nil || !filepath.IsLocal(rel) {
			continue // outside the workspace (full-access): not restorable
		}
		if _, done := t.images[rel]; done {
			continue
		}
		fi, err := root.Lstat(rel)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			t.images[rel] = image{}
			continue
		case err != nil || !fi.Mode().IsRegular() || fi.Size() > maxImage || h.size+int(fi.Size()) > maxBytes:
			t.skipped = append(t.skipped, rel)
			continue
		}
		data, err := root.ReadFile(rel)
		if err != nil {
			t.skipped = append(t.skipped, rel)
			continue
		}
		t.images[rel] = image{exists: true, mode: fi.Mode().Perm(), data: data}
		t.size += len(data)
		h.size += len(data)
	}
}

// Turns are session's turns kept, oldest first (copies without their
// images); none when the history is another session's.
func (h *History) Turns(session string) []Turn {
	h.mu.Lock()
	defer h.mu.Unlock()
	if session != h.session {
		return nil
	}
	out := make([]Turn, len(h.turns))
	for i, t := range h.turns {
		out[i] = t.copy()
	}
	return out
}

func (t *Turn) copy() Turn {
	return Turn{Prompt: t.Prompt, Log: t.Log, Number: t.Number, Snapshot: t.Snapshot, SnapshotErr: t.SnapshotErr, End: t.End}
}

// Adopt makes the history of session from that of session to, turns
// kept: a rewind's fork goes on from the turns before the one it went
// back to.
func (h *History) Adopt(from, to string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.session == from {
		h.session = to
	}
}

// Plan is what a restore to the start of a turn would do.
type Plan struct {
	// Turn is the turn whose start the files go back to.
	Turn Turn
	// Restore are the paths (relative to the workspace) only reins's
	// turns changed since, which are put back; Leave those changed
	// outside the turns too — by the user, by hand, or another program,
	// between the turns or since the last — which are left as they are;
	// NotRestorable those a turn changed that nothing holds the earlier
	// content of (too large, not a regular file). Sorted.
	Restore, Leave, NotRestorable []string

	session string
	index   int
	from    string            // the start snapshot the git changes go back to
	git     []worktree.Change // the restorable paths git covers
	images  map[string]image  // the restorable paths the before-images cover
}

// Report is what a restore did.
type Report struct {
	// Turn is the turn the files were restored to the start of.
	Turn Turn
	// Restored are the paths written back or removed, relative to the
	// workspace; Left those left as they are because they changed outside
	// reins's turns (Plan.Leave) or were not in the plan agreed to;
	// NotRestored as Plan.NotRestorable.
	Restored, Left, NotRestored []string
}

// ErrEmpty is a restore with no turn to restore.
var ErrEmpty = errors.New("no turn to undo")

// Undo restores what the last turn of session changed, where nothing
// else changed it since (Plan), and forgets the turn.
func (h *History) Undo(ctx context.Context, session string) (Report, error) {
	p, err := h.Plan(ctx, session, len(h.Turns(session))-1)
	if err != nil {
		return Report{Turn: p.Turn}, err
	}
	return h.Rewind(ctx, p)
}

// Plan says what a restore to the start of turn i (an index of
// Turns(session)) would do. A path is restorable when it differs from the
// start of turn i and only reins's turns changed it since: in git, it
// changed in no interval between the snapshot at one turn's end and the
// next one's start, nor since the last turn's end (a turn whose snapshot
// is missing counts as outside, so the path is left); for the files git
// ignores, or outside git, the before-images and what each turn left
// chain up to what the file holds now.
func (h *History) Plan(ctx context.Context, session string, i int) (Plan, error) {
	if err := h.ready(ctx); err != nil { // between turns the snapshot is taken already
		return Plan{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if session != h.session || i < 0 || i >= len(h.turns) {
		return Plan{}, ErrEmpty
	}
	return h.plan(ctx, i)
}

func (h *History) plan(ctx context.Context, i int) (Plan, error) {
	turns := h.turns[i:]
	p := Plan{Turn: turns[0].copy(), session: h.session, index: i, images: map[string]image{}}
	root, err := os.OpenRoot(h.ws)
	if err != nil {
		return p, err
	}
	defer root.Close()
	git := h.repo != nil && turns[0].Snapshot != ""
	if git {
		if err := h.planGit(ctx, turns, &p); err != nil {
			return p, err
		}
	}
	// The before-images: of every path outside git, of the ignored ones in it.
	seq := map[string][]*Turn{}
	skipped := map[string]bool{}
	var paths []string
	for _, t := range turns {
		for rel := range t.images {
			if seq[rel] == nil {
				paths = append(paths, rel)
			}
			seq[rel] = append(seq[rel], t)
		}
		for _, rel := range t.skipped {
			if !skipped[rel] && seq[rel] == nil {
				paths = append(paths, rel)
			}
			skipped[rel] = true
		}
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	if git {
		if paths, err = h.repo.Ignored(ctx, h.ws, paths); err != nil {
			return p, err
		}
	}
	for _, rel := range paths {
		if skipped[rel] {
			p.NotRestorable = append(p.NotRestorable, rel)
			continue
		}
		ts := seq[rel]
		if ts == nil {
			continue
		}
		now := stateOf(root, rel)
		target := ts[0].images[rel]
		if target.state().same(now) {
			continue // as the turn found it
		}
		ours := true
		for k, t := range ts {
			left, ok := t.after[rel]
			next := now
			if k+1 < len(ts) {
				next = ts[k+1].images[rel].state()
			}
			ours = ours && ok && left.same(next)
		}
		if ours {
			p.Restore = append(p.Restore, rel)
			p.images[rel] = target
		} else {
			p.Leave = append(p.Leave, rel)
		}
	}
	slices.Sort(p.Restore)
	slices.Sort(p.Leave)
	p.Restore, p.Leave = slices.Compact(p.Restore), slices.Compact(p.Leave)
	return p, nil
}

// planGit adds the paths git covers to p: the changes from the start of
// turns[0] to now, restorable where no interval outside the turns (from
// one's end to the next one's start, from the last one's end to now)
// changed them.
func (h *History) planGit(ctx context.Context, turns []*Turn, p *Plan) error {
	now, err := h.repo.Capture(ctx, "reins undo: the working tree before restoring")
	if err != nil {
		return err
	}
	type point struct {
		commit string
		turn   *Turn
		end    bool
	}
	var pts []point
	for _, t := range turns {
		if t.Snapshot != "" {
			pts = append(pts, point{t.Snapshot, t, false})
		}
		if t.End != "" {
			pts = append(pts, point{t.End, t, true})
		}
	}
	pts = append(pts, point{commit: now})
	outside := map[string]bool{}
	for a := 0; a+1 < len(pts); a++ {
		x, y := pts[a], pts[a+1]
		if !x.end && y.end && x.turn == y.turn {
			continue // within a turn: reins's
		}
		cs, err := h.repo.Changed(ctx, x.commit, y.commit, h.ws)
		if err != nil {
			return err
		}
		for _, c := range cs {
			outside[c.Path] = true
		}
	}
	cs, err := h.repo.Changed(ctx, turns[0].Snapshot, now, h.ws)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if outside[c.Path] {
			p.Leave = append(p.Leave, c.Path)
		} else {
			p.Restore = append(p.Restore, c.Path)
			p.git = append(p.git, c)
		}
	}
	p.from = turns[0].Snapshot
	return nil
}

// Rewind restores the files to what they were before p's turn, where p
// agreed to it and it is still so (p is planned again: a path changed
// since p was made is left) and forgets that turn and every later one.
func (h *History) Rewind(ctx context.Context, p Plan) (Report, error) {
	if err := h.ready(ctx); err != nil {
		return Report{Turn: p.Turn}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if p.session != h.session || p.index >= len(h.turns) || h.turns[p.index].Number != p.Turn.Number {
		return Report{Turn: p.Turn}, ErrEmpty
	}
	fresh, err := h.plan(ctx, p.index)
	rep := Report{Turn: fresh.Turn, NotRestored: fresh.NotRestorable, Left: fresh.Leave}
	if err != nil {
		return rep, err
	}
	agreed := map[string]bool{}
	for _, rel := range p.Restore {
		agreed[rel] = true
	}
	root, err := os.OpenRoot(h.ws)
	if err != nil {
		return rep, err
	}
	defer root.Close()
	for _, rel := range fresh.Restore {
		if !agreed[rel] {
			rep.Left = append(rep.Left, rel)
			continue
		}
		if im, ok := fresh.images[rel]; ok {
			if err := restoreImage(root, rel, im); err != nil {
				return rep, fmt.Errorf("restoring %s: %w", rel, err)
			}
		}
		rep.Restored = append(rep.Restored, rel)
	}
	var cs []worktree.Change
	for _, c := range fresh.git {
		if agreed[c.Path] {
			cs = append(cs, c)
		}
	}
	if len(cs) > 0 {
		if err := h.repo.Restore(ctx, fresh.from, h.ws, cs); err != nil {
			return rep, err
		}
	}
	slices.Sort(rep.Left)
	for _, t := range h.turns[p.index:] {
		h.size -= t.size
	}
	h.turns = h.turns[:p.index]
	return rep, nil
}

// restoreImage puts a before-image back: the content and mode of a file
// that existed, the absence of one that did not.
func restoreImage(root *os.Root, rel string, im image) error {
	if !im.exists {
		if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if d := filepath.Dir(rel); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := root.WriteFile(rel, im.data, im.mode); err != nil {
		return err
	}
	return root.Chmod(rel, im.mode)
}
