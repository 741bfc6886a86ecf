package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/session"
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
		id, err = session.ResolveChild(root, arg)
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

// pickRunSession settles which session `reins run` continues and where it
// runs: --continue is the workspace's last active session (session.LastActive); --resume
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
		infos, err := session.Scan(root)
		if err != nil {
			return &exitError{code: exitFailed, msg: err.Error()}
		}
		if id := session.LastActive(root, infos, abs); id != "" {
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
