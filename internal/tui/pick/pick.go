// Package pick chooses among items the user narrows by typing: how well
// a query matches an item, the items of the best match, the common
// prefix Tab fills in, and the number that picks from the last numbered
// list (/resume and /model show one).
package pick

import (
	"fmt"
	"strconv"
	"strings"
)

// Rank reports how well q matches an item, case aside: 3 its key
// contains q, 2 its text does, 1 q's letters come in order, 0 no match.
func Rank(q, key, text string) int {
	q, key, text = strings.ToLower(q), strings.ToLower(key), strings.ToLower(text)
	switch {
	case strings.Contains(key, q):
		return 3
	case strings.Contains(text, q):
		return 2
	}
	hay, i := key+" "+text, 0
	for _, r := range q {
		j := strings.IndexRune(hay[i:], r)
		if j < 0 {
			return 0
		}
		i += j + len(string(r))
	}
	return 1
}

// Best is the items of the best rank for q, in their order; every item
// when q is empty, none when nothing matches.
func Best[T any](q string, items []T, key, text func(T) string) []T {
	var best []T
	tier := 0
	for _, it := range items {
		t := 3
		if q != "" {
			t = Rank(q, key(it), text(it))
		}
		switch {
		case t == 0 || t < tier:
		case t > tier:
			best, tier = []T{it}, t
		default:
			best = append(best, it)
		}
	}
	return best
}

// CommonPrefix is the longest prefix every one of ss starts with.
func CommonPrefix(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	p := ss[0]
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

// Numbered is the item arg picks from the last list shown, when arg is
// one of its numbers (1 the first).
func Numbered(arg string, last []string) (string, bool) {
	if n, err := strconv.Atoi(arg); err == nil && n >= 1 && n <= len(last) {
		return last[n-1], true
	}
	return "", false
}

// List numbers the best matches for the user to pick from: at most max
// rows ("\n  N. row"), then how many more; ids are what the numbers pick
// (Numbered).
func List[T any](best []T, max int, id, row func(T) string) (rows string, ids []string) {
	var b strings.Builder
	for i, it := range best {
		if i == max {
			fmt.Fprintf(&b, "\n  … and %d more", len(best)-i)
			break
		}
		ids = append(ids, id(it))
		fmt.Fprintf(&b, "\n  %2d. %s", i+1, row(it))
	}
	return b.String(), ids
}
