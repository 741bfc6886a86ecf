package cli

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/spf13/cobra"

	"github.com/reinsdev/reins/internal/harness"
)

// TestStatus: the one exit rule of reins and reins-tui.
func TestStatus(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		code int
		line string
	}{
		{"exit error with a message", &ExitError{Code: ExitUsage, Msg: "bad flag"}, 2, "reins: bad flag\n"},
		{"exit error, silent", &ExitError{Code: 130}, 130, ""},
		{"wrapped exit error", fmt.Errorf("x: %w", &ExitError{Code: 3, Msg: "m"}), 3, "reins: m\n"},
		{"configuration", &harness.ConfigError{Err: errors.New("config.yaml: bad")}, 2, "reins: config.yaml: bad\n"},
		{"a failed run", &RuntimeError{Err: errors.New("disk full")}, 1, "reins: disk full\n"},
		{"configuration inside a run", &RuntimeError{Err: &harness.ConfigError{Err: errors.New("c")}}, 2, "reins: c\n"},
		{"cobra's own", errors.New("unknown flag: --x"), 2, "reins: unknown flag: --x\n"},
		{"escaped", &RuntimeError{Err: errors.New("a\x1b[2Jb\nc")}, 1, "reins: a\\x1b[2Jb\nc\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if got := Status(c.err, &buf); got != c.code || buf.String() != c.line {
				t.Errorf("Status = %d, %q; want %d, %q", got, buf.String(), c.code, c.line)
			}
		})
	}
}

// TestMarkRuntime: an untyped error of a command (and of its
// subcommands) becomes a RuntimeError; typed ones pass as they are.
func TestMarkRuntime(t *testing.T) {
	plain, typed := errors.New("io"), &ExitError{Code: 2}
	root := &cobra.Command{Use: "r", RunE: func(*cobra.Command, []string) error { return plain }}
	sub := &cobra.Command{Use: "s", RunE: func(*cobra.Command, []string) error { return typed }}
	root.AddCommand(sub)
	MarkRuntime(root)
	var re *RuntimeError
	if err := root.RunE(root, nil); !errors.As(err, &re) || re.Err != plain {
		t.Errorf("root: %v, want a RuntimeError of %v", err, plain)
	}
	if err := sub.RunE(sub, nil); err != typed {
		t.Errorf("sub: %v, want the ExitError itself", err)
	}
}
