// Package protect names the paths inside a workspace that no confined
// process and no file tool may change: the places where code planted by a
// hostile model would run later, outside any sandbox (git hooks and git
// config, reins's and other agents' project folders, an MCP server list,
// editor settings that run tasks, direnv's .envrc, and — when the
// workspace is the home directory — the user's shell and tool
// configuration). Every repository control folder (.git) is protected
// too, at any depth (IsGit); the sandbox binds those it finds read-only.
//
// It is a leaf: the sandbox makes these read-only for every process it
// starts, and the write and edit tools refuse them, from this one list.
package protect

import (
	"path/filepath"
	"strings"
)

// Builtin are the protected paths every workspace has, relative to the
// workspace root. Config sandbox.protect adds to them. Each is something a
// trusted program reads later and obeys: git's hooks and config, the
// project folders of reins and the other agents (settings, hooks, MCP
// servers, skills, commands), an MCP server list, the editors' workspace
// settings (VS Code's tasks.json runs on folder open; JetBrains' run
// configurations), .gitmodules (submodule URLs and update commands) and
// direnv's .envrc (run by the user's shell on cd).
var Builtin = []string{
	".git/hooks",
	".git/config",
	".reins",
	".claude",
	".mcp.json",
	".agents",
	".vscode",
	".idea",
	".gitmodules",
	".envrc",
	".codex",
	".gemini",
}

// HomeFiles are the user's own configuration below the home directory
// that a shell, git, a package manager, an editor or another agent reads
// and runs code from: protected when the workspace is the home directory
// or holds it (reins run from ~ or /home). ~/bin and ~/.local/bin are on
// the PATH of most shells' profiles: a program planted there shadows git.
// Credential files among them (.ssh, .npmrc, .pypirc, .gnupg's keys) are
// also hidden by the sandbox.
var HomeFiles = []string{
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".config/fish",
	".inputrc", ".pam_environment", ".xprofile", ".xsessionrc", ".xinitrc",
	".config/environment.d", ".config/autostart", ".config/systemd",
	".gitconfig", ".config/git", ".ssh", ".gnupg",
	".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc", ".config/pip", ".pip",
	".cargo/config.toml", ".cargo/config", ".docker",
	".vimrc", ".vim", ".config/nvim", ".emacs", ".emacs.d", ".tmux.conf", ".config/tmux",
	".curlrc", ".wgetrc",
	".claude.json", ".config/opencode",
	"bin", ".local/bin",
}

// List is a workspace's protected paths: the built-in ones and the extra
// ones the config names, each relative to the workspace and cleaned.
func List(extra []string) []string {
	out := make([]string, 0, len(Builtin)+len(extra))
	out = append(out, Builtin...)
	for _, e := range extra {
		e = filepath.Clean(filepath.FromSlash(e))
		if e == "." || e == "" || filepath.IsAbs(e) || e == ".." || strings.HasPrefix(e, ".."+string(filepath.Separator)) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// Workspace is the protected list of the workspace ws (absolute, with its
// symbolic links resolved): List(extra), plus HomeFiles relative to ws
// when home (resolved too; "" for none) is ws or lies inside it.
func Workspace(ws, home string, extra []string) []string {
	out := List(extra)
	if ws == "" || home == "" {
		return out
	}
	rel, err := filepath.Rel(ws, home)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return out
	}
	for _, f := range HomeFiles {
		out = append(out, filepath.Join(rel, filepath.FromSlash(f)))
	}
	if rel != "." {
		// The agents' folders of the home directory, which the root's
		// list names only for the workspace itself.
		for _, f := range Builtin {
			if !strings.HasPrefix(f, ".git") {
				out = append(out, filepath.Join(rel, f))
			}
		}
	}
	return out
}

// IsGit reports whether rel, a path relative to the workspace root, lies
// in a repository control folder: any component named .git (in any case,
// for a case-insensitive file system). A file tool refuses it unless the
// configuration makes .git writable (sandbox.git: writable).
func IsGit(rel string) bool {
	for _, c := range strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/") {
		if strings.EqualFold(c, ".git") {
			return true
		}
	}
	return false
}

// Match reports which protected path covers rel, a path relative to the
// workspace root (cleaned, not leaving it), or "" when none does. A
// protected path covers itself and everything below it. The comparison
// ignores case on the first component's ".git" so that a case-insensitive
// file system cannot be used to get around it.
func Match(rel string, list []string) string {
	rel = filepath.Clean(filepath.FromSlash(rel))
	for _, p := range list {
		if within(p, rel) {
			return p
		}
	}
	return ""
}

func within(root, p string) bool {
	root, p = strings.ToLower(root), strings.ToLower(p)
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}
