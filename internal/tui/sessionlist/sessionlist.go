// Package sessionlist is the sessions /resume offers and how its list
// shows one: this folder's top-level sessions that got a prompt, newest
// first, each as one escaped row.
package sessionlist

import (
	"fmt"
	"time"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tui/termtext"
)

// Folder are the top-level sessions under dir of the workspace cwd, other
// than current, that got a prompt, newest first (session.Scan).
func Folder(dir, cwd, current string) ([]session.Info, error) {
	all, err := session.Scan(dir)
	if err != nil {
		return nil, err
	}
	var out []session.Info
	for _, in := range all {
		if in.Err == nil && in.Header.ParentSession == "" && in.Header.Cwd == cwd && in.Header.ID != current && in.Prompt != "" {
			out = append(out, in)
		}
	}
	return out, nil
}

// Row is in's row in the list: short id, age at now, turns, how its last
// turn ended and its first prompt.
func Row(in session.Info, now time.Time) string {
	last := in.Last
	if last == "" {
		last = "no turn"
	}
	return fmt.Sprintf("%s · %s ago · %d turns · %s · %s", ShortID(in.Header.ID), age(now.Sub(in.Header.CreatedAt)),
		in.Turns, termsafe.EscapeLine(last), termsafe.EscapeLine(termtext.Cut(termtext.OneLine(in.Prompt), 60)))
}

// ShortID is a session id's first 20 bytes (its time and 4 random hex
// digits): a unique prefix in practice, and any unique prefix names a
// session.
func ShortID(id string) string {
	if len(id) > 20 {
		return id[:20]
	}
	return id
}

// age is how long ago something was, in its largest whole unit.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
