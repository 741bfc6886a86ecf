// Package cli holds the parts of the reins command line that reins and its
// helper reins-tui share (docs/interactive.md): exit statuses, the session flags,
// opening a session from them, the session a --resume or --continue
// names, and whether a stream is a terminal. reins-tui runs the
// interactive session with the same flags and the same opening as reins
// run, and none of it links the terminal libraries.
package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/termsafe"
)

// Exit statuses (docs/cli.md).
const (
	ExitOK        = 0
	ExitFailed    = 1
	ExitUsage     = 2
	ExitInterrupt = 130
)

// ExitError carries an exit status out of a command. A message, when
// set, is printed on stderr as one line ("reins: " and the message,
// escaped).
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

// NoticeUntrusted says once, on w, which project files an untrusted
// workspace has that reins ignored, and how to trust it.
func NoticeUntrusted(w io.Writer, h *harness.Harness) {
	if n := h.UntrustedNotice(); n != "" {
		fmt.Fprintln(w, "reins: "+termsafe.Escape(n))
	}
}

// WarnBroken prints one line on w for each agent file that was skipped
// because it could not be read as an agent (file, line and key).
func WarnBroken(w io.Writer, h *harness.Harness) {
	for _, warn := range h.Warnings {
		if strings.HasPrefix(warn.Message, "skipped: ") {
			fmt.Fprintln(w, "reins: warning: "+warn.String())
		}
	}
}
