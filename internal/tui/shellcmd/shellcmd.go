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
	cancel  context.CancelFunc
}

// Done is a !command's end: the message Start's command returns.
type Done struct {
	Command string
	Res     tool.Result
}

// Start runs command under env on a goroutine wg counts; the command it
// returns waits for the end.
func Start(env tool.Env, command string, wg *sync.WaitGroup) (*Run, tea.Cmd) {
	ctx, cancel := context.WithCancel(context.Background())
	wg.Add(1)
	done := make(chan tool.Result, 1)
	go func() {
		defer wg.Done()
		defer cancel()
		done <- tool.UserShell(ctx, &env, command)
	}()
	return &Run{Command: command, cancel: cancel}, func() tea.Msg { return Done{Command: command, Res: <-done} }
}

// Stop cancels the command (the bash runner tears its process group
// down); its Done still comes.
func (r *Run) Stop() { r.cancel() }

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
	b.WriteString("  (this output goes with your next prompt)")
	return b.String()
}

// Context is the block the output adds to the next prompt: all of it.
func (d Done) Context() string {
	return fmt.Sprintf("<shell command=%q>\n%s\n</shell>", d.Command, strings.TrimRight(d.Res.Content, "\n"))
}
