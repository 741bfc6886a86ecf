// Package hooks runs the user's hooks in Claude Code's format
// (docs/hooks.md): the `hooks` object of ~/.claude/settings.json, of a
// trusted project's .claude/settings.json and .claude/settings.local.json,
// and of reins config `hooks:`. Hook commands get Claude Code's JSON on
// stdin, in Claude Code's vocabulary (tool names and argument names), and
// their exit code and JSON output decide as they do there — except that a
// hook's "allow" never lifts the permission mode, the sandbox or a
// protected path. Hooks run confined by default: they typically run
// workspace scripts the model can edit.
package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/reinsdev/reins/internal/lazy"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/reinsdev/reins/internal/trust"
)

// Event is a hook event, spelled as Claude Code spells it.
type Event string

const (
	PreToolUse       Event = "PreToolUse"
	PostToolUse      Event = "PostToolUse"
	UserPromptSubmit Event = "UserPromptSubmit"
	Stop             Event = "Stop"
	SubagentStop     Event = "SubagentStop"
	SessionStart     Event = "SessionStart"
	SessionEnd       Event = "SessionEnd"
	PreCompact       Event = "PreCompact"
	Notification     Event = "Notification"
)

// Events are the events reins runs hooks for, in the order docs/hooks.md
// lists them.
var Events = []Event{PreToolUse, PostToolUse, UserPromptSubmit, Stop, SubagentStop, SessionStart, SessionEnd, PreCompact, Notification}

// DefaultTimeout is a hook's timeout when it names none (Claude Code's);
// MaxTimeout bounds the one it names.
const (
	DefaultTimeout = 60 * time.Second
	MaxTimeout     = 10 * time.Minute
)

// Hook is one command hook.
type Hook struct {
	Event   Event
	Matcher string
	Command string
	Timeout time.Duration
	// Source is the file the hook was read from.
	Source string
	// User says the hook comes from the user's own files (their
	// ~/.claude/settings.json, their reins config or --config), not a
	// project's: only such a hook may run unconfined.
	User bool

	match func(string) bool
}

// Matches reports whether the hook's matcher matches name (a tool name,
// or the event's own match value: SessionStart's source, PreCompact's
// trigger, ...). Empty and "*" match all; a plain name (letters, digits,
// '_') matches exactly; anything else is a regular expression, unanchored
// as in Claude Code.
func (h Hook) Matches(name string) bool {
	if h.match == nil {
		return true
	}
	return h.match(name)
}

