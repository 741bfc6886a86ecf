package config

import (
	"encoding/json"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// ClaudeSettings are the project's Claude Code settings files, relative
// to the workspace: reins reads their hooks (internal/hooks).
var ClaudeSettings = []string{".claude/settings.json", ".claude/settings.local.json"}

// HookLayer is the `hooks:` object of one config file, as JSON without
// its `unconfined` key: Claude Code's hooks object (docs/hooks.md).
// User says the file is the user's own (their config or --config).
type HookLayer struct {
	File  string
	User  bool
	Hooks json.RawMessage
}

// hooks decodes `hooks:`: Claude Code's hooks object, whose events and
// hooks internal/hooks checks, and `unconfined`, which only the user's
// own config may set (user).
func (d *decoder) hooks(n ast.Node, kp string, user bool) (json.RawMessage, *bool, error) {
	var unconf *bool
	events := map[string]any{}
	err := d.each(n, kp, "Claude Code's hooks object: {unconfined, PreToolUse: [{matcher, hooks: [{type: command, command, timeout}]}], ...}", func(k string, v ast.Node, p string, _ int) error {
		if k == "unconfined" {
			b, err := d.boolean(v, p)
			if err != nil {
				return err
			}
			if b != nil && *b && !user {
				return d.valueErr(d.resolve(v), p, "false (only your own config or --config may let hooks run unconfined)")
			}
			unconf = b
			return nil
		}
		var val any
		if err := yaml.NodeToValue(d.resolve(v), &val); err != nil {
			return d.valueErr(d.resolve(v), p, "a list of {matcher, hooks}")
		}
		events[k] = val
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	raw, err := json.Marshal(events)
	if err != nil {
		return nil, nil, d.valueErr(d.resolve(n), kp, "Claude Code's hooks object")
	}
	return raw, unconf, nil
}
