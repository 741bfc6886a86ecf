package main

import "github.com/reinsdev/reins/internal/cli"

// sessionsRoot is $REINS_HOME/sessions (cli.SessionsRoot).
func sessionsRoot() string { return cli.SessionsRoot() }

// resolveSessionArg turns a session id, a unique prefix of one, or a
// child id into the full session id (cli.ResolveSession: exit 2 for an
// argument that names no session or several, 1 for an unreadable
// sessions directory).
func resolveSessionArg(root, arg string) (string, error) { return cli.ResolveSession(root, arg) }

// sessionFlags are the flags of every command that runs sessions
// (cli.SessionFlags).
type sessionFlags = cli.SessionFlags