// plainName is a matcher Claude Code compares as a string.
var plainName = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_]+$`) }}

func compileMatcher(m string) (func(string) bool, error) {
	switch {
	case m == "" || m == "*":
		return nil, nil
	case plainName.Get().MatchString(m):
		return func(s string) bool { return s == m }, nil
	}
	re, err := regexp.Compile(m)
	if err != nil {
		return nil, err
	}
	return re.MatchString, nil
}

// Set is the hooks of one reins start, read once.
type Set struct {
	Hooks []Hook
	// Unconfined is config `hooks.unconfined: true` from the user's own
	// config: the user's hooks run outside the sandbox (a risk,
	// docs/hooks.md). Project hooks never do.
	Unconfined bool
	// Warnings are what was skipped while reading (a prompt or http hook,
	// an unknown event, a bad matcher), one line each, file names quoted.
	Warnings []string
}

// For returns the hooks of event whose matcher matches name, each
// command once (Claude Code runs identical commands once).
func (s *Set) For(event Event, name string) []Hook {
	if s == nil {
		return nil
	}
	var out []Hook
	for _, h := range s.Hooks {
		if h.Event != event || !h.Matches(name) {
			continue
		}
		if slices.ContainsFunc(out, func(o Hook) bool { return o.Command == h.Command && o.User == h.User }) {
			continue
		}
		out = append(out, h)
	}
	return out
}

// Has reports whether any hook is configured for event.
func (s *Set) Has(event Event) bool {
	return s != nil && slices.ContainsFunc(s.Hooks, func(h Hook) bool { return h.Event == event })
}

// ParseSettings reads the hooks of a Claude Code settings file (its other
// keys configure Claude Code, not reins). user says the file is the
// user's own. A file that is not a JSON object is an error; what is
// wrong inside the hooks object is skipped with a warning.
func ParseSettings(file string, data []byte, user bool) ([]Hook, []string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, nil, fmt.Errorf("%s: not a JSON object: %w", trust.Quote(file), err)
	}
	raw, ok := top["hooks"]
	if !ok {
		return nil, nil, nil
	}
	return ParseHooks(file, raw, user)
}

// ParseHooks reads a hooks object: {EVENT: [{matcher, hooks: [{type,
// command, timeout}]}]}. Keys that are not events (the caller's own, as
// config's `unconfined`) must be removed first.
func ParseHooks(file string, raw json.RawMessage, user bool) ([]Hook, []string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, nil, fmt.Errorf("%s: hooks: want an object of events", trust.Quote(file))
	}
	q := trust.Quote(file)
	var hooks []Hook
	var warns []string
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		ev := Event(name)
		if !slices.Contains(Events, ev) {
			warns = append(warns, fmt.Sprintf("%s: hooks: event %s is not one reins runs; skipped", q, trust.Quote(name)))
			continue
		}
		var groups []struct {
			Matcher *string           `json:"matcher"`
			Hooks   []json.RawMessage `json:"hooks"`
		}
		if err := json.Unmarshal(obj[name], &groups); err != nil {
			return nil, nil, fmt.Errorf("%s: hooks.%s: want a list of {matcher, hooks}", q, name)
		}
		for i, g := range groups {
			matcher := ""
			if g.Matcher != nil {
				matcher = *g.Matcher
			}
			match, err := compileMatcher(matcher)
			if err != nil {
				warns = append(warns, fmt.Sprintf("%s: hooks.%s[%d]: matcher %s is not a valid regular expression; its hooks never run", q, name, i, trust.Quote(matcher)))
				continue
			}
			for j, hr := range g.Hooks {
				var h struct {
					Type    string   `json:"type"`
					Command string   `json:"command"`
					Timeout *float64 `json:"timeout"`
				}
				if err := json.Unmarshal(hr, &h); err != nil {
					return nil, nil, fmt.Errorf("%s: hooks.%s[%d].hooks[%d]: want {type, command, timeout}", q, name, i, j)
				}
				switch h.Type {
				case "command":
				case "prompt", "http", "agent", "mcp_tool":
					warns = append(warns, fmt.Sprintf("%s: hooks.%s[%d].hooks[%d]: reins runs only command hooks; this %s hook is skipped", q, name, i, j, h.Type))
					continue
				default:
					warns = append(warns, fmt.Sprintf("%s: hooks.%s[%d].hooks[%d]: unknown hook type %s; skipped", q, name, i, j, trust.Quote(h.Type)))
					continue
				}
				if strings.TrimSpace(h.Command) == "" {
					warns = append(warns, fmt.Sprintf("%s: hooks.%s[%d].hooks[%d]: empty command; skipped", q, name, i, j))
					continue
				}
				to := DefaultTimeout
				if h.Timeout != nil && *h.Timeout > 0 {
					to = min(time.Duration(*h.Timeout*float64(time.Second)), MaxTimeout)
				}
				hooks = append(hooks, Hook{Event: ev, Matcher: matcher, Command: h.Command, Timeout: to, Source: file, User: user, match: match})
			}
		}
	}
	return hooks, warns, nil
}

// Project settings files, relative to the workspace.
const (
	ProjectSettings      = ".claude/settings.json"
	ProjectLocalSettings = ".claude/settings.local.json"
)

// LoadOptions say where the hooks of one reins start are.
type LoadOptions struct {
	// UserHome is the user's home: its .claude/settings.json is the
	// user's own. Empty skips it.
	UserHome string
	// Cwd is the workspace; its .claude settings are read only when
	// Trusted, and each only when Honour approves the bytes read (the
	// trust pins: trust.Gate.Honour).
	Cwd     string
	Trusted bool
	Honour  func(dir, rel string, content []byte) bool
	// Config are the `hooks:` objects of reins's config layers.
	Config []ConfigLayer
	// Unconfined is config hooks.unconfined from the user's own config.
	Unconfined bool
	// ReadFile reads a settings file (smallfile.Read in reins).
	ReadFile func(path string) ([]byte, error)
}

// ConfigLayer is the `hooks:` object of one reins config file (JSON of
// the YAML, without `unconfined`). User says the file is the user's own.
type ConfigLayer struct {
	File  string
	User  bool
	Hooks json.RawMessage
}

// Load reads every hook of one reins start. A missing file is no hooks;
// a file that cannot be parsed is an error (the user's guard must not
// vanish silently); a project file Honour refuses is not used (the
// caller stops on the gate's error).
func Load(o LoadOptions) (*Set, error) {
	s := &Set{Unconfined: o.Unconfined}
	add := func(file string, data []byte, user bool) error {
		hs, ws, err := ParseSettings(file, data, user)
		if err != nil {
			return err
		}
		s.Hooks, s.Warnings = append(s.Hooks, hs...), append(s.Warnings, ws...)
		return nil
	}
	if o.UserHome != "" {
		p := filepath.Join(o.UserHome, ".claude", "settings.json")
		if data, err := o.ReadFile(p); err == nil {
			if err := add(p, data, true); err != nil {
				return nil, err
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("reading %s: %w", trust.Quote(p), err)
		}
	}
	if o.Cwd != "" && o.Trusted && !sameDir(o.Cwd, o.UserHome) {
		for _, rel := range []string{ProjectSettings, ProjectLocalSettings} {
			p := filepath.Join(o.Cwd, rel)
			data, err := o.ReadFile(p)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				return nil, fmt.Errorf("reading %s: %w", trust.Quote(p), err)
			}
			if o.Honour != nil && !o.Honour(o.Cwd, filepath.FromSlash(rel), data) {
				continue
			}
			if err := add(p, data, false); err != nil {
				return nil, err
			}
		}
	}
	for _, l := range o.Config {
		hs, ws, err := ParseHooks(l.File, l.Hooks, l.User)
		if err != nil {
			return nil, err
		}
		s.Hooks, s.Warnings = append(s.Hooks, hs...), append(s.Warnings, ws...)
	}
	return s, nil
}

// sameDir reports whether a and b are one folder: the workspace that is
// the user's home holds the user's own settings, read once as theirs.
func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}
