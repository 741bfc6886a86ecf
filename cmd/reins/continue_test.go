package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/session"
)

// TestContinueLastActive: -c takes the workspace's session that was last
// worked in and has a turn, not the newest created: the empty session
// that opening and quitting the terminal leaves, or /new's, is passed
// over, and so is a newer session left idle since.
func TestContinueLastActive(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	t.Setenv("REINS_HOME", home)
	root := filepath.Join(home, "sessions")
	base := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	mk := func(min int, turns int, cwd string) string {
		t.Helper()
		at := base.Add(time.Duration(min) * time.Minute)
		h := session.Header{ID: session.NewID(at), CreatedAt: at, Cwd: cwd}
		l, err := session.Create(root, h, session.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range turns {
			l.Append(session.TypeTurnStart, session.TurnStart{Turn: i})
			l.Append(session.TypeTurnEnd, session.TurnEnd{Turn: i, Reason: session.ReasonCompleted})
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		// The log's modification time is the session's last activity.
		if err := os.Chtimes(filepath.Join(root, h.ID, session.FileName), at, at); err != nil {
			t.Fatal(err)
		}
		return h.ID
	}
	older := mk(0, 1, ws)
	worked := mk(1, 2, ws)
	mk(2, 0, ws)          // the terminal opened and quit
	mk(3, 1, t.TempDir()) // another workspace
	mk(4, 0, ws)          // /new
	// worked in last: touched after the empty ones were made
	at := base.Add(10 * time.Minute)
	os.Chtimes(filepath.Join(root, worked, session.FileName), at, at)

	f := &cli.OpenFlags{Continue: true}
	f.Cwd = ws
	if err := cli.PickSession(f); err != nil {
		t.Fatal(err)
	}
	if f.Resume != worked {
		t.Errorf("-c took %s, want %s (older %s)", f.Resume, worked, older)
	}

	empty := t.TempDir()
	mk(20, 0, empty)
	f = &cli.OpenFlags{Continue: true}
	f.Cwd = empty
	if err := cli.PickSession(f); err == nil {
		t.Errorf("-c in a workspace with only an empty session took %s", f.Resume)
	}
}
