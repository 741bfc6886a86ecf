// Package patch parses and applies patches in the format of Codex's
// apply_patch tool, the one OpenAI's coding models are trained to write:
//
//	*** Begin Patch
//	*** Add File: path
//	+line
//	*** Delete File: path
//	*** Update File: path
//	*** Move to: new/path
//	@@ optional line to find first
//	 context
//	-removed
//	+added
//	*** End of File
//	*** End Patch
//
// It is pure: Parse reads the text, Chunks.Apply turns one file's old text
// into its new text. Reading and writing files is the caller's (the tool
// does it beneath the workspace root).
package patch

import (
	"errors"
	"fmt"
	"strings"
)

// Kind is what a file operation does.
type Kind string

const (
	Add    Kind = "add"
	Delete Kind = "delete"
	Update Kind = "update"
)

// FileOp is one file's part of a patch.
type FileOp struct {
	Kind Kind
	Path string
	// MoveTo is the new path of an Update that renames ("" otherwise).
	MoveTo string
	// Content is an Add's whole new text.
	Content string
	// Chunks are an Update's changes, in file order.
	Chunks []Chunk
}

// Chunk is one @@ section of an Update.
type Chunk struct {
	// Anchor is the text after "@@ " (a line to find before Old), or "".
	Anchor string
	// Old and New are the lines the chunk replaces and puts in their place
	// (context lines are in both).
	Old, New []string
	// Ctx says, for each line of New, which line of Old it is the context
	// line for (-1 for an added line): a context line matched with
	// whitespace fuzz keeps the file's own text.
	Ctx []int
	// EOF says the chunk ends at the end of the file.
	EOF bool
}

// ParseError is a malformed patch; Line is 1-based.
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("invalid patch, line %d: %s", e.Line, e.Msg) }

const (
	beginMarker  = "*** Begin Patch"
	endMarker    = "*** End Patch"
	addMarker    = "*** Add File: "
	deleteMarker = "*** Delete File: "
	updateMarker = "*** Update File: "
	moveMarker   = "*** Move to: "
	eofMarker    = "*** End of File"
)

// Parse reads a patch. Leading and trailing blank lines and a heredoc
// wrapper (<<'EOF' … EOF, as models sometimes send it) are tolerated;
// anything else out of place is a ParseError.
func Parse(text string) ([]FileOp, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	// Trim blank lines at both ends.
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	start := 0
	for start < len(lines) && strings.TrimSpace(lines[start]) == "" {
		start++
	}
	lines = lines[start:]
	if len(lines) >= 2 && strings.HasPrefix(strings.TrimSpace(lines[0]), "<<") && strings.TrimSpace(lines[len(lines)-1]) == strings.Trim(strings.TrimPrefix(strings.TrimSpace(lines[0]), "<<"), `'"`) {
		lines = lines[1 : len(lines)-1]
		start++
	}
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != beginMarker {
		return nil, &ParseError{start + 1, "the first line must be '*** Begin Patch'"}
	}
	if len(lines) < 2 || strings.TrimSpace(lines[len(lines)-1]) != endMarker {
		return nil, &ParseError{start + len(lines), "the last line must be '*** End Patch'"}
	}
	body := lines[1 : len(lines)-1]
	var ops []FileOp
	seen := map[string]bool{}
	i := 0
	ln := func(i int) int { return start + 2 + i }
	for i < len(body) {
		l := body[i]
		switch {
		case strings.HasPrefix(l, addMarker):
			op := FileOp{Kind: Add, Path: strings.TrimSpace(l[len(addMarker):])}
			i++
			var content []string
			for i < len(body) && strings.HasPrefix(body[i], "+") {
				content = append(content, body[i][1:])
				i++
			}
			if len(content) > 0 {
				op.Content = strings.Join(content, "\n") + "\n"
			}
			ops = append(ops, op)
		case strings.HasPrefix(l, deleteMarker):
			ops = append(ops, FileOp{Kind: Delete, Path: strings.TrimSpace(l[len(deleteMarker):])})
			i++
		case strings.HasPrefix(l, updateMarker):
			op := FileOp{Kind: Update, Path: strings.TrimSpace(l[len(updateMarker):])}
			i++
			if i < len(body) && strings.HasPrefix(body[i], moveMarker) {
				op.MoveTo = strings.TrimSpace(body[i][len(moveMarker):])
				if op.MoveTo == "" {
					return nil, &ParseError{ln(i), "'*** Move to:' names no path"}
				}
				i++
			}
			chunks, next, err := parseChunks(body, i, ln)
			if err != nil {
				return nil, err
			}
			if len(chunks) == 0 {
				return nil, &ParseError{ln(i - 1), fmt.Sprintf("update of %s has no changes", op.Path)}
			}
			op.Chunks, i = chunks, next
			ops = append(ops, op)
		case strings.TrimSpace(l) == "":
			i++
			continue
		default:
			return nil, &ParseError{ln(i), fmt.Sprintf("expected '*** Add File:', '*** Delete File:' or '*** Update File:', got %q", cut(l))}
		}
		last := ops[len(ops)-1]
		if last.Path == "" {
			return nil, &ParseError{ln(i - 1), "a file operation names no path"}
		}
		for _, p := range []string{last.Path, last.MoveTo} {
			if p == "" {
				continue
			}
			if seen[p] {
				return nil, &ParseError{ln(i - 1), fmt.Sprintf("%s is named by more than one operation", p)}
			}
			seen[p] = true
		}
	}
	if len(ops) == 0 {
		return nil, &ParseError{start + 1, "the patch changes no file"}
	}
	return ops, nil
}

