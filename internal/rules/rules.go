// Package rules is reins's permission rules: config and agent-file
// `permissions: {allow: [...], deny: [...]}` (docs/config.md), and the
// rules the interactive terminal adds when a question is answered
// "always allow this". A rule names a tool, optionally with a pattern of
// its argument:
//
//	mcp__github__*       any call of a tool whose name matches the glob
//	bash(go test:*)      a bash command that is `go test` or starts with `go test `
//	bash(make lint)      exactly that bash command
//	write(docs/**)       a write whose path matches the glob (** crosses /)
//	edit(src/*.go)       likewise edit and multi_edit
//
// Deny beats allow beats asking (tool.Registry.Run asks Decide before the
// approval hook). Claude Code's spellings read as-is: `Bash(...)`,
// `Write(...)`, `Edit(...)`, `Read(...)` name reins's tools.
//
// Matching a shell command is textual, so the two lists are read in the
// safe direction each: an allow prefix rule never matches a command that
// chains, substitutes or redirects (`;`, `&`, `|`, `<`, `>`, backquote,
// `$(`, a new line) — such a command asks; a deny rule matches any part of
// such a command. A deny rule on bash is still best effort (`sh -c` hides
// a command from it): the sandbox is the wall, a rule spares questions.
package rules

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/netproxy"
)

// Verdict is what the rules say of a call before anyone is asked.
type Verdict string

const (
	// VerdictAsk: no rule names the call; the approval hook decides.
	VerdictAsk Verdict = ""
	// VerdictAllow: an allow rule names it; it runs without a question
	// (the permission mode stays the ceiling).
	VerdictAllow Verdict = "allow"
	// VerdictDeny: a deny rule names it; it is refused with an error
	// result, whatever the mode or the approval hook would say.
	VerdictDeny Verdict = "deny"
)

// Matcher matches a slash path against a path glob. It is the glob
// tool's matcher (tool.MatchPath), passed in so that this package stays a
// leaf that config can link to check rules as it reads them.
type Matcher func(pattern, name string) (bool, error)

// List is the rules as written in one place: a config layer's or an
// agent file's `permissions:`.
type List struct {
	Allow []string
	Deny  []string
}

// Empty reports whether l has no rule.
func (l List) Empty() bool { return len(l.Allow) == 0 && len(l.Deny) == 0 }

// kind is what a rule's argument pattern matches.
type kind int

const (
	kindTool   kind = iota // no argument pattern: the tool name glob alone
	kindPrefix             // bash(PREFIX:*)
	kindExact              // bash(COMMAND)
	kindPath               // write(GLOB) and the other path tools
	kindFile               // write(PATH) as "always allow" adds it: the path literally
	kindDomain             // webfetch(domain:HOST), HOST exact or *.suffix (netproxy.Allowed)
)

// Rule is one parsed rule.
type Rule struct {
	text string // as written (or as reins wrote it)
	tool string // a glob for kindTool, a tool name otherwise
	kind kind
	arg  string // the prefix, the command, the path glob or the path
}

// String is the rule as written.
func (r Rule) String() string { return r.text }

// pathTools are the tools whose rules take a path glob, by the argument
// that names the path. edit rules cover multi_edit too (Claude Code's
// Edit covers every file-changing tool).
var pathTools = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return map[string]bool{"write": true, "edit": true, "multi_edit": true, "read": true, "ls": true, "grep": true, "glob": true}
}}

// claudeNames maps Claude Code's tool names to reins's.
var claudeNames = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		"Bash": "bash", "Write": "write", "Edit": "edit", "MultiEdit": "multi_edit",
		"Read": "read", "Grep": "grep", "Glob": "glob", "LS": "ls", "WebFetch": "webfetch",
	}
}}

// ErrSyntax is a malformed rule.
var ErrSyntax = errors.New("malformed permission rule")

// Parse reads one rule.
func Parse(s string) (Rule, error) {
	text := strings.TrimSpace(s)
	r := Rule{text: text}
	name, arg, hasArg := strings.Cut(text, "(")
	name = strings.TrimSpace(name)
	if n, ok := claudeNames.Get()[name]; ok {
		name = n
	}
	if name == "" || strings.ContainsAny(name, " \t/()") {
		return r, fmt.Errorf("%w %q: want TOOL or TOOL(PATTERN), such as bash(go test:*) or write(docs/**)", ErrSyntax, s)
	}
	if _, err := path.Match(name, ""); err != nil {
		return r, fmt.Errorf("%w %q: a bad tool name pattern", ErrSyntax, s)
	}
	r.tool = name
	if !hasArg {
		return r, nil
	}
	arg, ok := strings.CutSuffix(arg, ")")
	if !ok || strings.TrimSpace(arg) == "" {
		return r, fmt.Errorf("%w %q: want TOOL(PATTERN) with a pattern and a closing parenthesis", ErrSyntax, s)
	}
	switch {
	case name == "bash":
		if p, ok := strings.CutSuffix(arg, ":*"); ok {
			r.kind, r.arg = kindPrefix, strings.TrimSpace(p)
			if r.arg == "" {
				r.kind = kindTool // bash(:*) is every command
			}
		} else {
			r.kind, r.arg = kindExact, strings.TrimSpace(arg)
		}
	case pathTools.Get()[name]:
		g := strings.TrimPrefix(filepath.ToSlash(strings.TrimSpace(arg)), "./")
		if err := checkGlob(g); err != nil {
			return r, fmt.Errorf("%w %q: a bad path glob", ErrSyntax, s)
		}
		r.kind, r.arg = kindPath, g
	case name == "webfetch":
		h, ok := strings.CutPrefix(strings.TrimSpace(arg), "domain:")
		h = strings.ToLower(strings.TrimSpace(h))
		if !ok || h == "" || strings.ContainsAny(h, " \t/:") {
			return r, fmt.Errorf("%w %q: want webfetch(domain:HOST), such as webfetch(domain:go.dev) or webfetch(domain:*.github.com)", ErrSyntax, s)
		}
		r.kind, r.arg = kindDomain, h
	default:
		return r, fmt.Errorf("%w %q: a pattern in parentheses is for bash (a command) and the file tools (a path); name other tools alone, such as mcp__github__*", ErrSyntax, s)
	}
	return r, nil
}

