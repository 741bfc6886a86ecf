package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/session"
)

// maxStdinPrompt bounds a prompt read from stdin.
const maxStdinPrompt = 16 << 20

// runPrompt is the prompt of `reins run`: its arguments joined by spaces;
// or stdin, when the only argument is "-" or there are none and stdin is
// not a terminal (`echo task | reins run`).
func runPrompt(s *streams, args []string) (string, error) {
	fromStdin := len(args) == 1 && args[0] == "-"
	if len(args) == 0 {
		if isTerminal(s.in) {
			return "", &exitError{code: exitUsage, msg: "no prompt: give it as arguments, or as - to read it from stdin"}
		}
		fromStdin = true
	}
	if !fromStdin {
		return strings.Join(args, " "), nil
	}
	if s.in == nil {
		return "", &exitError{code: exitUsage, msg: "no prompt: stdin is closed"}
	}
	b, err := io.ReadAll(io.LimitReader(s.in, maxStdinPrompt+1))
	if err != nil {
		return "", &exitError{code: exitUsage, msg: "reading the prompt from stdin: " + err.Error()}
	}
	if len(b) > maxStdinPrompt {
		return "", &exitError{code: exitUsage, msg: fmt.Sprintf("the prompt on stdin is over %d MiB", maxStdinPrompt>>20)}
	}
	p := strings.TrimRight(string(b), "\r\n")
	if strings.TrimSpace(p) == "" {
		return "", &exitError{code: exitUsage, msg: "no prompt: stdin was empty"}
	}
	return p, nil
}

// resumeHint is the line after Ctrl-C: how to go on with the session.
func resumeHint(id string) string {
	return "interrupted; to continue this session: reins run --resume " + id + " 'PROMPT'"
}

// withProviderMessage adds to the line `reins run` prints for a failed
// turn the provider's own error message (llm.ProviderMessage: one line,
// escaped, capped) and where the host log is (harness.ProviderDetail).
// That text goes to stderr only: the --json object, the session log and
// the model never get it.
func withProviderMessage(msg string, failure *session.Failure, m *harness.Model, h *harness.Harness) string {
	d := h.ProviderDetail(failure, m)
	if d == "" {
		return msg
	}
	if msg == "" { // --json: stdout has the code already
		msg = "turn ended with " + failure.Code
	}
	return msg + d
}
