package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/cli"
)

// TestCommandsAreTheTable: reins-extra has exactly the commands of
// cli.ExtraCommands, each with the table's Short, so that reins lists
// (and forwards) every one and nothing it cannot run.
func TestCommandsAreTheTable(t *testing.T) {
	root := newRoot(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	var got []string
	for _, c := range root.Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if c.Name() == "mcp" {
			// reins's own mcp forwards only serve here (cli.MCPServe).
			if subs := c.Commands(); len(subs) != 1 || subs[0].Name() != cli.MCPServe.Name || subs[0].Short != cli.MCPServe.Short {
				t.Errorf("reins-extra mcp holds %v, want only %s", subs, cli.MCPServe.Name)
			}
			continue
		}
		got = append(got, c.Name())
		if c.Short != cli.ExtraShort(c.Name()) {
			t.Errorf("%s: Short %q, the table says %q", c.Name(), c.Short, cli.ExtraShort(c.Name()))
		}
	}
	var want []string
	for _, c := range cli.ExtraCommands {
		want = append(want, c.Name)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("reins-extra's commands %v, cli.ExtraCommands %v", got, want)
	}
}

// TestUnknownCommand: reins-extra run directly with a command it does not
// hold is a usage error (exit 2), one line.
func TestUnknownCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Main([]string{"run", "hi"}, strings.NewReader(""), &stdout, &stderr)
	if code != cli.ExitUsage || strings.Count(stderr.String(), "\n") != 1 || !strings.HasPrefix(stderr.String(), "reins: ") {
		t.Errorf("exit %d, stderr %q; want 2 and one reins: line", code, stderr.String())
	}
}
