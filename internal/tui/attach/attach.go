// Package attach is @path in a prompt (issue 30 item 3): Tab completes
// an @word over the workspace's files, and on send every @path that
// names a file of the workspace adds the file's content as context after
// the text typed. Files are read through an os.Root of the workspace, so
// neither a path nor a symlink reaches outside it, and each is bounded.
package attach

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tui/pick"
	"github.com/reinsdev/reins/internal/tui/termtext"
)

// Bounds of @path.
const (
	MaxFile        = 256 << 10 // bytes of one file that go into a prompt
	MaxFiles       = 8         // files one prompt attaches
	maxCompletions = 10        // matches a Tab lists
)

// Complete is Tab on the @word w over the workspace's files, fuzzy:
// replace is what w becomes ("" leaves it): the one best match, or the
// common prefix of several; notice lists several (escaped) or says there
// is none.
func Complete(w string, files []string) (replace, notice string) {
	q := strings.TrimPrefix(w, "@")
	best := pick.Best(q, files, filepath.Base, func(f string) string { return f })
	// Shorter paths first: the file the user means is more often the
	// shallow one.
	sort.SliceStable(best, func(i, j int) bool { return len(best[i]) < len(best[j]) })
	switch len(best) {
	case 0:
		return "", "no workspace file matches " + termsafe.EscapeLine(termtext.Cut(w, 60))
	case 1:
		return "@" + best[0] + " ", ""
	}
	if p := pick.CommonPrefix(best); len(p) > len(q) && strings.HasPrefix(p, q) {
		replace = "@" + p
	}
	shown := best[:min(len(best), maxCompletions)]
	for i := range shown {
		shown[i] = termsafe.EscapeLine(shown[i])
	}
	notice = strings.Join(shown, "  ")
	if len(best) > maxCompletions {
		notice += fmt.Sprintf("  … %d more", len(best)-maxCompletions)
	}
	return replace, notice
}

// atRef finds the @paths of a prompt: an @ at the start or after a blank.
// Compiled on first use: most processes never read a prompt.
var atRef = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`(?:^|\s)@(\S+)`) }}

// Files is the context the @paths of prompt add (cwd is the workspace):
// one block per file, and what the screen says about each (attached,
// cut, refused), escaped. An @word that names no file adds nothing.
func Files(cwd, prompt string) (blocks, notes []string) {
	seen := map[string]bool{}
	for _, sm := range atRef.Get().FindAllStringSubmatch(prompt, -1) {
		ref := strings.TrimRight(sm[1], ".,;:!?)\"'")
		if ref == "" || seen[ref] {
			continue
		}
		seen[ref] = true
		if len(blocks) == MaxFiles {
			notes = append(notes, fmt.Sprintf("@%s: not attached, a prompt attaches at most %d files", termsafe.EscapeLine(termtext.Cut(ref, 80)), MaxFiles))
			continue
		}
		rel, data, size, err := Read(cwd, ref)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // an @word that is not a file: text, as typed
		case err != nil:
			notes = append(notes, "@"+termsafe.EscapeLine(termtext.Cut(ref, 80))+": not attached, "+err.Error())
			continue
		}
		b := fmt.Sprintf("<file path=%q>\n%s", rel, data)
		note := fmt.Sprintf("@%s attached (%s)", termsafe.EscapeLine(rel), termtext.Bytes(size))
		if size > len(data) {
			b += fmt.Sprintf("\n[cut: the first %d of %d bytes]", len(data), size)
			note = fmt.Sprintf("@%s attached, cut to its first %s of %s", termsafe.EscapeLine(rel), termtext.Bytes(len(data)), termtext.Bytes(size))
		}
		blocks = append(blocks, b+"\n</file>")
		notes = append(notes, note)
	}
	return blocks, notes
}

// ErrOutside refuses an @path outside the workspace.
var ErrOutside = errors.New("it is outside the workspace")

