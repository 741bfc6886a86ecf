package tui

import (
	"context"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/internal/tui/attach"
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

// completeMsg carries the workspace's files to the Tab that asked.
type completeMsg struct {
	word  string // the @word being completed, as it was
	files []string
	err   error
}

// atWord is the @word at the end of the editor, if the last word is one.
func (m *Model) atWord() (string, bool) {
	v := m.editor.Value()
	i := strings.LastIndexAny(v, " \t\n")
	w := v[i+1:]
	return w, strings.HasPrefix(w, "@")
}

// completeAt is Tab on an @word: the walk runs off the screen's
// goroutine, bounded in files and time.
func (m *Model) completeAt() tea.Cmd {
	w, ok := m.atWord()
	if !ok {
		return nil
	}
	env := *m.sess.Agent.Env
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), completeTime)
		defer cancel()
		files, _, err := tool.WorkspaceFiles(ctx, &env, completeWalk)
		return completeMsg{word: w, files: files, err: err}
	}
}

// completed applies a completion (attach.Complete) to the editor, when it
// still ends with the word that asked.
func (m *Model) completed(msg completeMsg) {
	w, ok := m.atWord()
	if !ok || w != msg.word {
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
