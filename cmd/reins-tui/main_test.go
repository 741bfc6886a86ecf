package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestNotATerminal: reins-tui started on no terminal (reins never does
// that) refuses with one reins: line and exit 2; a bad flag is a usage
// error too, as it is for reins. An argument is the task (reins "TASK"),
// which needs the terminal as well.
func TestNotATerminal(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "reins: the interactive session needs a terminal"},
		{[]string{"--max-steps", "x"}, "reins: invalid argument"},
		{[]string{"hello"}, "reins: the interactive session needs a terminal"},
	} {
		var out, errb bytes.Buffer
		code := Main(c.args, strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.HasPrefix(errb.String(), c.want) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("reins-tui %v: exit %d, stderr %q; want 2 and one line %q…", c.args, code, errb.String(), c.want)
		}
	}
}