// Read reads the file ref names (relative to the workspace cwd, or
// absolute inside it) through an os.Root of the workspace: at most
// MaxFile bytes of a regular text file. rel is its workspace-relative
// slash path, size its whole size. A missing file is fs.ErrNotExist;
// other refusals are errors the screen shows.
func Read(cwd, ref string) (rel string, data []byte, size int, err error) {
	p := filepath.FromSlash(ref)
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(cwd, p)
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "", nil, 0, ErrOutside
		}
		p = r
	}
	p = filepath.Clean(p)
	if p == ".." || strings.HasPrefix(p, ".."+string(filepath.Separator)) {
		return "", nil, 0, ErrOutside
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
		return "", nil, 0, ErrOutside
	case err != nil:
		return "", nil, 0, errors.New("it cannot be opened")
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return "", nil, 0, errors.New("it is not a regular file")
	}
	data, err = io.ReadAll(io.LimitReader(f, MaxFile))
	if err != nil {
		return "", nil, 0, errors.New("it cannot be read")
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return "", nil, 0, errors.New("it is a binary file")
	}
	return filepath.ToSlash(p), data, max(int(st.Size()), len(data)), nil
}

// Rank is how well the query q (an @word without its @) matches the
// workspace path f, case aside — the one rule of @'s list: 4 f's base name
// starts with q, 3 its base name contains q, 2 its path does, 1 q's letters
// come in f's path in order, 0 no match. Ranked sorts by it.
func Rank(q, f string) int {
	q, f = strings.ToLower(q), strings.ToLower(f)
	base := strings.ToLower(filepath.Base(filepath.FromSlash(f)))
	switch {
	case strings.HasPrefix(base, q):
		return 4
	case strings.Contains(base, q):
		return 3
	case strings.Contains(f, q):
		return 2
	}
	i := 0
	for _, r := range q {
		j := strings.IndexRune(f[i:], r)
		if j < 0 {
			return 0
		}
		i += j + len(string(r))
	}
	return 1
}

// Ranked are the files q matches, best first (Rank), then shorter paths
// (the file the user means is more often the shallow one), then by name.
func Ranked(q string, files []string) []string {
	type ranked struct {
		f    string
		rank int
	}
	var rs []ranked
	for _, f := range files {
		if r := Rank(q, f); r > 0 {
			rs = append(rs, ranked{f, r})
		}
	}
	sort.Slice(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		switch {
		case a.rank != b.rank:
			return a.rank > b.rank
		case len(a.f) != len(b.f):
			return len(a.f) < len(b.f)
		}
		return a.f < b.f
	})
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.f
	}
	return out
}

// contextBlock finds the context blocks the screen appends to a prompt
// (Files' <file>, and !command's <shell>) and the name each carries.
var contextBlock = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^<(file path|shell command)=("(?:[^"\\]|\\.)*")>$`)
}}

// Typed splits a prompt as the model got it into the text typed and what
// the screen said of its context blocks ("@PATH attached", "output of
// !COMMAND attached"), escaped: a resumed session's replay shows these
// rather than the files' bodies (issue 48).
func Typed(full string) (typed string, notes []string) {
	i := strings.Index(full, "\n\n<file path=\"")
	if j := strings.Index(full, "\n\n<shell command=\""); j >= 0 && (i < 0 || j < i) {
		i = j
	}
	if i < 0 {
		return full, nil
	}
	for _, sm := range contextBlock.Get().FindAllStringSubmatch(full[i:], MaxFiles+16) {
		name, err := strconv.Unquote(sm[2])
		if err != nil {
			continue
		}
		if sm[1] == "file path" {
			notes = append(notes, "@"+termsafe.EscapeLine(termtext.Cut(name, 80))+" attached")
		} else {
			notes = append(notes, "output of !"+termsafe.EscapeLine(termtext.Cut(name, 80))+" attached")
		}
	}
	return full[:i], notes
}