// ParseList parses every rule of l.
func ParseList(l List) (allow, deny []Rule, err error) {
	var errs []error
	for _, s := range l.Allow {
		r, err := Parse(s)
		errs = append(errs, err)
		allow = append(allow, r)
	}
	for _, s := range l.Deny {
		r, err := Parse(s)
		errs = append(errs, err)
		deny = append(deny, r)
	}
	return allow, deny, errors.Join(errs...)
}

// Set is a session's rules: its own and its parent's (a child is held by
// its parent's rules too), plus the ones added while it runs.
type Set struct {
	parent    *Set
	workspace string
	match     Matcher

	mu          sync.Mutex
	allow, deny []Rule

	// allowOff holds the allow rules back (the terminal's read-only
	// mode: nothing beyond reading runs, whatever a rule says).
	allowOff atomic.Bool
}

// New returns the rules of a session in workspace (absolute; absolute
// paths in calls are matched relative to it) from lists, under parent
// (nil for a root session). match matches path globs (nil: the parent's;
// with neither, a path glob matches nothing).
func New(parent *Set, workspace string, match Matcher, lists ...List) (*Set, error) {
	if match == nil && parent != nil {
		match = parent.match
	}
	s := &Set{parent: parent, workspace: workspace, match: match}
	var errs []error
	for _, l := range lists {
		a, d, err := ParseList(l)
		errs = append(errs, err)
		s.allow = append(s.allow, a...)
		s.deny = append(s.deny, d...)
	}
	return s, errors.Join(errs...)
}

// Add adds an allow rule for the rest of the session.
func (s *Set) Add(r Rule) {
	s.mu.Lock()
	s.allow = append(s.allow, r)
	s.mu.Unlock()
}

// HoldAllow holds every allow rule back (on) or lets them apply again.
func (s *Set) HoldAllow(on bool) { s.allowOff.Store(on) }

// Decide is tool.Rules: deny (this set's or an ancestor's) beats allow
// beats asking.
func (s *Set) Decide(name string, args json.RawMessage) (Verdict, string) {
	c := s.call(name, args)
	for t := s; t != nil; t = t.parent {
		if r, ok := t.first(c, true); ok {
			return VerdictDeny, r.text
		}
	}
	for t := s; t != nil; t = t.parent {
		if t.allowOff.Load() {
			return VerdictAsk, ""
		}
	}
	for t := s; t != nil; t = t.parent {
		if r, ok := t.first(c, false); ok {
			return VerdictAllow, r.text
		}
	}
	return VerdictAsk, ""
}

func (s *Set) first(c call, deny bool) (Rule, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.allow
	if deny {
		list = s.deny
	}
	for _, r := range list {
		if r.matches(c, deny, s.match) {
			return r, true
		}
	}
	return Rule{}, false
}

// call is what rules look at of a tool call.
type call struct {
	name    string
	command string // bash
	hasCmd  bool
	path    string // the path tools: slash, cleaned, workspace-relative when inside it
	abs     string // the same path, absolute
	hasPath bool
	host    string // webfetch: the URL's host, lower case
}

func (s *Set) call(name string, args json.RawMessage) call {
	c := call{name: name}
	var a struct {
		Command *string `json:"command"`
		Path    *string `json:"path"`
		URL     *string `json:"url"`
	}
	if json.Unmarshal(args, &a) != nil {
		return c
	}
	if a.Command != nil {
		c.command, c.hasCmd = *a.Command, true
	}
	if name == "webfetch" && a.URL != nil {
		if u, err := url.Parse(strings.TrimSpace(*a.URL)); err == nil {
			c.host = strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
		}
	}
	p := "."
	if a.Path != nil {
		p = *a.Path
	}
	if pathTools.Get()[name] && (a.Path != nil || name == "grep" || name == "glob" || name == "ls") {
		c.hasPath = true
		c.path, c.abs = normPath(s.workspace, p)
	}
	return c
}

