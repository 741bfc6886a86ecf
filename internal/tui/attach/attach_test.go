package attach

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRead: an @path is read through the workspace's root:
// outside paths and symlinks out are refused, a FIFO does not block, a
// binary file is refused, a large one is cut to MaxFile and its
// whole size reported.
func TestRead(t *testing.T) {
	ws, out := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(out, "secret"), []byte("SECRET"), 0o644)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello"), 0o644)
	os.WriteFile(filepath.Join(ws, "bin"), []byte("a\x00b"), 0o644)
	os.WriteFile(filepath.Join(ws, "big"), []byte(strings.Repeat("x", MaxFile+1000)), 0o644)
	os.Symlink(filepath.Join(out, "secret"), filepath.Join(ws, "link"))
	os.Mkdir(filepath.Join(ws, "dir"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, data, size, err := Read(ws, "./a.txt")
	if err != nil || rel != "a.txt" || string(data) != "hello" || size != 5 {
		t.Errorf("a.txt: %q %q %d %v", rel, data, size, err)
	}
	if rel, _, _, err := Read(ws, filepath.Join(ws, "a.txt")); err != nil || rel != "a.txt" {
		t.Errorf("absolute inside: %q %v", rel, err)
	}
	_, data, size, err = Read(ws, "big")
	if err != nil || len(data) != MaxFile || size != MaxFile+1000 {
		t.Errorf("big: %d of %d, %v", len(data), size, err)
	}
	if _, _, _, err := Read(ws, "nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	for _, ref := range []string{"../" + filepath.Base(out) + "/secret", filepath.Join(out, "secret"), "link", "a.txt/../../x"} {
		_, data, _, err := Read(ws, ref)
		if err == nil || strings.Contains(string(data), "SECRET") {
			t.Errorf("%s: read %q, err %v", ref, data, err)
		}
	}
	for _, ref := range []string{"bin", "dir", "fifo"} {
		if _, _, _, err := Read(ws, ref); err == nil {
			t.Errorf("%s was attached", ref)
		}
	}
}

// TestFilesBound: a prompt attaches at most MaxFiles files, once each,
// and says which it left out; an @word that is no file stays text.
func TestFilesBound(t *testing.T) {
	ws := t.TempDir()
	var prompt strings.Builder
	prompt.WriteString("@nobody ")
	for i := range MaxFiles + 2 {
		name := fmt.Sprintf("f%d.txt", i)
		os.WriteFile(filepath.Join(ws, name), []byte("x"), 0o644)
		fmt.Fprintf(&prompt, "@%s, @%s ", name, name)
	}
	blocks, notes := Files(ws, prompt.String())
	if len(blocks) != MaxFiles || len(notes) != MaxFiles+2 || !strings.Contains(notes[MaxFiles], "at most 8 files") {
		t.Errorf("%d blocks, notes %q", len(blocks), notes)
	}
}

// TestComplete: one best match replaces the word (and ends it); several
// fill in their common prefix and are listed, shallow first, escaped,
// at most maxCompletions; none says so.
func TestComplete(t *testing.T) {
	files := []string{"internal/tui/model.go", "README.md", "internal/tui/model_test.go", "docs/x\x1b.md"}
	if r, n := Complete("@READ", files); r != "@README.md " || n != "" {
		t.Errorf("one match: %q, %q", r, n)
	}
	if r, n := Complete("@internal/tui/mo", files); r != "@internal/tui/model" || n != "internal/tui/model.go  internal/tui/model_test.go" {
		t.Errorf("two matches: %q, %q", r, n)
	}
	if r, n := Complete("@zzz\x1b", files); r != "" || n != `no workspace file matches @zzz\x1b` {
		t.Errorf("none: %q, %q", r, n)
	}
	var many []string
	for i := range maxCompletions + 3 {
		many = append(many, fmt.Sprintf("f%02d.go", i))
	}
	if _, n := Complete("@f", many); !strings.HasPrefix(n, "f00.go  f01.go") || !strings.HasSuffix(n, "f09.go  … 3 more") {
		t.Errorf("many: %q", n)
	}
}

// TestRanked: @'s list puts a base name that starts with the query first,
// then one that contains it, then a path that does, then letters in
// order; shorter paths first within a rank. For @t, two.txt comes before
// md.txt (issue 48: md.txt came first).
func TestRanked(t *testing.T) {
	for _, c := range []struct {
		q     string
		files []string
		want  []string
	}{
		{"t", []string{"md.txt", "two.txt"}, []string{"two.txt", "md.txt"}},
		{"T", []string{"md.txt", "Two.txt"}, []string{"Two.txt", "md.txt"}},
		{"two", []string{"a/b/two.go", "two.go", "net/twoway.go", "two/x.go", "t_w_o.go", "zzz"}, []string{"two.go", "a/b/two.go", "net/twoway.go", "two/x.go", "t_w_o.go"}},
		{"read", []string{"docs/README.md", "README.md", "thread.go", "reader/a.go"}, []string{"README.md", "docs/README.md", "thread.go", "reader/a.go"}},
		{"", []string{"b.go", "a.go", "c/d.go"}, []string{"a.go", "b.go", "c/d.go"}},
		{"nothing", []string{"a.go"}, []string{}},
	} {
		got := Ranked(c.q, c.files)
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("Ranked(%q, %q) = %q, want %q", c.q, c.files, got, c.want)
		}
	}
}

// TestTyped: a prompt with files and a command's output attached splits
// into the text typed and one note per block; a prompt without any stays.
func TestTyped(t *testing.T) {
	full := "read @two.txt please\n\n<shell command=\"ls -l\">\nx\n</shell>\n\n<file path=\"two.txt\">\nTWO-BODY\n</file>\n\n<file path=\"a\\\"b\x1b.md\">\n<file path=\"inner.txt\">\n</file>"
	typed, notes := Typed(full)
	if typed != "read @two.txt please" {
		t.Errorf("typed %q", typed)
	}
	want := []string{"output of !ls -l attached", "@two.txt attached", `@a"b\x1b.md attached`, "@inner.txt attached"}
	if strings.Join(notes, "|") != strings.Join(want, "|") {
		t.Errorf("notes %q, want %q", notes, want)
	}
	if typed, notes := Typed("plain\n\nprompt"); typed != "plain\n\nprompt" || notes != nil {
		t.Errorf("plain: %q %q", typed, notes)
	}
}
