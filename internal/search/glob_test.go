package search

import (
	"math/rand/v2"
	"path"
	"strings"
	"testing"
	"time"
)

// finishes runs f and fails the test if it has not returned within d: a
// hang is a failure, not a stuck test binary.
func finishes(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*.go", "a.go", true},
		{"*.go", "d/a.go", false},
		{"**/*.go", "a.go", true},
		{"**/*.go", "d/e/a.go", true},
		{"**/*.go", "d/e/a.txt", false},
		{"d/**", "d/e/a.go", true},
		{"d/**", "x/a.go", false},
		{"d/**/a.go", "d/a.go", true},
		{"d/**/a.go", "d/x/y/a.go", true},
		{"d/**/**/a.go", "d/x/a.go", true},
		{"**", "anything/at/all", true},
		{"*.{ts,tsx}", "a.tsx", true},
		{"*.{ts,tsx}", "a.ts", true},
		{"*.{ts,tsx}", "a.js", false},
		{"{src,lib}/**/*.{c,h}", "lib/x/y.h", true},
		{"{src,lib}/**/*.{c,h}", "bin/y.h", false},
		{"{x}", "{x}", true},    // no comma: literal
		{"a{b", "a{b", true},    // unbalanced: literal
		{`\*.go`, "*.go", true}, // escaped meta
		{`\*.go`, "a.go", false},
		{"?.go", "ab.go", false},
		{"[ab].go", "b.go", true},
	}
	for _, tt := range tests {
		m, err := CompileGlob(tt.pattern)
		if err != nil {
			t.Errorf("CompileGlob(%q): %v", tt.pattern, err)
			continue
		}
		if got := m.Match(tt.name); got != tt.want {
			t.Errorf("match(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
	for _, bad := range []string{"[", "a/[b"} {
		if _, err := CompileGlob(bad); err == nil {
			t.Errorf("CompileGlob(%q) accepted a malformed pattern", bad)
		}
	}
	if _, err := CompileGlob(strings.Repeat("{a,b}", 12)); err == nil {
		t.Error("CompileGlob accepted 4096 brace expansions")
	}
}

func TestSplitGlob(t *testing.T) {
	tests := []struct{ pattern, dir, rest string }{
		{"*.go", "", "*.go"},
		{"main.go", "", "main.go"},
		{"internal/tool/*.go", "internal/tool", "*.go"},
		{"internal/**/x.go", "internal", "**/x.go"},
		{"/abs/*.go", "/abs", "*.go"},
		{"/*.go", "/", "*.go"},
	}
	for _, tt := range tests {
		dir, rest := SplitGlob(tt.pattern)
		if dir != tt.dir || rest != tt.rest {
			t.Errorf("SplitGlob(%q) = %q, %q; want %q, %q", tt.pattern, dir, rest, tt.dir, tt.rest)
		}
	}
}

// TestGlobQuickFormAgrees: the allocation-free test of "**/SEG" patterns
// gives the general matcher's answer on every name.
func TestGlobQuickFormAgrees(t *testing.T) {
	pats := []string{"**/*.go", "**/*", "**/x*.go", "**/?.go", "**/[ab].txt", "**/go.mod", "**/*.{go,md}", "**/.env", "**/*."}
	names := []string{"a.go", "b/a.go", "b/c/a.go", "a.go/x", "x.go", "dir/xa.go", "a.txt", "z/b.txt", "go.mod", "m/go.mod",
		".env", "a/.env", "a.md", "x/y/z.md", "a.", "b/c.", "a.gox", ".go", "q/.go", "a/b/c/d/e/f/g.go"}
	for _, p := range pats {
		m, err := CompileGlob(p)
		if err != nil {
			t.Fatalf("CompileGlob(%q): %v", p, err)
		}
		for i, segs := range m.alts {
			if !m.quick[i].ok {
				t.Errorf("%q: alternative %q has no quick form", p, segs)
			}
		}
		for _, n := range names {
			want := false
			for _, segs := range m.alts {
				want = want || matchSegments(segs, strings.Split(n, "/"))
			}
			if got := m.Match(n); got != want {
				t.Errorf("%q.Match(%q) = %v, the general matcher says %v", p, n, got, want)
			}
		}
	}
}

// TestGlobMatchPolynomial: ten "**" groups against a forty-segment name
// that does not match took the backtracking matcher C(40,10) steps.
func TestGlobMatchPolynomial(t *testing.T) {
	pattern := strings.Repeat("**/x/", 10) + "y"
	name := strings.Repeat("x/", 40) + "z"
	m, err := CompileGlob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	finishes(t, 10*time.Second, "matching a hostile pattern", func() {
		if m.Match(name) {
			t.Error("matched")
		}
		if !m.Match(strings.Repeat("x/", 40) + "y") {
			t.Error("did not match")
		}
	})
}

// backtrackMatch is the old recursive matcher, kept as the oracle the
// polynomial one must agree with on small inputs.
func backtrackMatch(p, n []string) bool {
	for len(p) > 0 {
		if p[0] == "**" {
			for len(p) > 0 && p[0] == "**" {
				p = p[1:]
			}
			if len(p) == 0 {
				return true
			}
			for i := range len(n) + 1 {
				if backtrackMatch(p, n[i:]) {
					return true
				}
			}
			return false
		}
		if len(n) == 0 {
			return false
		}
		if ok, _ := path.Match(p[0], n[0]); !ok {
			return false
		}
		p, n = p[1:], n[1:]
	}
	return len(n) == 0
}

// TestGlobMatchAgreesWithBacktracking compares the matcher with the old
// one on every small random pattern and name over a tiny alphabet.
func TestGlobMatchAgreesWithBacktracking(t *testing.T) {
	pick := func(r *rand.Rand, xs []string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = xs[r.IntN(len(xs))]
		}
		return out
	}
	pats := []string{"**", "*", "a", "b", "a*", "?", "[ab]", ""}
	names := []string{"a", "b", "ab", "", "ba"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		p := pick(r, pats, 1+r.IntN(6))
		n := pick(r, names, 1+r.IntN(6))
		pattern, name := strings.Join(p, "/"), strings.Join(n, "/")
		m, err := CompileGlob(pattern)
		if err != nil {
			t.Fatalf("CompileGlob(%q): %v", pattern, err)
		}
		want := backtrackMatch(strings.Split(pattern, "/"), strings.Split(name, "/"))
		if got := m.Match(name); got != want {
			t.Fatalf("Match(%q, %q) = %v, backtracking says %v", pattern, name, got, want)
		}
	}
}

// FuzzGlobMatch checks the matcher against the backtracking oracle.
func FuzzGlobMatch(f *testing.F) {
	f.Add("**/a/**/b", "a/x/b")
	f.Add("a/*/**", "a/b")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if strings.Count(pattern, "/") > 8 || strings.Count(name, "/") > 8 || strings.ContainsAny(pattern, "{}") {
			return
		}
		m, err := CompileGlob(pattern)
		if err != nil {
			return
		}
		want := backtrackMatch(strings.Split(pattern, "/"), strings.Split(name, "/"))
		if got := m.Match(name); got != want {
			t.Fatalf("Match(%q, %q) = %v, backtracking says %v", pattern, name, got, want)
		}
	})
}
