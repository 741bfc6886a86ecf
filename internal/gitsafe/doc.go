// Package gitsafe finds the repository control folders of a workspace and
// makes a repository that a confined process created safe for a trusted
// git to touch: git runs what a repository's control folder names (hooks,
// core.fsmonitor, filter drivers, a commondir or alternates pointing at
// another folder's config), so a `.git` written by a confined process is
// code that would run outside the sandbox. The sandbox binds the existing
// ones read-only (internal/sandbox) and sweeps a new one with Sanitize.
package gitsafe
