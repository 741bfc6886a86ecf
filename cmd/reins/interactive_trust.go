package main

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/trust"
	"github.com/reinsdev/reins/internal/tui"
)

// neverAskFile lists, in $REINS_HOME, the folders the user told the
// interactive terminal never to ask about trusting ([x] on the question):
// a JSON array of canonical paths. It only silences the question; the
// folder stays untrusted (trusted.json is the one list of trust).
const neverAskFile = "trust-never-ask.json"

func neverAsked(home, dir string) bool {
	b, err := os.ReadFile(filepath.Join(home, neverAskFile))
	if err != nil {
		return false
	}
	var dirs []string
	return json.Unmarshal(b, &dirs) == nil && slices.Contains(dirs, dir)
}

func addNeverAsk(home, dir string) error {
	p := filepath.Join(home, neverAskFile)
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
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, append(out, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// harnesses are the harnesses an interactive session opened after its
// first (trusting the folder opens one that reads its files); all are
// closed when the screen ends.
type harnesses struct {
	mu   sync.Mutex
	list []*harness.Harness
}

func (hs *harnesses) add(h *harness.Harness) {
	hs.mu.Lock()
	hs.list = append(hs.list, h)
	hs.mu.Unlock()
}

func (hs *harnesses) close() {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	for _, h := range hs.list {
		h.Close()
	}
	hs.list = nil
}

// trustQuestion is the screen's folder question for h (nil when h's
// folder is trusted or had nothing to ignore): y trusts it and reopens the
// session's harness with the same flags, so its files apply at once.
func trustQuestion(s *streams, f *interactiveFlags, h *harness.Harness, opened *harnesses) *tui.TrustQuestion {
	if h.Trusted || len(h.Ignored) == 0 {
		return nil
	}
	dir, err := trust.Canonical(h.Cwd)
	if err != nil {
		dir = h.Cwd
	}
	return &tui.TrustQuestion{
		AskNow: !neverAsked(h.Home, dir),
		Trust: func(ctx context.Context) (*harness.Harness, harness.SessionOptions, error) {
			if _, err := trust.New(h.Home).Trust(ctx, h.Cwd); err != nil {
				return nil, harness.SessionOptions{}, err
			}
			rf := f.runFlags
			rf.cwd, rf.resume, rf.cont = h.Cwd, "", false
			quiet := &streams{in: s.in, out: discard{}, err: discard{}}
			nh, o, _, err := openSession(quiet, &rf)
			if err != nil {
				return nil, o, err
			}
			opened.add(nh)
			return nh, o, nil
		},
		Never: func() error { return addNeverAsk(h.Home, dir) },
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
