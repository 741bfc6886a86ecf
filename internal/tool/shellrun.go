package tool

import (
	"context"
	"maps"
	"time"
)

// RunShell runs command with bash -c as the bash tool would, confined by
// env (its mode, network and scrubbed environment), with params as its
// positional parameters ($1, $2, ...) and vars added to its environment:
// text typed by a user reaches the command as data, never as shell text
// (a custom command's inline !`...`, docs/commands.md). The output is
// capped at outCap (DefaultOutputCap when 0).
func RunShell(ctx context.Context, env *Env, command string, params []string, vars map[string]string, timeout time.Duration, outCap int) Result {
	dir, err := env.Resolve("")
	if err != nil {
		return Errorf("%v", err)
	}
	pol := env.Policy()
	set := maps.Clone(pol.Env.Set)
	if set == nil {
		set = map[string]string{}
	}
	maps.Copy(set, vars)
	pol.Env.Set = set
	if params == nil {
		params = []string{}
	}
	res, _ := runBashOnce(ctx, pol, dir, command, timeout, outCap, append([]string{}, params...)...)
	return res
}
