package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/spf13/cobra"
)

// TestReadmeCommands checks the README's claims about commands against
// the CLI itself: every `reins ...` command line (in code blocks and in
// inline code) names a command that exists, and every flag it shows, and
// every flag a "flags of `reins CMD`" sentence lists, is a flag of that
// command (what its --help prints).
func TestReadmeCommands(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	root := newRoot(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	var claims []string // "reins CMD ARGS..."
	inCode := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "```") {
			inCode = !inCode
			continue
		}
		if inCode && strings.HasPrefix(l, "reins ") {
			line, _, _ := strings.Cut(l, "#")
			claims = append(claims, line)
		}
	}
	for _, m := range regexp.MustCompile("`(reins [^`]+)`").FindAllStringSubmatch(string(b), -1) {
		claims = append(claims, m[1])
	}
	checked := 0
	for _, c := range claims {
		words := strings.Fields(c)[1:]
		var args []string
		for _, w := range words {
			if strings.HasPrefix(w, "-") || strings.ContainsAny(w, `"'|<>[]=.$/`) || strings.ToUpper(w) == w {
				break
			}
			args = append(args, w)
		}
		cmd, rest, err := root.Find(args)
		if err != nil {
			t.Errorf("README: %q: %v", c, err)
			continue
		}
		if len(rest) > 0 && !cmd.Runnable() {
			t.Errorf("README: %q: no command %q under %q", c, rest[0], cmd.CommandPath())
		}
		for _, w := range words {
			// reins worker hands every flag to reins-temporal worker
			// (DisableFlagParsing): its flags live in that binary. The
			// commands of reins-extra are checked against its --help.
			if strings.HasPrefix(w, "-") && (!cmd.DisableFlagParsing || isExtra(cmd)) && !hasFlag(t, cmd, w) {
				t.Errorf("README: %q: %s has no flag %s", c, cmd.CommandPath(), w)
			}
		}
		checked++
	}
	// "Useful flags of `reins run`: `--cwd DIR` ..." sentences.
	for _, para := range strings.Split(string(b), "\n\n") {
		m := regexp.MustCompile("flags of `(reins [a-z ]+)`").FindStringSubmatch(para)
		if m == nil {
			continue
		}
		cmd, _, err := root.Find(strings.Fields(m[1])[1:])
		if err != nil {
			t.Errorf("README: %q: %v", m[1], err)
			continue
		}
		for _, f := range regexp.MustCompile("`(--?[a-z][a-z-]*)").FindAllStringSubmatch(para, -1) {
			if !hasFlag(t, cmd, f[1]) {
				t.Errorf("README says %s has flag %s; it does not", cmd.CommandPath(), f[1])
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d command lines checked: the README parse is broken", checked)
	}
}

func hasFlag(t *testing.T, cmd *cobra.Command, w string) bool {
	name, _, _ := strings.Cut(w, "=")
	if isExtra(cmd) {
		return extraFlag(t, cmd.Name(), name)
	}
	if n, ok := strings.CutPrefix(name, "--"); ok {
		return cmd.Flags().Lookup(n) != nil || cmd.InheritedFlags().Lookup(n) != nil || n == "help" || (n == "version" && !cmd.HasParent())
	}
	n := strings.TrimPrefix(name, "-")
	for _, r := range n { // -abc: each a shorthand
		if cmd.Flags().ShorthandLookup(string(r)) == nil && r != 'h' {
			return false
		}
	}
	return true
}

// isExtra tells whether cmd is reins's stand-in for a reins-extra command.
func isExtra(cmd *cobra.Command) bool {
	for _, c := range cli.ExtraCommands {
		if cmd.HasParent() && !cmd.Parent().HasParent() && cmd.Name() == c.Name {
			return true
		}
	}
	return false
}

// extraHelp caches `reins-extra NAME --help` per command.
var extraHelp = map[string]string{}

// extraFlag tells whether flag (--name or -abc) is one the reins-extra
// command name lists in its --help.
func extraFlag(t *testing.T, name, flag string) bool {
	t.Helper()
	help, ok := extraHelp[name]
	if !ok {
		useExtraHelper(t)
		out, err := exec.Command(os.Getenv(cli.ExtraEnv), name, "--help").CombinedOutput()
		if err != nil {
			t.Fatalf("reins-extra %s --help: %v\n%s", name, err, out)
		}
		help = string(out)
		extraHelp[name] = help
	}
	if n, ok := strings.CutPrefix(flag, "--"); ok {
		return n == "help" || regexp.MustCompile(`(?m)^\s+(?:-[a-zA-Z], )?--`+regexp.QuoteMeta(n)+`\b`).MatchString(help)
	}
	for _, r := range strings.TrimPrefix(flag, "-") {
		if r != 'h' && !strings.Contains(help, "  -"+string(r)+", --") {
			return false
		}
	}
	return true
}
