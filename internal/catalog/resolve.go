package catalog

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// family is what a short name means: the provider and the id prefix of
// its models.
type family struct{ provider, prefix string }

// shorts are the short model names of SPEC §12, sorted by name; each
// resolves to the newest model of its family in the catalogue. A table
// and not a map: the compiler lays it out, where a map literal would be
// built at every reins start (internal/lazy).
var shorts = [...]struct {
	name string
	family
}{
	{"deepseek", family{"deepseek", "deepseek-"}},
	{"gemini", family{"gemini", "gemini-"}},
	{"gpt", family{"openai", "gpt-"}},
	{"haiku", family{"anthropic", "claude-haiku-"}},
	{"opus", family{"anthropic", "claude-opus-"}},
	{"sonnet", family{"anthropic", "claude-sonnet-"}},
}

// ShortNames are the short model names, sorted.
func ShortNames() []string {
	names := make([]string, len(shorts))
	for i, s := range shorts {
		names[i] = s.name
	}
	return names
}

// short is the family a short name means.
func short(name string) (family, bool) {
	for _, s := range shorts {
		if s.name == name {
			return s.family, true
		}
	}
	return family{}, false
}

// NameError is a model name the catalogue cannot resolve: unknown, or
// ambiguous (Ambiguous: it names a model of more than one provider).
// Closest lists the nearest catalogue specs, best first.
type NameError struct {
	Name      string
	Ambiguous bool
	Closest   []string
}

func (e *NameError) Error() string {
	what := "no model named %s"
	if e.Ambiguous {
		what = "model name %s is ambiguous"
	}
	msg := fmt.Sprintf(what, strconv.Quote(bounded(e.Name)))
	if len(e.Closest) > 0 {
		msg += "; did you mean " + strings.Join(e.Closest, ", ") + "?"
	}
	return msg + " (reins models lists them; -m PROVIDER/MODEL names any model)"
}

func bounded(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// Resolve turns a model name without its provider into provider and id:
// a short name (ShortNames) to the provider's default model when that is
// of its family, else to the newest model of its family; any other name
// to the one catalogue model of that id (an undated id finds its dated
// release). Ties between models of one version go to the provider's
// default, then to catalogue order. Anything else is a *NameError.
func (c *Catalogue) Resolve(name string) (provider, id string, err error) {
	if f, ok := short(name); ok {
		// The provider's default, when it is of the family: -m sonnet and
		// no -m then name one model (issue 48: they named claude-sonnet-5
		// and claude-sonnet-4-6), the one the catalogue recommends.
		if def := c.defaults[f.provider]; def != "" && strings.HasPrefix(def, f.prefix) {
			if m, ok := c.Lookup(f.provider, def); ok {
				return m.Provider, m.ID, nil
			}
		}
		if m, ok := c.newest(f); ok {
			return m.Provider, m.ID, nil
		}
	}
	var found []Model
	for _, p := range Providers {
		if m, ok := c.Lookup(p, name); ok {
			found = append(found, m)
		}
	}
	switch len(found) {
	case 1:
		return found[0].Provider, found[0].ID, nil
	case 0:
		return "", "", &NameError{Name: name, Closest: c.closest(name, 5)}
	}
	specs := make([]string, len(found))
	for i, m := range found {
		specs[i] = m.Spec()
	}
	return "", "", &NameError{Name: name, Ambiguous: true, Closest: specs}
}

// newest is the model of family f with the highest version.
func (c *Catalogue) newest(f family) (Model, bool) {
	var best Model
	var bestV []int
	found := false
	def := c.defaults[f.provider]
	for _, m := range c.Models {
		if m.Provider != f.provider || !strings.HasPrefix(m.ID, f.prefix) {
			continue
		}
		v := version(m.ID[len(f.prefix):])
		switch d := slices.Compare(v, bestV); {
		case !found || d > 0, d == 0 && m.ID == def:
			best, bestV, found = m, v, true
		}
	}
	return best, found
}

// version is the numbers in an id's tail, dates (6 digits or more) left
// out: "4-1-20250805" → [4 1], "5.6-sol" → [5 6], "v4-pro" → [4].
func version(s string) []int {
	var v []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsDigit(r) }) {
		if len(f) >= 6 {
			continue
		}
		n, _ := strconv.Atoi(f)
		v = append(v, n)
	}
	return v
}

// closest are the n catalogue specs nearest name: those containing it
// first, then by edit distance of the id.
func (c *Catalogue) closest(name string, n int) []string {
	type cand struct {
		spec string
		sub  bool
		dist int
	}
	low := strings.ToLower(name)
	var cs []cand
	for _, m := range c.Models {
		d := Distance(low, m.ID)
		for _, w := range strings.Split(m.ID, "-") {
			d = min(d, Distance(low, w))
		}
		cs = append(cs, cand{m.Spec(), strings.Contains(m.ID, low), d})
	}
	var out []string
	for _, s := range ShortNames() {
		if Distance(low, s) <= 2 {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		if a.sub != b.sub {
			if a.sub {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.dist, b.dist)
	})
	for _, x := range cs[:min(n, len(cs))] {
		if !x.sub && x.dist > max(2, len(low)/3) {
			break
		}
		out = append(out, x.spec)
	}
	return out
}

// Distance is the Levenshtein distance of a and b (bytes).
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
