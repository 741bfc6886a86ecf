package commands

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Files in Claude Code's layout: a/b.md is /a:b and /b, shown
// "(project:a)"; the user's own command wins a clash; an untrusted
// project's files are not read; a bad file is one warning naming it.
func TestDiscover(t *testing.T) {
	home, user, ws := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, ws, map[string]string{
		".claude/commands/frontend/component.md": "---\ndescription: make a component\nargument-hint: [name]\n---\nMake $1",
		".claude/commands/backend/component.md":  "Other component",
		".claude/commands/review.md":             "---\ndescription: the project's review\n---\nreview",
		".reins/commands/plain.md":               "Plain body, no front matter",
		".reins/commands/bad.md":                 "---\nargument-hint: {a: 1}\n---\n",
		".reins/commands/notes.txt":              "not a command",
	})
	write(t, user, map[string]string{".claude/commands/review.md": "---\ndescription: the user's review\nallowed-tools: Read, Grep\nmodel: haiku\n---\nreview $ARGUMENTS"})
	var honoured []string
	o := Options{Cwd: ws, Home: home, UserHome: user, Trusted: func(string) bool { return true },
		Honour: func(_, rel string, _ []byte) bool { honoured = append(honoured, rel); return true }}
	set, warns := Discover(o)
	var names []string
	for _, c := range set.List() {
		names = append(names, c.FullName()+c.Label())
	}
	if got := strings.Join(names, " "); got != "backend:component(project:backend) frontend:component(project:frontend) plain(project) review(user)" {
		t.Errorf("commands: %s", got)
	}
	if len(warns) != 1 || !strings.HasSuffix(warns[0].File, "bad.md") {
		t.Errorf("warnings %v", warns)
	}
	if c, ok := set.Get("frontend:component"); !ok || c.ArgumentHint != "[name]" || c.Description != "make a component" {
		t.Errorf("frontend:component %+v", c)
	}
	if _, ok := set.Get("component"); ok {
		t.Error("/component answers although two folders define it")
	}
	if c, ok := set.Get("review"); !ok || c.Origin != OriginUser || strings.Join(c.AllowedTools, ",") != "read,grep" || c.Model != "haiku" {
		t.Errorf("review %+v", c)
	}
	if !strings.Contains(strings.Join(honoured, " "), ".claude/commands/frontend/component.md") {
		t.Errorf("project files were not checked against the pins: %v", honoured)
	}
	// One namespaced command answers to its short name.
	os.Remove(filepath.Join(ws, ".claude/commands/backend/component.md"))
	set, _ = Discover(o)
	if c, ok := set.Get("component"); !ok || c.Namespace != "frontend" {
		t.Errorf("/component: %+v", c)
	}
	// Refused by the pins, or untrusted: not there.
	o.Honour = func(_, rel string, _ []byte) bool { return !strings.HasSuffix(rel, "plain.md") }
	if set, _ = Discover(o); func() bool { _, ok := set.Get("plain"); return ok }() {
		t.Error("a command the pins refused is used")
	}
	o.Trusted = func(string) bool { return false }
	if set, _ = Discover(o); len(set.List()) != 1 {
		t.Errorf("untrusted: %d commands", len(set.List()))
	}
}

