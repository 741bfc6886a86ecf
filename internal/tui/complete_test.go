package tui

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadAttachment: an @path is read through the workspace's root:
// outside paths and symlinks out are refused, a FIFO does not block, a
// binary file is refused, a large one is cut to maxAttachFile and its
// whole size reported.
func TestReadAttachment(t *testing.T) {
	ws, out := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(out, "secret"), []byte("SECRET"), 0o644)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello"), 0o644)
	os.WriteFile(filepath.Join(ws, "bin"), []byte("a\x00b"), 0o644)
	os.WriteFile(filepath.Join(ws, "big"), []byte(strings.Repeat("x", maxAttachFile+1000)), 0o644)
	os.Symlink(filepath.Join(out, "secret"), filepath.Join(ws, "link"))
	os.Mkdir(filepath.Join(ws, "dir"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, data, size, err := readAttachment(ws, "./a.txt")
	if err != nil || rel != "a.txt" || string(data) != "hello" || size != 5 {
		t.Errorf("a.txt: %q %q %d %v", rel, data, size, err)
	}
	if rel, _, _, err := readAttachment(ws, filepath.Join(ws, "a.txt")); err != nil || rel != "a.txt" {
		t.Errorf("absolute inside: %q %v", rel, err)
	}
	_, data, size, err = readAttachment(ws, "big")
	if err != nil || len(data) != maxAttachFile || size != maxAttachFile+1000 {
		t.Errorf("big: %d of %d, %v", len(data), size, err)
	}
	if _, _, _, err := readAttachment(ws, "nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	for _, ref := range []string{"../" + filepath.Base(out) + "/secret", filepath.Join(out, "secret"), "link", "a.txt/../../x"} {
		_, data, _, err := readAttachment(ws, ref)
		if err == nil || strings.Contains(string(data), "SECRET") {
			t.Errorf("%s: read %q, err %v", ref, data, err)
		}
	}
	for _, ref := range []string{"bin", "dir", "fifo"} {
		if _, _, _, err := readAttachment(ws, ref); err == nil {
			t.Errorf("%s was attached", ref)
		}
	}
}

// TestWithContext: the prompt the model gets is the text typed, then the
// pending !command outputs (once), then the @path files; notes say what
// was attached, cut or refused; an @word that is not a file stays text.
func TestWithContext(t *testing.T) {
	s := newScreen(t, "", nil)
	os.WriteFile(filepath.Join(s.cwd, "notes.md"), []byte("NOTE-BODY\n"), 0o644)
	os.WriteFile(filepath.Join(s.cwd, "big.log"), []byte(strings.Repeat("y", maxAttachFile+1)), 0o644)
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
