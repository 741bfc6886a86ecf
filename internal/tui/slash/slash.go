// Package slash is a table of slash commands: the line that names one
// run with its argument, refused while a turn runs when it changes the
// session, the list /help shows and what Tab completes a name to. The
// commands themselves are the screen's (S).
package slash

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tui/pick"
	"github.com/reinsdev/reins/internal/tui/termtext"
)

// Command is one slash command of screen S.
type Command[S any] struct {
	Name, Args, Help string
	// Idle: refused while a turn runs (it changes the session).
	Idle bool
	Run  func(s S, arg string) tea.Cmd
}

// Set is the commands, in the order /help lists them.
type Set[S any] []Command[S]

// Run runs the command line (its leading / included) names on s; say is
// what the screen says instead when there is no such command or it waits
// for the turn to end.
func (set Set[S]) Run(s S, line string, running bool) (cmd tea.Cmd, say string) {
	name, arg, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	arg = strings.TrimSpace(arg)
	for _, c := range set {
		if c.Name != name {
			continue
		}
		if c.Idle && running {
			return nil, fmt.Sprintf("/%s: a turn is running; wait for it or press Esc", c.Name)
		}
		return c.Run(s, arg), ""
	}
	return nil, fmt.Sprintf("unknown command /%s (see /help)", termsafe.EscapeLine(termtext.Cut(name, 40)))
}

// Help is the list /help shows: one line per command, its arguments and
// what it does.
func (set Set[S]) Help() string {
	var b strings.Builder
	for _, c := range set {
		name := "/" + c.Name
		if c.Args != "" {
			name += " " + c.Args
		}
		fmt.Fprintf(&b, "  %-12s %s\n", name, c.Help)
	}
	return b.String()
}

// Tab completes the command being typed (v, the editor's text): value
// is the editor's new text ("" leaves it), the one command the prefix
// names or the common prefix of several; notice lists several or says
// there is none. extra are further names (custom commands, skills),
// after the set's.
func (set Set[S]) Tab(v string, extra ...string) (value, notice string) {
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \n") {
		return "", ""
	}
	var names []string
	for _, c := range set {
		if strings.HasPrefix("/"+c.Name, v) {
			names = append(names, "/"+c.Name)
		}
	}
	for _, n := range extra {
		if strings.HasPrefix("/"+n, v) && !slices.Contains(names, "/"+n) {
			names = append(names, "/"+termsafe.EscapeLine(n))
		}
	}
	switch len(names) {
	case 0:
		return "", "no command starts with " + termsafe.EscapeLine(termtext.Cut(v, 40))
	case 1:
		return names[0] + " ", ""
	}
	return pick.CommonPrefix(names), strings.Join(names, "  ")
}