// parseChunks reads an Update's chunks from body[i:], up to the next file
// operation; it returns them and the index after them.
func parseChunks(body []string, i int, ln func(int) int) ([]Chunk, int, error) {
	var chunks []Chunk
	var cur *Chunk
	for i < len(body) {
		l := body[i]
		if strings.HasPrefix(l, "*** ") && l != eofMarker {
			if strings.HasPrefix(l, addMarker) || strings.HasPrefix(l, deleteMarker) || strings.HasPrefix(l, updateMarker) {
				break
			}
			return nil, 0, &ParseError{ln(i), fmt.Sprintf("unexpected %q inside an update", cut(l))}
		}
		switch {
		case l == eofMarker:
			if cur == nil {
				return nil, 0, &ParseError{ln(i), "'*** End of File' before any change"}
			}
			cur.EOF = true
			cur = nil
		case strings.HasPrefix(l, "@@"):
			chunks = append(chunks, Chunk{Anchor: strings.TrimSpace(strings.TrimPrefix(l, "@@"))})
			cur = &chunks[len(chunks)-1]
		case l == "" || l[0] == ' ' || l[0] == '-' || l[0] == '+':
			if cur == nil {
				if len(chunks) > 0 && chunks[len(chunks)-1].EOF {
					return nil, 0, &ParseError{ln(i), "a change after '*** End of File'"}
				}
				chunks = append(chunks, Chunk{})
				cur = &chunks[len(chunks)-1]
			}
			text := ""
			if l != "" {
				text = l[1:]
			}
			switch {
			case l == "" || l[0] == ' ':
				cur.Old = append(cur.Old, text)
				cur.New = append(cur.New, text)
				cur.Ctx = append(cur.Ctx, len(cur.Old)-1)
			case l[0] == '-':
				cur.Old = append(cur.Old, text)
			default:
				cur.New = append(cur.New, text)
				cur.Ctx = append(cur.Ctx, -1)
			}
		default:
			return nil, 0, &ParseError{ln(i), fmt.Sprintf("a change line must start with ' ', '-', '+' or '@@', got %q", cut(l))}
		}
		i++
	}
	for _, c := range chunks {
		if len(c.Old) == 0 && len(c.New) == 0 && c.Anchor == "" {
			return nil, 0, &ParseError{ln(i - 1), "an empty @@ chunk"}
		}
	}
	return chunks, i, nil
}