// normPath is p relative to workspace when it is inside it (slash,
// cleaned), and absolute.
func normPath(workspace, p string) (rel, abs string) {
	p = filepath.Clean(p)
	if filepath.IsAbs(p) {
		abs = p
	} else {
		abs = filepath.Join(workspace, p)
	}
	if workspace == "" && !filepath.IsAbs(p) {
		return filepath.ToSlash(p), abs
	}
	r, err := filepath.Rel(workspace, abs)
	if err != nil {
		return filepath.ToSlash(abs), abs
	}
	return filepath.ToSlash(r), abs
}

// matches reports whether r names c; deny says which list r is in (the
// safe reading of a shell command differs, see the package doc).
func (r Rule) matches(c call, deny bool, match Matcher) bool {
	switch r.kind {
	case kindTool:
		ok, _ := path.Match(r.tool, c.name)
		return ok
	case kindPrefix, kindExact:
		if c.name != "bash" || !c.hasCmd {
			return false
		}
		if deny {
			for _, part := range commandParts(c.command) {
				if r.commandMatches(part) {
					return true
				}
			}
			return false
		}
		if r.kind == kindExact {
			return strings.TrimSpace(c.command) == r.arg
		}
		return !chained(c.command) && r.commandMatches(strings.TrimSpace(c.command))
	case kindDomain:
		return c.name == "webfetch" && c.host != "" && netproxy.Allowed(c.host, []string{r.arg})
	case kindPath, kindFile:
		if !c.hasPath || !(c.name == r.tool || r.tool == "edit" && c.name == "multi_edit") {
			return false
		}
		if r.kind == kindFile {
			return c.path == r.arg
		}
		name := c.path
		if strings.HasPrefix(r.arg, "/") {
			name = filepath.ToSlash(c.abs)
		} else if !deny && (name == ".." || strings.HasPrefix(name, "../")) {
			return false // an allow glob never reaches outside the workspace
		}
		if match == nil {
			return false
		}
		ok, _ := match(r.arg, name)
		return ok
	}
	return false
}

// commandMatches matches one simple command against a bash rule.
func (r Rule) commandMatches(cmd string) bool {
	if r.kind == kindExact {
		return cmd == r.arg
	}
	return cmd == r.arg || strings.HasPrefix(cmd, r.arg+" ") || strings.HasPrefix(cmd, r.arg+"\t")
}

// chainChars are what make a command more than one simple command: an
// allow prefix rule never matches a command holding one.
const chainChars = ";&|<>`\n\r"

func chained(cmd string) bool {
	return strings.ContainsAny(cmd, chainChars) || strings.Contains(cmd, "$(")
}

// commandParts are the simple commands a deny rule looks at: the
// command split at every operator, substitution and parenthesis, each
// with runs of blanks made one and leading VAR=value words and a leading
// sudo/env/exec/command dropped.
func commandParts(cmd string) []string {
	f := func(r rune) bool { return strings.ContainsRune(chainChars+"()$", r) }
	var out []string
	for _, p := range strings.FieldsFunc(cmd, f) {
		words := strings.Fields(p)
		for len(words) > 0 && (strings.Contains(words[0], "=") || words[0] == "sudo" || words[0] == "env" || words[0] == "exec" || words[0] == "command") {
			words = words[1:]
		}
		if len(words) > 0 {
			out = append(out, strings.Join(words, " "))
		}
	}
	return out
}

// Narrowest is the rule "always allow this" adds for a call: the exact
// bash command, the exact path of a file tool, else the tool's name.
// Its String is what the screen says was added.
func Narrowest(workspace, name string, args json.RawMessage) Rule {
	s := &Set{workspace: workspace}
	c := s.call(name, args)
	switch {
	case name == "bash" && c.hasCmd && strings.TrimSpace(c.command) != "":
		cmd := strings.TrimSpace(c.command)
		return Rule{text: "bash(" + cmd + ")", tool: "bash", kind: kindExact, arg: cmd}
	case pathTools.Get()[name] && c.hasPath:
		return Rule{text: name + "(" + c.path + ")", tool: name, kind: kindFile, arg: c.path}
	case name == "webfetch" && c.host != "" && !strings.ContainsAny(c.host, " \t/:*"):
		return Rule{text: "webfetch(domain:" + c.host + ")", tool: name, kind: kindDomain, arg: c.host}
	}
	return Rule{text: name, tool: escapeGlob(name), kind: kindTool}
}

// escapeGlob makes a tool name match only itself as a name glob.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// checkGlob checks a path glob's syntax without matching anything: its
// braces pair up and each segment, braces aside, is a valid path.Match
// pattern (the glob tool's syntax).
func checkGlob(g string) error {
	depth := 0
	for _, r := range g {
		switch r {
		case '{':
			depth++
		case '}':
			depth--
			if depth < 0 {
				return ErrSyntax
			}
		}
	}
	if depth != 0 {
		return ErrSyntax
	}
	plain := strings.NewReplacer("{", "", "}", "", ",", "").Replace(g)
	for _, seg := range strings.Split(plain, "/") {
		if _, err := path.Match(seg, ""); err != nil {
			return ErrSyntax
		}
	}
	return nil
}
