package cli

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

// SessionsRoot is $REINS_HOME/sessions.
func SessionsRoot() string { return filepath.Join(harness.DefaultHome(os.Getenv), "sessions") }

// ResolveSession turns a session id, a unique prefix of one, or a
// child id the model was shown (`child: child-1a2b3c4d`) into the full
// session id. An argument that names no session, or several, is exit 2
// for every command that takes one (a usage error: nothing was read); a
// sessions directory that cannot be read is exit 1.
func ResolveSession(root, arg string) (string, error) {
	id, err := session.Resolve(root, arg)
	if errors.Is(err, session.ErrNotFound) && strings.HasPrefix(arg, "child-") {
		id, err = session.ResolveChild(root, arg)
	}
	if err == nil {
		return id, nil
	}
	var amb *session.AmbiguousError
	if errors.As(err, &amb) {
		return "", &ExitError{Code: ExitUsage, Msg: amb.Error()}
	}
	if errors.Is(err, session.ErrNotFound) {
		return "", &ExitError{Code: ExitUsage, Msg: fmt.Sprintf("no such session %s in %s", arg, root)}
	}
	return "", &ExitError{Code: ExitFailed, Msg: err.Error()}
}

// AbsCwd is the workspace a --cwd value names: the current directory
// when it is empty, made absolute (a usage error when it cannot be).
func AbsCwd(cwd string) (string, error) {
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return "", &ExitError{Code: ExitUsage, Msg: "--cwd: " + err.Error()}
	}
	return abs, nil
}

// PickSession settles which session `reins run` or the interactive reins
// continues and where it runs: --continue is the workspace's last active session (session.LastActive); --resume
// takes any unique id prefix and runs in the session's recorded
// workspace unless --cwd says otherwise. It rewrites f.Resume to the full
// id and f.Cwd to the workspace.
func PickSession(f *OpenFlags) error {
	if f.Continue && f.Resume != "" {
		return &ExitError{Code: ExitUsage, Msg: "--continue and --resume: give one"}
	}
	root := SessionsRoot()
	if f.Continue {
		abs, err := AbsCwd(f.Cwd)
		if err != nil {
			return err
		}
		infos, err := session.Scan(root)
		if err != nil {
			return &ExitError{Code: ExitFailed, Msg: err.Error()}
		}
		if id := session.LastActive(root, infos, abs); id != "" {
			f.Resume = id
			return nil
		}
		return &ExitError{Code: ExitUsage, Msg: fmt.Sprintf("--continue: no session with a turn in %s yet (see reins log --all)", trust.Quote(abs))}
	}
	if f.Resume == "" {
		return nil
	}
	id, err := ResolveSession(root, f.Resume)
	if err != nil {
		var ee *ExitError
		if errors.As(err, &ee) && ee.Code == ExitUsage {
			ee.Msg = "--resume " + f.Resume + ": " + ee.Msg
		}
		return err
	}
	f.Resume = id
	if f.Cwd == "" {
		ld, err := session.Load(filepath.Join(root, id, session.FileName))
		if err != nil {
			return &ExitError{Code: ExitFailed, Msg: err.Error()}
		}
		if fi, err := os.Stat(ld.Header.Cwd); err != nil || !fi.IsDir() {
			return &ExitError{Code: ExitUsage, Msg: fmt.Sprintf("--resume %s: the session's workspace %s is gone; pass --cwd DIR", id, trust.Quote(ld.Header.Cwd))}
		}
		f.Cwd = ld.Header.Cwd
	}
	return nil
}
