// Package editor is the interactive screen's prompt editor: a textarea in
// which Enter sends and Alt-Enter (Shift-Enter) adds a line, bounded, with
// a steady cursor; and the history of the prompts sent, which Up on the
// first line and Down on the last recall.
package editor

import (
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
)

// New is the editor, at most limit characters, in colour or not.
func New(noColor bool, limit int) textarea.Model {
	ed := textarea.New()
	ed.ShowLineNumbers = false
	// The marker starts the prompt, not each of its lines (a pasted
	// prompt's lines read as several prompts otherwise, issue 48).
	ed.SetPromptFunc(2, func(pi textarea.PromptInfo) string {
		if pi.LineNumber == 0 {
			return "› "
		}
		return "  "
	})
	ed.Placeholder = "Ask reins… (Enter sends, Alt-Enter new line, /help)"
	ed.CharLimit = limit
	ed.DynamicHeight = true
	ed.MinHeight = 1
	ed.MaxHeight = 8
	// Enter always sends. LF (Ctrl-J) is Enter too: keys typed before
	// the terminal left canonical mode carry Enter as LF, and taking it
	// for a new line would merge two quick prompts into one unsent one.
	ed.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "shift+enter"))
	// Ctrl-D exits; the clipboard is the terminal's (bracketed paste).
	ed.KeyMap.DeleteCharacterForward = key.NewBinding(key.WithKeys("delete"))
	ed.KeyMap.Paste = key.NewBinding(key.WithDisabled())
	// A steady cursor: a blinking one redraws the screen twice a second
	// for nothing.
	s := textarea.DefaultDarkStyles()
	s.Cursor.Blink = false
	if noColor {
		plain := textarea.StyleState{}
		s.Focused, s.Blurred, s.Cursor.Color = plain, plain, nil
	}
	ed.SetStyles(s)
	ed.Focus()
	return ed
}

// History is the prompts sent and where Up and Down are in it; the zero
// value is empty.
type History struct {
	items []string
	pos   int    // index into items while browsing; len(items) when not
	draft string // the editor's text before browsing began
}

// Add records a prompt sent (not twice in a row; at most max kept) and
// ends browsing.
func (h *History) Add(text string, max int) {
	if len(h.items) == 0 || h.items[len(h.items)-1] != text {
		h.items = append(h.items, text)
		if len(h.items) > max {
			h.items = h.items[len(h.items)-max:]
		}
	}
	h.pos, h.draft = len(h.items), ""
}

// Stop ends browsing (the editor was cleared).
func (h *History) Stop() { h.pos = len(h.items) }

// Up shows the prompt before the one shown when the cursor is on the
// editor's first line, keeping what was typed; false when it did not.
func (h *History) Up(ed *textarea.Model) bool {
	if ed.Line() != 0 || h.pos == 0 {
		return false
	}
	if h.pos == len(h.items) {
		h.draft = ed.Value()
	}
	h.pos--
	ed.SetValue(h.items[h.pos])
	return true
}

// Down shows the prompt after the one shown (after the last, what was
// typed) when the cursor is on the editor's last line; false when it did
// not.
func (h *History) Down(ed *textarea.Model) bool {
	if h.pos >= len(h.items) || ed.Line() != ed.LineCount()-1 {
		return false
	}
	h.pos++
	if h.pos == len(h.items) {
		ed.SetValue(h.draft)
	} else {
		ed.SetValue(h.items[h.pos])
	}
	return true
}
