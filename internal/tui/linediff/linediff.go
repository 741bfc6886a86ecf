// Package linediff is the line diff an approval question and a settled
// edit show: the changes with a few lines of context, the unchanged runs
// between them folded into one gap line, and a bounded table, so a large
// file costs no more than its changed middle allows.
package linediff

import "strings"

// Kind is what a line of a diff does.
type Kind byte

// The kinds of line.
const (
	Same Kind = ' '
	Del  Kind = '-'
	Add  Kind = '+'
	Gap  Kind = '~' // unchanged lines left out between hunks
)

// Line is one line of a diff; for Gap, Text is empty and N counts the
// lines left out.
type Line struct {
	Kind Kind
	Text string
	N    int
}

// maxDiffCells bounds the table of the line diff (lines before × lines
// after of the part that differs): past it the changed middle is shown as
// all its old lines removed and all its new lines added, which is still
// every removed and added line, only less tight.
const maxDiffCells = 1 << 20

// Lines is the diff of two texts by lines, the changes with ctx lines
// of context around each and the unchanged runs between them folded into
// one gap line. Common head and tail are taken off first, so the usual
// edit (a few lines in a long file) costs no table at all.
func Lines(before, after string, ctx int) []Line {
	a, b := splitLines(before), splitLines(after)
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tailN := 0
	for tailN < len(a)-head && tailN < len(b)-head && a[len(a)-1-tailN] == b[len(b)-1-tailN] {
		tailN++
	}
	var all []Line
	for _, l := range a[:head] {
		all = append(all, Line{Kind: Same, Text: l})
	}
	all = append(all, middleDiff(a[head:len(a)-tailN], b[head:len(b)-tailN])...)
	for _, l := range a[len(a)-tailN:] {
		all = append(all, Line{Kind: Same, Text: l})
	}
	return fold(all, ctx)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// middleDiff is the longest-common-subsequence diff of a and b, or all of
// a removed and all of b added when the table would be too big.
func middleDiff(a, b []string) []Line {
	var out []Line
	if len(a) == 0 || len(b) == 0 || len(a)*len(b) > maxDiffCells {
		for _, l := range a {
			out = append(out, Line{Kind: Del, Text: l})
		}
		for _, l := range b {
			out = append(out, Line{Kind: Add, Text: l})
		}
		return out
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	w := len(b) + 1
	lcs := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out = append(out, Line{Kind: Same, Text: a[i]})
			i++
			j++
		case j < len(b) && (i == len(a) || lcs[i*w+j+1] > lcs[(i+1)*w+j]):
			out = append(out, Line{Kind: Add, Text: b[j]})
			j++
		default:
			out = append(out, Line{Kind: Del, Text: a[i]})
			i++
		}
	}
	// Removed lines first within a change, as diff -u shows them.
	for k := 0; k < len(out); {
		if out[k].Kind == Same {
			k++
			continue
		}
		e := k
		for e < len(out) && out[e].Kind != Same {
			e++
		}
		var del, add []Line
		for _, l := range out[k:e] {
			if l.Kind == Del {
				del = append(del, l)
			} else {
				add = append(add, l)
			}
		}
		copy(out[k:], append(del, add...))
		k = e
	}
	return out
}

// fold keeps ctx unchanged lines around each change and replaces the
// other unchanged runs with a gap line.
func fold(all []Line, ctx int) []Line {
	keep := make([]bool, len(all))
	for i, l := range all {
		if l.Kind == Same {
			continue
		}
		for k := max(0, i-ctx); k <= min(len(all)-1, i+ctx); k++ {
			keep[k] = true
		}
	}
	var out []Line
	for i := 0; i < len(all); {
		if keep[i] {
			out = append(out, all[i])
			i++
			continue
		}
		e := i
		for e < len(all) && !keep[e] {
			e++
		}
		out = append(out, Line{Kind: Gap, N: e - i})
		i = e
	}
	return out
}