func TestExpand(t *testing.T) {
	type call struct {
		command   string
		params    []string
		arguments string
	}
	for _, tc := range []struct {
		name, body, args, want string
		calls                  []call
	}{
		{"arguments", "Review $ARGUMENTS now", "a.go b.go", "Review a.go b.go now", nil},
		{"positional", "fix $1 in $2 ($3)", `"my file.go" 'x y'`, "fix my file.go in x y ()", nil},
		{"no placeholder", "Review.", "main.go", "Review.\n\nARGUMENTS: main.go", nil},
		{"no arguments", "Review $ARGUMENTS.", "", "Review .", nil},
		{"inline", "Diff: !`git diff $1`\nEnd $1", "main.go", "Diff: OUT\nEnd main.go", []call{{"git diff $1", []string{"main.go"}, "main.go"}}},
		// An argument is never shell text, and never an inline command.
		{"hostile", "Do $ARGUMENTS !`echo ok`", "!`rm -rf /` $(touch x)", "Do !`rm -rf /` $(touch x) OUT", []call{{"echo ok", []string{"!`rm", "-rf", "/`", "$(touch", "x)"}, "!`rm -rf /` $(touch x)"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls []call
			c := &Command{Body: tc.body}
			got := c.Expand(context.Background(), tc.args, func(_ context.Context, command string, params []string, arguments string) string {
				calls = append(calls, call{command, params, arguments})
				return "OUT"
			})
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if len(calls) != len(tc.calls) {
				t.Fatalf("calls %q", calls)
			}
			for i := range calls {
				if calls[i].command != tc.calls[i].command || strings.Join(calls[i].params, "|") != strings.Join(tc.calls[i].params, "|") || calls[i].arguments != tc.calls[i].arguments {
					t.Errorf("call %q, want %q", calls[i], tc.calls[i])
				}
			}
		})
	}
	many := &Command{Body: strings.Repeat("!`x` ", MaxInline+2)}
	n := 0
	out := many.Expand(context.Background(), "", func(context.Context, string, []string, string) string { n++; return "y" })
	if n != MaxInline || !strings.Contains(out, "not run") {
		t.Errorf("%d inline commands ran: %q", n, out)
	}
}

// A command file is bounded whatever it holds: a 1 MB body, 10,000 $1s
// or $ARGUMENTS with a long argument, many inline commands that each
// print their most: the prompt is at most MaxPrompt bytes, valid UTF-8,
// and says it was cut; a file over the read limit is skipped with a
// warning naming it.
func TestExpandBounded(t *testing.T) {
	long := strings.Repeat("é", 32<<10) // 64 KiB, the terminal's editor's most
	for _, tc := range []struct {
		name, body, args string
		cut              bool
	}{
		{"1 MB body", strings.Repeat("review this line\n", (1<<20)/17-10), "", false},
		{"1 MB body and arguments", strings.Repeat("review this line\n", (1<<20)/17-10), long, true},
		{"10,000 $1", strings.Repeat("$1 ", 10000), long, true},
		{"10,000 $ARGUMENTS", strings.Repeat("$ARGUMENTS", 10000), long, true},
		{"10,000 $9 unset", strings.Repeat("$9", 10000), "a", false},
		{"inline at their most", strings.Repeat("!`x`", MaxInline) + strings.Repeat("$1", 10000), long, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Command{Body: tc.body}
			out := c.Expand(context.Background(), tc.args, func(context.Context, string, []string, string) string {
				return strings.Repeat("o", MaxInlineOutput)
			})
			if len(out) > MaxPrompt+200 {
				t.Errorf("prompt of %d bytes, want at most %d and the note", len(out), MaxPrompt)
			}
			if !utf8.ValidString(out) {
				t.Error("the cut prompt is not valid UTF-8")
			}
			if got := strings.Contains(out, "[the command's prompt is cut"); got != tc.cut {
				t.Errorf("cut note %v, want %v (%d bytes)", got, tc.cut, len(out))
			}
		})
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{".reins/commands/huge.md": strings.Repeat("x", (1<<20)+1), ".reins/commands/ok.md": "fine"})
	set, warns := Discover(Options{Cwd: dir, Home: t.TempDir(), Trusted: func(string) bool { return true }, Honour: func(string, string, []byte) bool { return true }})
	if _, ok := set.Get("huge"); ok {
		t.Error("a command file over the limit was read")
	}
	if _, ok := set.Get("ok"); !ok || len(warns) != 1 || !strings.HasSuffix(warns[0].File, "huge.md") {
		t.Errorf("warnings %v", warns)
	}
}
