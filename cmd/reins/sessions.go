package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/trust"
)

// sessionsRoot is $REINS_HOME/sessions.
func sessionsRoot() string { return filepath.Join(harness.DefaultHome(os.Getenv), "sessions") }

// resolveSessionArg turns a session id, a unique prefix of one, or a
// child id the model was shown (`child: child-1a2b3c4d`) into the full
// session id. An argument that names no session, or several, is exit 2
// for every command that takes one (a usage error: nothing was read); a
// sessions directory that cannot be read is exit 1.
func resolveSessionArg(root, arg string) (string, error) {
	id, err := session.Resolve(root, arg)
	if errors.Is(err, session.ErrNotFound) && strings.HasPrefix(arg, "child-") {
		id, err = resolveChildID(root, arg)
	}
	if err == nil {
		return id, nil
	}
	var amb *session.AmbiguousError
	if errors.As(err, &amb) {
		return "", &exitError{code: exitUsage, msg: amb.Error()}
	}
	if errors.Is(err, session.ErrNotFound) {
		return "", &exitError{code: exitUsage, msg: fmt.Sprintf("no such session %s in %s", arg, root)}
	}
	return "", &exitError{code: exitFailed, msg: err.Error()}
}

// lastActive is the session --continue takes in workspace cwd: the root
// session (not a batch task's) with at least one turn whose log was
// written last. A session opened and quit without a prompt, or the fresh
// one /new leaves, has no turn and is passed over, and one resumed
// yesterday but worked in just now beats a newer one left idle (the
// log's modification time is its last activity). "" when none.
func lastActive(root string, infos []sessionInfo, cwd string) string {
	best := ""
	var bestT time.Time
	for _, in := range infos { // newest first: on a tie, the newer wins
		if in.err != nil || in.header.ParentSession != "" || in.header.Origin == session.OriginBatch || in.header.Cwd != cwd || in.turns == 0 {
			continue
		}
		fi, err := os.Stat(filepath.Join(root, in.header.ID, session.FileName))
		if err != nil {
			continue
		}
		if best == "" || fi.ModTime().After(bestT) {
			best, bestT = in.header.ID, fi.ModTime()
		}
	}
	return best
}

// resolveChildID finds the session of the child the model knows as id
// (subagent.ChildID: a hash of the parent's session id and the child's
// first run id, which its subagent/start records with the child's
// session).
func resolveChildID(root, id string) (string, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return "", session.ErrNotFound
	}
	var match []string
	for _, e := range ents {
		ld, err := session.Load(filepath.Join(root, e.Name(), session.FileName))
		if err != nil {
			continue
		}
		for _, ev := range ld.Events {
			var d session.SubagentStart
			if ev.Type != session.TypeSubagentStart || ev.Decode(&d) != nil || d.Continues != "" || d.ChildSession == "" {
				continue
			}
			if subagent.ChildID(ld.Header.ID, d.RunID) == id && session.ValidID(d.ChildSession) && !slices.Contains(match, d.ChildSession) {
				match = append(match, d.ChildSession)
			}
		}
	}
	switch len(match) {
	case 0:
		return "", session.ErrNotFound
	case 1:
		return match[0], nil
	}
	sort.Strings(match)
	return "", &session.AmbiguousError{Prefix: id, Candidates: match}
}

// pickRunSession settles which session `reins run` continues and where it
// runs: --continue is the workspace's last active session (lastActive); --resume
// takes any unique id prefix and runs in the session's recorded
// workspace unless --cwd says otherwise. It rewrites f.resume to the full
// id and f.cwd to the workspace.
func pickRunSession(f *runFlags) error {
	if f.cont && f.resume != "" {
		return &exitError{code: exitUsage, msg: "--continue and --resume: give one"}
	}
	root := sessionsRoot()
	if f.cont {
		cwd := f.cwd
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
		abs, err := filepath.Abs(cwd)
		if err != nil {
			return &exitError{code: exitUsage, msg: "--cwd: " + err.Error()}
		}
		infos, err := scanSessions(root)
		if err != nil {
			return &exitError{code: exitFailed, msg: err.Error()}
		}
		if id := lastActive(root, infos, abs); id != "" {
			f.resume = id
			return nil
		}
		return &exitError{code: exitUsage, msg: fmt.Sprintf("--continue: no session with a turn in %s yet (see reins log --all)", trust.Quote(abs))}
	}
	if f.resume == "" {
		return nil
	}
	id, err := resolveSessionArg(root, f.resume)
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) && ee.code == exitUsage {
			ee.msg = "--resume " + f.resume + ": " + ee.msg
		}
		return err
	}
	f.resume = id
	if f.cwd == "" {
		ld, err := session.Load(filepath.Join(root, id, session.FileName))
		if err != nil {
			return &exitError{code: exitFailed, msg: err.Error()}
		}
		if fi, err := os.Stat(ld.Header.Cwd); err != nil || !fi.IsDir() {
			return &exitError{code: exitUsage, msg: fmt.Sprintf("--resume %s: the session's workspace %s is gone; pass --cwd DIR", id, trust.Quote(ld.Header.Cwd))}
		}
		f.cwd = ld.Header.Cwd
	}
	return nil
}
