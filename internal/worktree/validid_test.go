package worktree

import (
	"regexp"
	"strings"
	"testing"
)

// TestValidIDMatchesPattern: validID accepts exactly what the regular
// expression it replaced did.
func TestValidIDMatchesPattern(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
	ids := []string{"", "a", "Z", "0", "_", "-", "a_", "a-b", "_a", "-a", "ab c", "a/b", "a.b", "é", "aé",
		"a\n", "a\x00", strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 65), "child-1_x9"}
	for c := range 256 {
		ids = append(ids, string([]byte{byte(c)}), "a"+string([]byte{byte(c)}))
	}
	for _, id := range ids {
		if got, want := validID(id), re.MatchString(id); got != want {
			t.Errorf("validID(%q) = %v, the pattern says %v", id, got, want)
		}
	}
}
