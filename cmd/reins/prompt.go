package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

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
			return "", &exitError{Code: exitUsage, Msg: "no prompt: give it as arguments, or as - to read it from stdin"}
		}
		fromStdin = true
	}
	if !fromStdin {
		prompt := strings.Join(args, " ")
		if s.in == nil || isTerminal(s.in) {
			return prompt, nil
		}
		return withPiped(s, prompt)
	}
	if s.in == nil {
		return "", &exitError{Code: exitUsage, Msg: "no prompt: stdin is closed"}
	}
	b, err := io.ReadAll(io.LimitReader(s.in, maxStdinPrompt+1))
	if err != nil {
		return "", &exitError{Code: exitUsage, Msg: "reading the prompt from stdin: " + err.Error()}
	}
	if len(b) > maxStdinPrompt {
		return "", &exitError{Code: exitUsage, Msg: fmt.Sprintf("the prompt on stdin is over %d MiB", maxStdinPrompt>>20)}
	}
	p := strings.TrimRight(string(b), "\r\n")
	if strings.TrimSpace(p) == "" {
		return "", &exitError{Code: exitUsage, Msg: `no prompt: stdin was empty; give the task as arguments (reins run "TASK") or on stdin (echo TASK | reins run)`}
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
		msg = "turn ended with " + string(failure.Code)
	}
	return msg + d
}

// maxPiped bounds the piped text `reins run PROMPT` adds to its prompt.
const maxPiped = 1 << 20

// pipedWait is how long `reins run PROMPT` waits for the first byte on a
// stdin pipe that a caller left open without writing to it (a CI step, an
// editor task) before it runs without piped text, as Claude Code does.
var pipedWait = 3 * time.Second

// withPiped is prompt with what is piped on stdin (`echo context | reins run
// "summarize this"`): the prompt, then the text as a fenced block, as
// Claude Code's -p and pi combine them. Over maxPiped, the text is cut and
// both the prompt and stderr say so; nothing piped leaves the prompt alone.
func withPiped(s *streams, prompt string) (string, error) {
	type read struct {
		b   []byte
		err error
	}
	started := make(chan struct{})
	got := make(chan read, 1)
	go func() { // ends at EOF, or with the process if the pipe never does
		lr := &firstRead{r: io.LimitReader(s.in, maxPiped+1), first: started}
		b, err := io.ReadAll(lr)
		lr.signal()
		got <- read{b, err}
	}()
	if f, ok := s.in.(*os.File); ok && isPipe(f) {
		t := time.NewTimer(pipedWait)
		select {
		case <-started: // a writer is there: wait for all of it
		case <-t.C:
			fmt.Fprintf(s.err, "reins: nothing arrived on stdin in %s; running without it (use < /dev/null to skip the wait)\n", pipedWait)
			return prompt, nil
		}
		t.Stop()
	}
	r := <-got
	if r.err != nil {
		return "", &exitError{Code: exitUsage, Msg: "reading stdin: " + r.err.Error()}
	}
	text := strings.TrimRight(string(r.b), "\r\n")
	if strings.TrimSpace(text) == "" {
		return prompt, nil
	}
	note := ""
	if len(r.b) > maxPiped {
		text = strings.ToValidUTF8(string(r.b[:maxPiped]), "")
		note = fmt.Sprintf("\n[reins: the piped input was cut at its first %d KiB]", maxPiped>>10)
		fmt.Fprintf(s.err, "reins: the piped input is over %d KiB; the prompt has its first %d KiB\n", maxPiped>>10, maxPiped>>10)
	}
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	return prompt + "\n\n" + fence + "\n" + text + "\n" + fence + note, nil
}

// firstRead closes first when its first Read returns (data or EOF).
type firstRead struct {
	r     io.Reader
	first chan struct{}
	once  sync.Once
}

func (f *firstRead) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	f.signal()
	return n, err
}

func (f *firstRead) signal() { f.once.Do(func() { close(f.first) }) }

// isPipe says f is a FIFO or socket, where a writer may never come.
func isPipe(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0
}
