package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
