package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestOneCommandTree: a command line naming a command first builds that
// command alone (newRoot's commands), and every command and subcommand
// built so says in its help, and in its error for a bad flag, exactly
// what it says in the whole tree.
func TestOneCommandTree(t *testing.T) {
	full := newRoot(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	run := func(args ...string) (lazy, whole string, subs int) {
		t.Helper()
		var lo, le, wo, we bytes.Buffer
		l := newRoot(strings.NewReader(""), &lo, &le, args...)
		l.SetArgs(args)
		lerr := l.Execute()
		w := newRoot(strings.NewReader(""), &wo, &we)
		w.SetArgs(args)
		werr := w.Execute()
		if (lerr == nil) != (werr == nil) || lerr != nil && lerr.Error() != werr.Error() {
			t.Errorf("%q: error %v alone, %v in the tree", args, lerr, werr)
		}
		return lo.String() + le.String(), wo.String() + we.String(), len(l.Commands())
	}
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			// Forwarders (reins-extra's commands, worker) exec their
			// helper, which would replace this test.
			if sub.Hidden || sub.DisableFlagParsing || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			p := append(append([]string(nil), path...), sub.Name())
			for _, tail := range [][]string{{"--help"}, {"--no-such-flag"}} {
				lazy, whole, _ := run(append(append([]string(nil), p...), tail...)...)
				if lazy != whole {
					t.Errorf("%q alone says\n%s\nand in the tree\n%s", append(p, tail...), lazy, whole)
				}
			}
			walk(sub, p)
		}
	}
	walk(full, nil)
	// Alone means alone: the root holds the named command and none of
	// the others (reins-extra's stubs, help and completion cost nothing).
	for _, c := range commands {
		root := newRoot(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, c.name, "--help")
		var built []string
		for _, sub := range root.Commands() {
			for _, o := range commands {
				if sub.Name() == o.name {
					built = append(built, o.name)
				}
			}
		}
		if len(built) != 1 || built[0] != c.name {
			t.Errorf("reins %s --help built %q", c.name, built)
		}
	}
	if n := len(newRoot(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, "--help").Commands()); n < len(commands) {
		t.Errorf("reins --help built %d commands, want every one", n)
	}
}
