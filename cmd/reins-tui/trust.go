package main

import (
	"context"
	"io"
	"sync"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/trust"
	"github.com/reinsdev/reins/internal/tui"
)

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
func trustQuestion(f *cli.InteractiveFlags, h *harness.Harness, opened *harnesses) *tui.TrustQuestion {
	if h.Trusted || len(h.Ignored) == 0 {
		return nil
	}
	dir, err := trust.Canonical(h.Cwd)
	if err != nil {
		dir = h.Cwd
	}
	return &tui.TrustQuestion{
		AskNow: !trust.NeverAsked(h.Home, dir),
		Trust: func(ctx context.Context) (*harness.Harness, harness.SessionOptions, error) {
			if _, err := trust.New(h.Home).Trust(ctx, h.Cwd); err != nil {
				return nil, harness.SessionOptions{}, err
			}
			rf := f.OpenFlags
			rf.Cwd, rf.Resume, rf.Continue = h.Cwd, "", false
			nh, o, _, err := cli.OpenSession(io.Discard, &rf)
			if err != nil {
				return nil, o, err
			}
			opened.add(nh)
			return nh, o, nil
		},
		Never: func() error { return trust.AddNeverAsk(h.Home, dir) },
	}
}
