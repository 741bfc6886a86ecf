// Package undo keeps the undo history of an interactive session's turns
// (the terminal's /undo and /rewind, docs/interactive.md): for each turn,
// a snapshot of the git working tree taken before it ran (in a git
// repository, so files a shell command changed, created or deleted are
// covered; worktree.Repo.Snapshot, which never touches the user's index,
// HEAD or branches) and the before-images of the files write, edit,
// multi_edit and apply_patch changed (harness.Session.RecordChanges), which
// cover a folder outside git and the files git ignores.
//
// The history lives in the running reins: the before-images are in memory
// (bounded), the snapshots are commits under refs/reins/undo/ that stay in
// the repository after reins exits, for a manual restore.
package undo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/worktree"
)

// Bounds of what a history keeps.
const (
	maxTurns = 100      // turns kept; older ones are forgotten
	maxImage = 8 << 20  // bytes of one before-image; a larger file is not restorable
	maxBytes = 64 << 20 // bytes of every before-image together
)

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

	ready   chan struct{}    // closed once Snapshot or SnapshotErr is set
	images  map[string]image // by path relative to the workspace
	skipped []string         // files that changed but could not be imaged
	size    int
}

// image is a file as it was before a turn changed it.
type image struct {
	exists bool
	mode   fs.FileMode
	data   []byte
}

// History is the undo history of one workspace's interactive session. Its
// methods are safe for concurrent use.
type History struct {
	ws   string
	repo *worktree.Repo // nil outside git

	mu    sync.Mutex
	turns []*Turn
	size  int
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

// Begin starts a turn. In git, the working tree is snapshotted
// (refs/reins/undo/<session>/<turn>) on a goroutine of its own, so the
// snapshot overlaps the model's first request: Before waits for it, and
// every call that can change a file calls Before first
// (harness.Session.RecordChanges). Wait waits for it too; the caller
// calls Wait before the turn's context ends. A snapshot that fails is
// recorded in the turn (the before-images still work).
func (h *History) Begin(ctx context.Context, session, prompt, log string, number int) {
	t := &Turn{Prompt: prompt, Log: log, Number: number, images: map[string]image{}, ready: make(chan struct{})}
	h.mu.Lock()
	h.turns = append(h.turns, t)
	if len(h.turns) > maxTurns {
		h.size -= h.turns[0].size
		h.turns = h.turns[1:]
	}
	h.mu.Unlock()
	if h.repo == nil {
		close(t.ready)
		return
	}
	go func() {
		defer close(t.ready)
		ref := fmt.Sprintf("refs/reins/undo/%s/%d", session, number)
		snap, err := h.repo.Snapshot(ctx, ref, fmt.Sprintf("reins: the working tree before turn %d of %s", number, session))
		h.mu.Lock()
		t.Snapshot, t.SnapshotErr = snap, err
		h.mu.Unlock()
	}()
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

// Turns are the turns kept, oldest first (copies without their images).
func (h *History) Turns() []Turn {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Turn, len(h.turns))
	for i, t := range h.turns {
		out[i] = Turn{Prompt: t.Prompt, Log: t.Log, Number: t.Number, Snapshot: t.Snapshot, SnapshotErr: t.SnapshotErr}
	}
	return out
}

// Report is what a restore did.
type Report struct {
	// Turn is the turn the files were restored to the start of.
	Turn Turn
	// Restored are the paths written back or removed, relative to the
	// workspace; NotRestored the files a turn changed that had no
	// before-image (too large, not a regular file) and no snapshot.
	Restored, NotRestored []string
}

// ErrEmpty is a restore with no turn to restore.
var ErrEmpty = errors.New("no turn to undo")

// Undo restores the files the last turn changed and forgets the turn.
func (h *History) Undo(ctx context.Context) (Report, error) {
	h.mu.Lock()
	n := len(h.turns)
	h.mu.Unlock()
	return h.Rewind(ctx, n-1)
}

// Rewind restores the files to what they were before turn i (an index of
// Turns) and forgets turn i and every later one: the before-images of the
// latest turn first back to turn i's (so each file ends as turn i found
// it), then, in git, the working tree to turn i's snapshot, which also
// undoes what shell commands changed.
func (h *History) Rewind(ctx context.Context, i int) (Report, error) {
	h.Wait() // between turns the snapshot is taken already
	h.mu.Lock()
	defer h.mu.Unlock()
	if i < 0 || i >= len(h.turns) {
		return Report{}, ErrEmpty
	}
	t := h.turns[i]
	rep := Report{Turn: Turn{Prompt: t.Prompt, Log: t.Log, Number: t.Number, Snapshot: t.Snapshot}}
	root, err := os.OpenRoot(h.ws)
	if err != nil {
		return rep, err
	}
	defer root.Close()
	done := map[string]bool{}
	for j := len(h.turns) - 1; j >= i; j-- {
		for rel, im := range h.turns[j].images {
			if err := restoreImage(root, rel, im); err != nil {
				return rep, fmt.Errorf("restoring %s: %w", rel, err)
			}
			done[rel] = true
		}
		rep.NotRestored = append(rep.NotRestored, h.turns[j].skipped...)
	}
	if t.Snapshot != "" {
		paths, err := h.repo.RestoreTo(ctx, t.Snapshot, h.ws)
		if err != nil {
			return rep, err
		}
		for _, p := range paths {
			done[p] = true
		}
		rep.NotRestored = nil // the snapshot covers what git does not ignore
	}
	for p := range done {
		rep.Restored = append(rep.Restored, p)
	}
	for _, t := range h.turns[i:] {
		h.size -= t.size
	}
	h.turns = h.turns[:i]
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
