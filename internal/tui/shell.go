package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tui/shellcmd"
	"github.com/reinsdev/reins/internal/tui/termtext"
)

// !command (internal/tui/shellcmd): it asks nothing (the user typed it)
// and runs beside a turn; one at a time. Esc while no turn runs stops it.
// While it runs the status line says so, with its time.

type (
	shellRun     = shellcmd.Run
	shellDoneMsg = shellcmd.Done
)

// shellStart runs command (the line after its !).
func (m *Model) shellStart(command string) tea.Cmd {
	command = strings.TrimSpace(command)
	switch {
	case command == "":
		m.notice = "!COMMAND runs a shell command; its output goes with your next prompt"
		return nil
	case m.shell != nil:
		m.notice = "a shell command is running: " + termsafe.EscapeLine(termtext.Cut(m.shell.Command, 60)) + " (Esc stops it)"
		m.editor.SetValue("!" + command)
		return nil
	case len(m.shellCtx) >= shellcmd.MaxPending:
		m.notice = fmt.Sprintf("%d command outputs wait for your next prompt already; send it first", shellcmd.MaxPending)
		m.editor.SetValue("!" + command)
		return nil
	}
	m.commit(m.st.user.Render("! " + termsafe.Escape(command)))
	var cmd tea.Cmd
	m.shell, cmd = shellcmd.Start(*m.sess.Agent.Env, command, m.now(), &m.wg)
	return tea.Batch(cmd, m.startTick()) // the status line's "! running Ns"
}

// stopShell cancels the running !command.
func (m *Model) stopShell() bool {
	if m.shell == nil {
		return false
	}
	m.shell.Stop()
	m.notice = "stopping the shell command…"
	return true
}

// shellDone shows a !command's output and keeps it for the next prompt.
func (m *Model) shellDone(msg shellDoneMsg) {
	m.shell = nil
	if strings.HasPrefix(m.notice, "stopping the shell command") {
		m.notice = ""
	}
	st := m.st.dim
	if msg.Res.IsError {
		st = m.st.bad
	}
	m.commit(st.Render(msg.Shown()))
	m.shellCtx = append(m.shellCtx, msg.Context())
}

// takeShellContext hands the pending outputs to the prompt being sent.
func (m *Model) takeShellContext() []string {
	out := m.shellCtx
	m.shellCtx = nil
	return out
}
