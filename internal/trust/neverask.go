package trust

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/reinsdev/reins/internal/private"
)

// NeverAskFile lists, in $REINS_HOME, the folders the user told the
// interactive terminal never to ask about trusting ([x] on the question):
// a JSON array of canonical paths. It only silences the question; the
// folder stays untrusted (FileName is the one list of trust).
const NeverAskFile = "trust-never-ask.json"

// NeverAsked reports whether dir (canonical) is on home's never-ask list.
func NeverAsked(home, dir string) bool {
	b, err := os.ReadFile(filepath.Join(home, NeverAskFile))
	if err != nil {
		return false
	}
	var dirs []string
	return json.Unmarshal(b, &dirs) == nil && slices.Contains(dirs, dir)
}

// AddNeverAsk puts dir (canonical) on home's never-ask list.
func AddNeverAsk(home, dir string) error {
	p := filepath.Join(home, NeverAskFile)
	var dirs []string
	b, err := os.ReadFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		if json.Unmarshal(b, &dirs) != nil {
			dirs = nil // a damaged list is replaced; it only silences a question
		}
	}
	if slices.Contains(dirs, dir) {
		return nil
	}
	out, err := json.MarshalIndent(append(dirs, dir), "", "  ")
	if err != nil {
		return err
	}
	if err := private.Home(home); err != nil {
		return err
	}
	tmp := p + ".tmp"
	os.Remove(tmp) // a stale one keeps its mode through WriteFile
	if err := os.WriteFile(tmp, append(out, '\n'), private.FileMode); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}
