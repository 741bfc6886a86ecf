package toolsummary

import (
	"strings"
	"testing"
)

// TestOf: the keys a reader looks for first, the others sorted; strings
// unquoted and on one line; each value and the whole bounded.
func TestOf(t *testing.T) {
	if got := Of(`{"zeta":1,"command":"ls\n-la","path":"a.go"}`); got != "path=a.go command=ls -la zeta=1" {
		t.Errorf("Of = %q", got)
	}
	if got := Of("not json\nat all"); got != "not json at all" {
		t.Errorf("not an object: %q", got)
	}
	long := Of(`{"a":"` + strings.Repeat("x", 200) + `","b":"` + strings.Repeat("y", 200) + `"}`)
	if len(long) > Max || !strings.Contains(long, "a="+strings.Repeat("x", MaxValue-len("…"))+"…") {
		t.Errorf("bounds: %d bytes: %q", len(long), long)
	}
	if Rank("path") != 0 || Rank("other") != len(Keys) {
		t.Error("Rank")
	}
}
