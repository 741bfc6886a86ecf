package tool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/reinsdev/reins/internal/protect"
	"github.com/reinsdev/reins/internal/wsfs"
)

// OutsideWorkspaceError is the refusal of a path that leaves the workspace
// in a mode that keeps tools inside it.
type OutsideWorkspaceError struct {
	// Path is the path as the model gave it.
	Path string
}

func (e *OutsideWorkspaceError) Error() string {
	return fmt.Sprintf("path %q is outside the workspace", e.Path)
}

// Resolve turns a model-given path into an absolute, cleaned path: relative
// paths are relative to the workspace, and "" is the workspace itself.
//
// In read-only and workspace-write modes the path must stay inside the
// workspace. The check is made on the real location, with the symlinks of
// every existing component resolved (a missing tail is taken as written), so
// neither "../", an absolute path, nor a symlink inside the workspace that
// points out of it (dangling or not) gets past it. full-access lifts the
// bound.
//
// The returned path is the lexical one, not the resolved one, so results
// can name files relative to the workspace as the model knows it.
func (env *Env) Resolve(path string) (string, error) {
	if env.Workspace == "" {
		return "", errors.New("no workspace directory is set")
	}
	ws := filepath.Clean(env.Workspace)
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(ws, abs)
	}
	abs = filepath.Clean(abs)
	if env.Permission == FullAccess {
		return abs, nil
	}
	realWS, err := wsfs.RealPath(ws)
	if err != nil {
		return "", fmt.Errorf("cannot resolve the workspace: %w", err)
	}
	real, err := wsfs.RealPath(abs)
	if err != nil {
		return "", fmt.Errorf("cannot resolve path %q: %w", path, err)
	}
	if !wsfs.Within(realWS, real) {
		return "", &OutsideWorkspaceError{Path: path}
	}
	return abs, nil
}

// files returns the workspace access of one call (wsfs): beneath an os.Root
// of the workspace in the modes that keep tools inside it, the plain os
// functions in full-access mode. Close it when the call is done.
func (env *Env) files() (*wsfs.FS, error) {
	if env.Workspace == "" {
		return nil, errors.New("no workspace directory is set")
	}
	f, err := wsfs.New(filepath.Clean(env.Workspace), env.Permission != FullAccess)
	if err != nil {
		return nil, errors.New("cannot open the workspace: " + osErr(err).Error())
	}
	return f, nil
}

// resolveFiles is Resolve and files: the absolute path of path and the
// workspace's file system to reach it through (the caller closes it).
func (env *Env) resolveFiles(path string) (string, *wsfs.FS, error) {
	abs, err := env.Resolve(path)
	if err != nil {
		return "", nil, err
	}
	fsy, err := env.files()
	return abs, fsy, err
}

// resolveRead is Resolve and files for a call that only reads: a path
// outside the workspace that lies in one of env.ReadRoots (a skill's
// folder) is read beneath that folder, with its symlinks resolved (a link
// in a skill's folder cannot lead the read anywhere else).
func (env *Env) resolveRead(path string) (string, *wsfs.FS, error) {
	abs, err := env.Resolve(path)
	if err == nil {
		fsy, err := env.files()
		return abs, fsy, err
	}
	var out *OutsideWorkspaceError
	if !errors.As(err, &out) || !filepath.IsAbs(path) {
		return "", nil, err
	}
	real, rerr := wsfs.RealPath(filepath.Clean(path))
	if rerr != nil {
		return "", nil, err
	}
	for _, root := range env.ReadRoots {
		realRoot, rerr := wsfs.RealPath(root)
		if rerr != nil || !wsfs.Within(realRoot, real) {
			continue
		}
		fsy, ferr := wsfs.New(realRoot, true)
		if ferr != nil {
			return "", nil, errors.New("cannot open the skill's folder: " + osErr(ferr).Error())
		}
		return real, fsy, nil
	}
	return "", nil, err
}

// display names abs for the model: relative to the workspace (with forward
// slashes) when inside it, absolute otherwise.
func (env *Env) display(abs string) string {
	rel, err := filepath.Rel(filepath.Clean(env.Workspace), abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return abs
	}
	return filepath.ToSlash(rel)
}

// ProtectedPathError is the refusal by write and edit of a path that the
// protected list covers (internal/protect: .git/hooks, .git/config,
// .reins, .claude, .mcp.json, .agents, .vscode, .idea, .gitmodules,
// .envrc, .codex, .gemini, the user's rc files when the workspace is the
// home directory, and config sandbox.protect), or that lies in a
// repository control folder (.git at any depth, unless config
// sandbox.git is writable): code planted there would run later, outside
// any sandbox.
type ProtectedPathError struct {
	// Path is the path as the model gave it; Protected the list entry that
	// covers it.
	Path, Protected string
}

func (e *ProtectedPathError) Error() string {
	return fmt.Sprintf("path %q is protected (%s is on the protected list; change it yourself outside reins)", e.Path, filepath.ToSlash(e.Protected))
}

// checkProtected refuses abs (the lexical path Resolve returned for the
// model's path) when a protected path covers it, as written or with its
// symlinks resolved (a link in the workspace to .git/hooks is no way
// around it). full-access is not confined and is not checked.
func (env *Env) checkProtected(path, abs string) error {
	if env.Permission == FullAccess {
		return nil
	}
	home, _ := os.UserHomeDir()
	ws := filepath.Clean(env.Workspace)
	type cand struct{ rel, ws, home string }
	cands := []cand{}
	if rel, err := filepath.Rel(ws, abs); err == nil {
		cands = append(cands, cand{rel, ws, home})
	}
	if realWS, err := wsfs.RealPath(ws); err == nil {
		if real, err := wsfs.RealPath(abs); err == nil {
			if rel, err := filepath.Rel(realWS, real); err == nil {
				realHome := ""
				if home != "" {
					realHome, _ = wsfs.RealPath(home)
				}
				cands = append(cands, cand{rel, realWS, realHome})
			}
		}
	}
	for _, c := range cands {
		if c.rel == ".." || strings.HasPrefix(c.rel, ".."+string(filepath.Separator)) {
			continue
		}
		if p := protect.Match(c.rel, protect.Workspace(c.ws, c.home, env.Protect)); p != "" {
			return &ProtectedPathError{Path: path, Protected: p}
		}
		if !env.Sandbox.GitWritable && protect.IsGit(c.rel) {
			return &ProtectedPathError{Path: path, Protected: ".git"}
		}
	}
	return nil
}
