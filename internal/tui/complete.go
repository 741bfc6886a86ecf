package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/internal/tui/attach"
	"github.com/reinsdev/reins/internal/tui/termtext"
)

// @path (issue 30 item 3): Tab on a word starting with @ completes it,
// fuzzy, over the files of the workspace as the glob tool walks it
// (.gitignore respected, tool.WorkspaceFiles); on send, every @path of
// the prompt that names a file of the workspace puts the file's content
// into the prompt as context, after the text typed (internal/tui/attach).

// Bounds of @path completion's walk.
const (
	completeWalk = 50_000
	completeTime = 10 * time.Second
)

// atRows bounds the rows @'s list shows as the user types.
const atRows = 8

// atFresh is how long a walk's files serve @'s list before the next @word
// walks again (files come and go while a session runs).
const atFresh = 30 * time.Second

// completeMsg carries the workspace's files to the @word that asked; tab
// is set when Tab asked (the word is then completed as soon as they come).
type completeMsg struct {
	word  string // the @word being completed, as it was
	files []string
	err   error
	tab   bool
}

// atList is @'s list of files as the user types (issue 48): the
// workspace's files, walked once per atFresh off the screen's goroutine;
// sel the row Tab takes; closed the @word Esc closed it for.
type atList struct {
	files   []string
	walked  time.Time
	walking bool
	sel     int
	closed  string
}

// atWord is the @word at the end of the editor, if the last word is one.
func (m *Model) atWord() (string, bool) {
	v := m.editor.Value()
	i := strings.LastIndexAny(v, " \t\n")
	w := v[i+1:]
	return w, strings.HasPrefix(w, "@")
}

// atMatches are the rows of @'s list for the word being typed (none when
// no @word is, the files are not walked yet, or Esc closed it).
func (m *Model) atMatches() []string {
	w, ok := m.atWord()
	if !ok || m.at.walked.IsZero() || m.at.closed == w {
		return nil
	}
	return attach.Ranked(strings.TrimPrefix(w, "@"), m.at.files)
}

// walkFiles starts the walk of the workspace's files for @word w, unless
// one runs or the last is fresh (tab: a Tab asked).
func (m *Model) walkFiles(w string, tab bool) tea.Cmd {
	if m.at.walking || !tab && !m.at.walked.IsZero() && m.now().Sub(m.at.walked) < atFresh {
		return nil
	}
	m.at.walking = true
	env := *m.sess.Agent.Env
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), completeTime)
		defer cancel()
		files, _, err := tool.WorkspaceFiles(ctx, &env, completeWalk)
		return completeMsg{word: w, files: files, err: err, tab: tab}
	}
}

// afterEdit follows the editor after a key changed it: an @word being
// typed opens @'s list (walking the files when they are stale).
func (m *Model) afterEdit(before string) tea.Cmd {
	if m.editor.Value() == before {
		return nil
	}
	m.at.sel = 0
	w, ok := m.atWord()
	if !ok {
		return nil
	}
	return m.walkFiles(w, false)
}

// atKey is a key while @'s list shows: Up and Down move, Tab takes the
// row, Esc closes the list; handled reports whether it took the key.
// Enter is never taken: it sends the prompt as typed.
func (m *Model) atKey(s string) (handled bool) {
	rows := m.atMatches()
	if len(rows) == 0 {
		return false
	}
	switch s {
	case "up":
		m.at.sel = max(m.at.sel-1, 0)
	case "down":
		m.at.sel = min(m.at.sel+1, min(len(rows), atRows)-1)
	case "tab":
		w, _ := m.atWord()
		v := m.editor.Value()
		m.editor.SetValue(v[:len(v)-len(w)] + "@" + rows[min(m.at.sel, len(rows)-1)] + " ")
		m.at.sel = 0
	case "esc":
		m.at.closed, _ = m.atWord()
	default:
		return false
	}
	return true
}

// atView draws @'s list above the editor.
func (m *Model) atView() []string {
	rows := m.atMatches()
	if len(rows) == 0 {
		return nil
	}
	var out []string
	for i, f := range rows[:min(len(rows), atRows)] {
		mark := "  @"
		if i == m.at.sel {
			mark = "› @"
		}
		out = append(out, termtext.Fit(m.st.dim.Render(mark+termsafe.EscapeLine(f)), m.width))
	}
	hint := "Tab takes it · ↑↓ move · Esc closes"
	if n := len(rows) - atRows; n > 0 {
		hint = fmt.Sprintf("… %d more · ", n) + hint
	}
	return append(out, m.st.dim.Render("  "+hint))
}

// completeAt is Tab on an @word before its list showed: the walk runs
// off the screen's goroutine, bounded in files and time.
func (m *Model) completeAt() tea.Cmd {
	w, ok := m.atWord()
	if !ok {
		return nil
	}
	return m.walkFiles(w, true)
}

// completed keeps a walk's files for @'s list; a Tab's walk completes the
// word (attach.Complete) when the editor still ends with it.
func (m *Model) completed(msg completeMsg) {
	m.at.walking = false
	if msg.err == nil {
		m.at.files, m.at.walked = msg.files, m.now()
	}
	w, ok := m.atWord()
	if !ok || w != msg.word || !msg.tab {
		if msg.err != nil && ok {
			m.notice = "@ completion: " + termsafe.EscapeLine(msg.err.Error())
		}
		return
	}
	if msg.err != nil {
		m.notice = "@ completion: " + termsafe.EscapeLine(msg.err.Error())
		return
	}
	replace, notice := attach.Complete(w, msg.files)
	if replace != "" {
		v := m.editor.Value()
		m.editor.SetValue(v[:len(v)-len(w)] + replace)
	}
	if notice != "" {
		m.notice = notice
	}
}

// withContext is the prompt as the model gets it: the text typed, then
// the pending !command outputs and the @path files; notes are what the
// screen says about them.
func (m *Model) withContext(prompt string) (full string, notes []string) {
	blocks := m.takeShellContext()
	files, notes := attach.Files(m.h.Cwd, prompt)
	blocks = append(blocks, files...)
	if len(blocks) == 0 {
		return prompt, notes
	}
	return prompt + "\n\n" + strings.Join(blocks, "\n\n"), notes
}
