package session

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// ChildID is the id the model uses to name a child: short, stable for all
// its runs, and distinct between parent sessions (it hashes the parent's
// session id with the first run's id), so another session's child id is
// never one of this session's. It is not a secret. It lives with the log
// because it is computed from what the log records (the parent's id and
// the run id of the child's first subagent/start): the runtime that names
// children and the commands that find them by that name (reins log,
// reins run --resume child-…) share the one rule.
func ChildID(parentSession, runID string) string {
	h := sha256.Sum256([]byte(parentSession + "\x00" + runID))
	return "child-" + hex.EncodeToString(h[:4])
}

// ResolveChild finds, in root (a sessions directory), the session of the
// child the model knows as id (ChildID), from the subagent/start events
// that record each child's session. ErrNotFound when none does, an
// AmbiguousError when several do.
func ResolveChild(root, id string) (string, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return "", ErrNotFound
	}
	var match []string
	for _, e := range ents {
		ld, err := Load(filepath.Join(root, e.Name(), FileName))
		if err != nil {
			continue
		}
		for _, ev := range ld.Events {
			d, ok := ev.Payload.(SubagentStart)
			if !ok || d.Continues != "" || d.ChildSession == "" {
				continue
			}
			if ChildID(ld.Header.ID, d.RunID) == id && ValidID(d.ChildSession) && !slices.Contains(match, d.ChildSession) {
				match = append(match, d.ChildSession)
			}
		}
	}
	return onlyMatch(id, match, 0)
}

// LastActive is the session `--continue` takes in workspace cwd, from
// infos (Scan of root): the root session (not a batch task's) with at
// least one turn whose log was written last. A session opened and quit
// without a prompt, or the fresh one /new leaves, has no turn and is
// passed over, and one resumed yesterday but worked in just now beats a
// newer one left idle (the log's modification time is its last activity).
// "" when none.
func LastActive(root string, infos []Info, cwd string) string {
	best := ""
	var bestT time.Time
	for _, in := range infos { // newest first: on a tie, the newer wins
		if in.Err != nil || in.Header.ParentSession != "" || in.Header.Origin == OriginBatch || in.Header.Origin == OriginMCPServe || in.Header.Cwd != cwd || in.Turns == 0 {
			continue
		}
		fi, err := os.Stat(filepath.Join(root, in.Header.ID, FileName))
		if err != nil {
			continue
		}
		if best == "" || fi.ModTime().After(bestT) {
			best, bestT = in.Header.ID, fi.ModTime()
		}
	}
	return best
}
