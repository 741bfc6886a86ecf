package tui

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/internal/tui/attach"
	"github.com/reinsdev/reins/internal/tui/pick"
)

// @path (issue 30 item 3): Tab on a word starting with @ completes it,
// fuzzy, over the files of the workspace as the glob tool walks it
// (.gitignore respected, tool.WorkspaceFiles); on send, every @path of
// the prompt that names a file of the workspace puts the file's content
// into the prompt as context, after the text typed (internal/tui/attach).

// Bounds of @path completion.
const (
	maxCompletions = 10 // matches a Tab lists
	completeWalk   = 50_000
	completeTime   = 10 * time.Second
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

// completed applies a completion to the editor, when it still ends with
// the word that asked: one best match replaces the word, several are
// listed (and their common prefix filled in).
func (m *Model) completed(msg completeMsg) {
	w, ok := m.atWord()
	if !ok || w != msg.word {
		return
	}
	if msg.err != nil {
		m.notice = "@ completion: " + termsafe.EscapeLine(msg.err.Error())
		return
	}
	q := strings.TrimPrefix(w, "@")
	best := pick.Best(q, msg.files, filepath.Base, func(f string) string { return f })
	// Shorter paths first: the file the user means is more often the
	// shallow one.
	sort.SliceStable(best, func(i, j int) bool { return len(best[i]) < len(best[j]) })
	v := m.editor.Value()
	head := v[:len(v)-len(w)]
	switch len(best) {
	case 0:
		m.notice = "no workspace file matches " + termsafe.EscapeLine(Cut(w, 60))
	case 1:
		m.editor.SetValue(head + "@" + best[0] + " ")
	default:
		if p := pick.CommonPrefix(best); len(p) > len(q) && strings.HasPrefix(p, q) {
			m.editor.SetValue(head + "@" + p)
		}
		shown := best[:min(len(best), maxCompletions)]
		for i := range shown {
			shown[i] = termsafe.EscapeLine(shown[i])
		}
		m.notice = strings.Join(shown, "  ")
		if len(best) > maxCompletions {
			m.notice += fmt.Sprintf("  … %d more", len(best)-maxCompletions)
		}
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
