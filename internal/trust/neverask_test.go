package trust

import (
	"os"
	"path/filepath"
	"testing"
)

// The never-ask list silences the folder question per folder, survives a
// damaged file (replaced, not an error) and holds each folder once.
func TestNeverAsk(t *testing.T) {
	home := t.TempDir()
	if NeverAsked(home, "/a") {
		t.Fatal("asked nothing yet, but /a is never asked")
	}
	for range 2 {
		if err := AddNeverAsk(home, "/a"); err != nil {
			t.Fatal(err)
		}
	}
	if !NeverAsked(home, "/a") || NeverAsked(home, "/b") {
		t.Fatal("the list does not hold /a only")
	}
	b, err := os.ReadFile(filepath.Join(home, NeverAskFile))
	if err != nil || string(b) != "[\n  \"/a\"\n]\n" {
		t.Fatalf("list %q, %v", b, err)
	}
	if err := os.WriteFile(filepath.Join(home, NeverAskFile), []byte("{damaged"), 0o600); err != nil {
		t.Fatal(err)
	}
	if NeverAsked(home, "/a") {
		t.Fatal("a damaged list silences /a")
	}
	if err := AddNeverAsk(home, "/b"); err != nil || !NeverAsked(home, "/b") {
		t.Fatalf("adding to a damaged list: %v", err)
	}
}
