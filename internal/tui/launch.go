package tui

import tea "charm.land/bubbletea/v2"

// firstPromptMsg carries Options.Prompt to Update.
type firstPromptMsg struct{ text string }

// firstPrompt sends Options.Prompt once the screen runs, through the path
// a typed prompt takes (send): the task of `reins "TASK"` starts its turn,
// or waits in the queue behind the folder question; /resume lists the
// sessions.
func (m *Model) firstPrompt() tea.Cmd {
	text := m.opts.Prompt
	if text == "" {
		return nil
	}
	return func() tea.Msg { return firstPromptMsg{text} }
}
