package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/tui/attach"
)

// TestWithContext: the prompt the model gets is the text typed, then the
// pending !command outputs (once), then the @path files; notes say what
// was attached, cut or refused; an @word that is not a file stays text.
func TestWithContext(t *testing.T) {
	s := newScreen(t, "", nil)
	os.WriteFile(filepath.Join(s.cwd, "notes.md"), []byte("NOTE-BODY\n"), 0o644)
	os.WriteFile(filepath.Join(s.cwd, "big.log"), []byte(strings.Repeat("y", attach.MaxFile+1)), 0o644)
	s.m.shellCtx = []string{"<shell command=\"ls\">\nnotes.md\n</shell>"}
	full, notes := s.m.withContext("look at @notes.md and @big.log, ask @someone, not @../x")
	want := "look at @notes.md and @big.log, ask @someone, not @../x\n\n<shell command=\"ls\">\nnotes.md\n</shell>\n\n<file path=\"notes.md\">\nNOTE-BODY\n\n</file>\n\n<file path=\"big.log\">\n"
	if !strings.HasPrefix(full, want) || !strings.HasSuffix(full, "\n[cut: the first 262144 of 262145 bytes]\n</file>") {
		t.Errorf("full prompt:\n%.400s", full)
	}
	if len(notes) != 3 || notes[0] != "@notes.md attached (10 bytes)" || !strings.Contains(notes[1], "@big.log attached, cut to its first") || !strings.Contains(notes[2], "@../x: not attached, it is outside the workspace") {
		t.Errorf("notes: %q", notes)
	}
	if full, _ := s.m.withContext("again"); full != "again" {
		t.Errorf("the shell output went twice: %q", full)
	}
}

// TestAtListAsYouType (issue 48): typing an @word opens the list of the
// workspace's files at once (no Tab), ranked by name — for @t, two.txt
// before md.txt —; Down moves, Tab takes the row, Esc closes the list,
// and Enter still sends the prompt as typed.
func TestAtListAsYouType(t *testing.T) {
	s := newScreen(t, "", nil)
	for _, f := range []string{"md.txt", "two.txt", "sub/deep.txt"} {
		os.MkdirAll(filepath.Dir(filepath.Join(s.cwd, f)), 0o755)
		os.WriteFile(filepath.Join(s.cwd, f), []byte(f+"\n"), 0o644)
	}
	typeRun := func(text string) {
		for _, r := range text {
			s.run(s.send(tea.KeyPressMsg{Code: r, Text: string(r)}))
		}
	}
	typeRun("see @t")
	v := s.view()
	i, j := strings.Index(v, "› @two.txt"), strings.Index(v, "  @md.txt")
	if i < 0 || j < 0 || i > j || !strings.Contains(v, "Tab takes it") {
		t.Fatalf("@t list (two.txt first, md.txt after):\n%s", v)
	}
	s.send(tea.KeyPressMsg{Code: tea.KeyDown})
	if v := s.view(); !strings.Contains(v, "› @md.txt") {
		t.Fatalf("Down:\n%s", v)
	}
	s.send(tea.KeyPressMsg{Code: tea.KeyTab})
	if got := s.m.editor.Value(); got != "see @md.txt " {
		t.Fatalf("Tab took %q", got)
	}
	if strings.Contains(s.view(), "Tab takes it") {
		t.Errorf("the list stays after the word ended:\n%s", s.view())
	}
	typeRun("and @de")
	if !strings.Contains(s.view(), "› @sub/deep.txt") {
		t.Fatalf("@de:\n%s", s.view())
	}
	s.send(tea.KeyPressMsg{Code: tea.KeyEscape})
	if strings.Contains(s.view(), "Tab takes it") {
		t.Fatalf("Esc left the list:\n%s", s.view())
	}
	s.send(tea.KeyPressMsg{Code: tea.KeyEnter})
	s.pump(func() bool { return !s.m.running })
	if l := s.log(); !strings.Contains(l, "› see @md.txt and @de") {
		t.Errorf("Enter did not send the prompt as typed:\n%s", l)
	}
}
