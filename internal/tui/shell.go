package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tool"
)

// !command (issue 30 item 3): a line starting with ! runs the rest as a
// shell command the way the bash tool runs the model's (tool.UserShell:
// the session's sandbox policy and permission mode, bash's timeout, the
// output cap), shows its output escaped, and puts it into the next
// prompt's context. It asks nothing (the user typed it) and runs beside
// a turn; one at a time. Esc or Ctrl-C while no turn runs stops it.

// Bounds of !command.
const (
	maxShellShown   = 40 // output lines shown; the model gets them all
	maxShellPending = 8  // outputs waiting for the next prompt
)

// shellRun is the running !command.
type shellRun struct {
	command string
	cancel  context.CancelFunc
}

// shellDoneMsg is a !command's end.
type shellDoneMsg struct {
	command string
	res     tool.Result
}

// shellStart runs command (the line after its !).
func (m *Model) shellStart(command string) tea.Cmd {
	command = strings.TrimSpace(command)
	switch {
	case command == "":
		m.notice = "!COMMAND runs a shell command; its output goes with your next prompt"
		return nil
	case m.shell != nil:
		m.notice = "a shell command is running: " + termsafe.EscapeLine(Cut(m.shell.command, 60)) + " (Esc stops it)"
		m.editor.SetValue("!" + command)
		return nil
	case len(m.shellCtx) >= maxShellPending:
		m.notice = fmt.Sprintf("%d command outputs wait for your next prompt already; send it first", maxShellPending)
		m.editor.SetValue("!" + command)
		return nil
	}
	m.commit(m.st.user.Render("! " + termsafe.Escape(command)))
	env := *m.sess.Agent.Env
	ctx, cancel := context.WithCancel(context.Background())
	m.shell = &shellRun{command: command, cancel: cancel}
	m.wg.Add(1)
	done := make(chan tool.Result, 1)
	go func() {
		defer m.wg.Done()
		defer cancel()
		done <- tool.UserShell(ctx, &env, command)
	}()
	return func() tea.Msg { return shellDoneMsg{command: command, res: <-done} }
}

// stopShell cancels the running !command (its process group is torn
// down by the bash runner).
func (m *Model) stopShell() bool {
	if m.shell == nil {
		return false
	}
	m.shell.cancel()
	m.notice = "stopping the shell command…"
	return true
}

// shellDone shows a !command's output and keeps it for the next prompt.
func (m *Model) shellDone(msg shellDoneMsg) {
	m.shell = nil
	if strings.HasPrefix(m.notice, "stopping the shell command") {
		m.notice = ""
	}
	lines := strings.Split(strings.TrimRight(msg.res.Content, "\n"), "\n")
	shown := lines
	if len(shown) > maxShellShown {
		shown = shown[:maxShellShown]
	}
	var b strings.Builder
	for _, l := range shown {
		b.WriteString("  " + termsafe.EscapeLine(l) + "\n")
	}
	if len(lines) > len(shown) {
		fmt.Fprintf(&b, "  … %d more lines (all of them go with your next prompt)\n", len(lines)-len(shown))
	}
	b.WriteString("  (this output goes with your next prompt)")
	st := m.st.dim
	if msg.res.IsError {
		st = m.st.bad
	}
	m.commit(st.Render(b.String()))
	m.shellCtx = append(m.shellCtx, fmt.Sprintf("<shell command=%q>\n%s\n</shell>", msg.command, strings.TrimRight(msg.res.Content, "\n")))
}

// takeShellContext hands the pending outputs to the prompt being sent.
func (m *Model) takeShellContext() []string {
	out := m.shellCtx
	m.shellCtx = nil
	return out
}
