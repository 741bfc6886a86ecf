package tui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tool"
)

// @path (issue 30 item 3): Tab on a word starting with @ completes it,
// fuzzy, over the files of the workspace as the glob tool walks it
// (.gitignore respected, tool.WorkspaceFiles); on send, every @path of
// the prompt that names a file of the workspace puts the file's content
// into the prompt as context, after the text typed. Files are read
// through an os.Root of the workspace, so neither a path nor a symlink
// reaches outside it, and each is bounded.

// Bounds of @path.
const (
	maxAttachFile  = 256 << 10 // bytes of one file that go into a prompt
	maxAttachFiles = 8         // files one prompt attaches
	maxCompletions = 10        // matches a Tab lists
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
	var best []string
	tier := 0
	for _, f := range msg.files {
		t := 3
		if q != "" {
			t = fuzzy(q, filepath.Base(f), f)
		}
		switch {
		case t == 0 || t < tier:
		case t > tier:
			best, tier = []string{f}, t
		default:
			best = append(best, f)
		}
	}
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
		p := best[0]
		for _, b := range best[1:] {
			for !strings.HasPrefix(b, p) {
				p = p[:len(p)-1]
			}
		}
		if len(p) > len(q) && strings.HasPrefix(p, q) {
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

// atRef finds the @paths of a prompt: an @ at the start or after a blank.
var atRef = regexp.MustCompile(`(?:^|\s)@(\S+)`)

// attachFiles is the context the @paths of prompt add: one block per
// file, and what the screen says about each (attached, cut, refused).
func (m *Model) attachFiles(prompt string) (blocks, notes []string) {
	seen := map[string]bool{}
	for _, sm := range atRef.FindAllStringSubmatch(prompt, -1) {
		ref := strings.TrimRight(sm[1], ".,;:!?)\"'")
		if ref == "" || seen[ref] {
			continue
		}
		seen[ref] = true
		if len(blocks) == maxAttachFiles {
			notes = append(notes, fmt.Sprintf("@%s: not attached, a prompt attaches at most %d files", termsafe.EscapeLine(Cut(ref, 80)), maxAttachFiles))
			continue
		}
		rel, data, size, err := readAttachment(m.h.Cwd, ref)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // an @word that is not a file: text, as typed
		case err != nil:
			notes = append(notes, "@"+termsafe.EscapeLine(Cut(ref, 80))+": not attached, "+err.Error())
			continue
		}
		b := fmt.Sprintf("<file path=%q>\n%s", rel, data)
		note := fmt.Sprintf("@%s attached (%s)", termsafe.EscapeLine(rel), byteSize(size))
		if size > len(data) {
			b += fmt.Sprintf("\n[cut: the first %d of %d bytes]", len(data), size)
			note = fmt.Sprintf("@%s attached, cut to its first %s of %s", termsafe.EscapeLine(rel), byteSize(len(data)), byteSize(size))
		}
		blocks = append(blocks, b+"\n</file>")
		notes = append(notes, note)
	}
	return blocks, notes
}

// errOutside refuses an @path outside the workspace.
var errOutside = errors.New("it is outside the workspace")

// readAttachment reads the file ref names (relative to the workspace
// cwd, or absolute inside it) through an os.Root of the workspace: at
// most maxAttachFile bytes of a regular text file. rel is its
// workspace-relative slash path, size its whole size. A missing file is
// fs.ErrNotExist; other refusals are errors the screen shows.
func readAttachment(cwd, ref string) (rel string, data []byte, size int, err error) {
	p := filepath.FromSlash(ref)
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(cwd, p)
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "", nil, 0, errOutside
		}
		p = r
	}
	p = filepath.Clean(p)
	if p == ".." || strings.HasPrefix(p, ".."+string(filepath.Separator)) {
		return "", nil, 0, errOutside
	}
	root, err := os.OpenRoot(cwd)
	if err != nil {
		return "", nil, 0, errors.New("the workspace cannot be opened")
	}
	defer root.Close()
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil, 0, fs.ErrNotExist
	case err != nil && strings.Contains(err.Error(), "escapes"):
		return "", nil, 0, errOutside
	case err != nil:
		return "", nil, 0, errors.New("it cannot be opened")
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return "", nil, 0, errors.New("it is not a regular file")
	}
	data, err = io.ReadAll(io.LimitReader(f, maxAttachFile))
	if err != nil {
		return "", nil, 0, errors.New("it cannot be read")
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return "", nil, 0, errors.New("it is a binary file")
	}
	return filepath.ToSlash(p), data, max(int(st.Size()), len(data)), nil
}

// withContext is the prompt as the model gets it: the text typed, then
// the pending !command outputs and the @path files; notes are what the
// screen says about them.
func (m *Model) withContext(prompt string) (full string, notes []string) {
	blocks := m.takeShellContext()
	files, notes := m.attachFiles(prompt)
	blocks = append(blocks, files...)
	if len(blocks) == 0 {
		return prompt, notes
	}
	return prompt + "\n\n" + strings.Join(blocks, "\n\n"), notes
}
