package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/smallfile"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/trust"
)

// Shown of each file: this many lines, each cut at this many bytes.
const (
	pinPreviewLines = 12
	pinPreviewWidth = 160
	// pinQuestions bounds the questions of one start: a file that keeps
	// changing while the user answers is refused in the end.
	pinQuestions = 3
)

// openApproving is cli.OpenSession with the terminal's question for
// project files not yet approved (docs/trust.md "Pinned files"): each is
// shown with its state and the start of its content, and y pins exactly
// the content shown; the harness is then opened again, and checks again.
// Any other answer leaves them unapproved and returns the refusal, whose
// message says what to do, as a headless run would.
func openApproving(ctx context.Context, in io.Reader, stderr io.Writer, f *cli.OpenFlags) (*harness.Harness, harness.SessionOptions, error) {
	for i := 0; ; i++ {
		h, opts, _, err := cli.OpenSession(stderr, f)
		var ue *trust.UnpinnedError
		if err == nil || !errors.As(err, &ue) || i == pinQuestions {
			return h, opts, err
		}
		pins, ok := askPins(in, stderr, ue)
		if !ok {
			return nil, opts, err
		}
		store := trust.New(harness.DefaultHome(os.Getenv))
		for folder, files := range pins {
			if perr := store.PinFiles(ctx, folder, files); perr != nil {
				return nil, opts, perr
			}
		}
	}
}

// askPins shows the refused files and asks once about all of them. It
// returns the pins to record (folder → key → digest of the bytes shown)
// and whether the user approved.
func askPins(in io.Reader, w io.Writer, ue *trust.UnpinnedError) (map[string]map[string]string, bool) {
	pins := map[string]map[string]string{}
	fmt.Fprintf(w, "reins: project files you have not approved (they can choose where your API keys go, start programs and steer the model):\n")
	for _, f := range ue.Files {
		shown := f.Path
		if r, err := filepath.Rel(ue.Cwd, f.Path); err == nil {
			shown = r
		}
		fmt.Fprintf(w, "  %-10s %s\n", f.State, trust.Quote(shown))
		b, err := smallfile.Read(f.Path, smallfile.Limit)
		if err != nil || f.Folder == "" {
			fmt.Fprintf(w, "    (cannot be approved here; run: reins trust --show)\n")
			return nil, false
		}
		previewFile(w, b)
		if pins[f.Folder] == nil {
			pins[f.Folder] = map[string]string{}
		}
		pins[f.Folder][f.Key] = trust.Digest(b)
	}
	fmt.Fprint(w, "Use them as shown? y approves exactly this content (as reins trust would); any other key leaves them unused and stops [y/N] ")
	var key [1]byte
	if _, err := io.ReadFull(in, key[:]); err != nil || (key[0] != 'y' && key[0] != 'Y') {
		fmt.Fprintln(w, "n")
		return nil, false
	}
	fmt.Fprintln(w, "y")
	return pins, true
}

// previewFile writes the first lines of a file's content, escaped: the
// repository wrote it.
func previewFile(w io.Writer, b []byte) {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	for i, l := range lines {
		if i == pinPreviewLines {
			fmt.Fprintf(w, "    │ … %d more lines\n", len(lines)-pinPreviewLines)
			break
		}
		if len(l) > pinPreviewWidth {
			l = termsafe.Clip(l, pinPreviewWidth)
		}
		fmt.Fprintf(w, "    │ %s\n", termsafe.EscapeLine(l))
	}
}
