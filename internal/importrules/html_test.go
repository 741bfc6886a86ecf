package importrules

import "testing"

// TestBinaryLinksNoXNetHTML: the reins binary links no golang.org/x/net/html.
// Its package initialiser built the 2,231-entry entity maps (and the atom
// table) in every reins process at start — 0.7–0.9 ms and 113,144 bytes in
// `GODEBUG=inittrace=1 reins version` — for the webfetch tool alone, which
// now tokenizes with its own internal/webfetch/tokenize.go (issue 27). The
// webfetch tests still import x/net/html as their reference.
func TestBinaryLinksNoXNetHTML(t *testing.T) {
	if bad := linked(deps(t, "cmd/reins"), []string{"golang.org/x/net/html"}); len(bad) > 0 {
		t.Errorf("cmd/reins links %v; webfetch must not bring x/net/html back (internal/webfetch/tokenize.go)", bad)
	}
}
