package frontmatter

import (
	"regexp"
	"testing"
)

// ValidName must accept exactly what the documented pattern accepts.
func TestValidAgentName(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	cases := []string{
		"", "a", "Z", "0", "reviewer", "code-reviewer_2.1", "a.b-c_d",
		".hidden", "-x", "_x", "a b", "a/b", "../x", "a\x00", "é", "ok\n", "x:y", "a..b",
	}
	for _, s := range cases {
		if got, want := ValidName(s), re.MatchString(s); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzValidAgentName(f *testing.F) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	for _, s := range []string{"a", ".a", "a-b", "a/b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidName(s), re.MatchString(s); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", s, got, want)
		}
	})
}
