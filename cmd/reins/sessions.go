package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/trust"
)

// sessionsRoot is $REINS_HOME/sessions.
func sessionsRoot() string { return filepath.Join(harness.DefaultHome(os.Getenv), "sessions") }

// resolveSessionArg turns a session id or unique prefix into the full id:
// no match is exit 1 (nothing to show), an ambiguous prefix exit 2 listing
// the candidates.
func resolveSessionArg(root, arg string, noneCode int) (string, error) {
	id, err := session.Resolve(root, arg)
	if err == nil {
		return id, nil
	}
	var amb *session.AmbiguousError
	if errors.As(err, &amb) {
		return "", &exitError{code: exitUsage, msg: amb.Error()}
	}
	if errors.Is(err, session.ErrNotFound) {
		return "", &exitError{code: noneCode, msg: fmt.Sprintf("no such session %s in %s", arg, root)}
	}
	return "", &exitError{code: exitFailed, msg: err.Error()}
}

// pickRunSession settles which session `reins run` continues and where it
// runs: --continue is the newest root session of the workspace; --resume
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
		for _, in := range infos { // newest first
			if in.err == nil && in.header.ParentSession == "" && in.header.Origin != session.OriginBatch && in.header.Cwd == abs {
				f.resume = in.header.ID
				return nil
			}
		}
		return &exitError{code: exitUsage, msg: fmt.Sprintf("--continue: no session in %s yet (see reins log --all)", trust.Quote(abs))}
	}
	if f.resume == "" {
		return nil
	}
	id, err := resolveSessionArg(root, f.resume, exitUsage)
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