func cut(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// ErrNoMatch is wrapped by Apply when a chunk's lines are not in the file.
var ErrNoMatch = errors.New("the lines to change were not found")

// Apply applies chunks, in order, to text and returns the new text. Lines
// are matched exactly first, then ignoring trailing whitespace, then
// ignoring surrounding whitespace (Codex's fuzz). A file's CRLF endings
// and final newline are kept.
func Apply(text string, chunks []Chunk) (string, error) {
	crlf := strings.Contains(text, "\r\n")
	if crlf {
		text = strings.ReplaceAll(text, "\r\n", "\n")
	}
	finalNL := strings.HasSuffix(text, "\n") || text == ""
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if text == "" {
		lines = nil
	}
	cursor := 0
	type repl struct {
		at, n int
		with  []string
	}
	var repls []repl
	for ci, c := range chunks {
		if c.Anchor != "" {
			at := find(lines, []string{c.Anchor}, cursor, false)
			if at < 0 {
				return "", fmt.Errorf("chunk %d: %w: no line %q", ci+1, ErrNoMatch, cut(c.Anchor))
			}
			cursor = at + 1
		}
		old, nw := c.Old, c.New
		if len(old) == 0 {
			// Pure addition: at the end of the file, or after the anchor.
			at := len(lines)
			if c.Anchor != "" && !c.EOF {
				at = cursor
			}
			repls = append(repls, repl{at, 0, nw})
			continue
		}
		at := find(lines, old, cursor, c.EOF)
		if at < 0 && len(old) > 0 && old[len(old)-1] == "" {
			// A trailing empty context line stands for the final newline.
			old, nw = old[:len(old)-1], trimLastEmpty(nw)
			at = find(lines, old, cursor, c.EOF)
		}
		if at < 0 {
			return "", fmt.Errorf("chunk %d: %w:\n%s", ci+1, ErrNoMatch, cut(strings.Join(old, "\n")))
		}
		with := make([]string, len(nw))
		for i, l := range nw {
			if i < len(c.Ctx) && c.Ctx[i] >= 0 && c.Ctx[i] < len(old) {
				l = lines[at+c.Ctx[i]]
			}
			with[i] = l
		}
		repls = append(repls, repl{at, len(old), with})
		cursor = at + len(old)
	}
	var out []string
	pos := 0
	for _, r := range repls {
		if r.at < pos {
			return "", fmt.Errorf("%w: two chunks change the same lines", ErrNoMatch)
		}
		out = append(out, lines[pos:r.at]...)
		out = append(out, r.with...)
		pos = r.at + r.n
	}
	out = append(out, lines[pos:]...)
	res := strings.Join(out, "\n")
	if finalNL && len(out) > 0 {
		res += "\n"
	}
	if crlf {
		res = strings.ReplaceAll(res, "\n", "\r\n")
	}
	return res, nil
}

func trimLastEmpty(s []string) []string {
	if len(s) > 0 && s[len(s)-1] == "" {
		return s[:len(s)-1]
	}
	return s
}

// find returns where pat starts in lines at or after from (at the end when
// eof), trying exact, trailing-space and surrounding-space comparisons in
// turn; -1 if nowhere.
func find(lines, pat []string, from int, eof bool) int {
	for _, norm := range []func(string) string{
		func(s string) string { return s },
		func(s string) string { return strings.TrimRight(s, " \t\r") },
		strings.TrimSpace,
	} {
		if eof {
			if at := len(lines) - len(pat); at >= from && equalAt(lines, pat, at, norm) {
				return at
			}
			continue
		}
		for at := from; at+len(pat) <= len(lines); at++ {
			if equalAt(lines, pat, at, norm) {
				return at
			}
		}
	}
	return -1
}

func equalAt(lines, pat []string, at int, norm func(string) string) bool {
	for i, p := range pat {
		if norm(lines[at+i]) != norm(p) {
			return false
		}
	}
	return true
}
