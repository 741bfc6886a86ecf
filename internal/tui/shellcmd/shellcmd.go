// Package shellcmd runs the interactive screen's !command (issue 30 item
// 3): the rest of a line starting with ! runs as a shell command the way
// the bash tool runs the model's (tool.UserShell: the session's sandbox
// policy and permission mode, bash's timeout, the output cap); its output
// is shown escaped and goes into the next prompt's context.
package shellcmd

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tool"
)

// Bounds of !command.
const (
	MaxShown   = 40 // output lines shown; the model gets them all
	MaxPending = 8  // outputs waiting for the next prompt
)

// Run is a running !command.
type Run struct {
	Command string
	Started time.Time // for the status line's "running Ns"
	cancel  context.CancelFunc
	stopped atomic.Bool
}

// Done is a !command's end: the message Start's command returns.
type Done struct {
	Command string
	Res     tool.Result
	Stopped bool // the user stopped it (Esc)
}

// Start runs command under env on a goroutine wg counts; the command it
// returns waits for the end.
func Start(env tool.Env, command string, now time.Time, wg *sync.WaitGroup) (*Run, tea.Cmd) {
	ctx, cancel := context.WithCancel(context.Background())
	wg.Add(1)
	done := make(chan tool.Result, 1)
	go func() {
		defer wg.Done()
		defer cancel()
		done <- tool.UserShell(ctx, &env, command)
	}()
	r := &Run{Command: command, Started: now, cancel: cancel}
	return r, func() tea.Msg {
		res := <-done
		return Done{Command: command, Res: res, Stopped: r.stopped.Load()}
	}
}

// Stop cancels the command (the bash runner tears its process group
// down); its Done still comes, saying it was stopped.
func (r *Run) Stop() {
	r.stopped.Store(true)
	r.cancel()
}

// Shown is the output as the screen shows it: escaped, at most MaxShown
// lines, the rest counted.
func (d Done) Shown() string {
	lines := strings.Split(strings.TrimRight(d.Res.Content, "\n"), "\n")
	shown := lines
	if len(shown) > MaxShown {
		shown = shown[:MaxShown]
	}
	var b strings.Builder
	for _, l := range shown {
		b.WriteString("  " + termsafe.EscapeLine(l) + "\n")
	}
	if len(lines) > len(shown) {
		fmt.Fprintf(&b, "  … %d more lines (all of them go with your next prompt)\n", len(lines)-len(shown))
	}
	if d.Stopped {
		b.WriteString("  stopped: you stopped this command; its output so far is above\n")
	}
	b.WriteString("  (this output goes with your next prompt)")
	return b.String()
}

// Context is the block the output adds to the next prompt: all of it.
func (d Done) Context() string {
	out := strings.TrimRight(d.Res.Content, "\n")
	if d.Stopped {
		out += "\n[the user stopped this command]"
	}
	return fmt.Sprintf("<shell command=%q>\n%s\n</shell>", d.Command, out)
}
