// Package sessionlist is the sessions /resume offers and how its list
// shows one: this folder's top-level sessions that got a prompt, newest
// first, each as one escaped row.
package sessionlist

import (
	"fmt"
	"strconv"
	"time"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tui/pick"
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

// Choose is /resume's choice for arg among list (fuzzy over the id —
// the short id in the status bar included — and the first prompt): the
// one best match of a non-empty arg; otherwise what the screen says, the
// best matches numbered (at most max, ids the numbered ones) or that none
// matches.
func Choose(arg string, list []session.Info, max int, now time.Time) (id, say string, ids []string) {
	sid := func(in session.Info) string { return in.Header.ID }
	best := pick.Best(arg, list, sid, func(in session.Info) string { return in.Prompt })
	switch {
	case arg != "" && len(best) == 1:
		return best[0].Header.ID, "", nil
	case len(best) == 0 && arg == "":
		return "", "/resume: no other session in this folder yet", nil
	case len(best) == 0:
		return "", "/resume: no session of this folder matches " + strconv.Quote(termsafe.EscapeLine(termtext.Cut(arg, 40))), nil
	}
	rows, ids := pick.List(best, max, sid, func(in session.Info) string { return Row(in, now) })
	return "", "sessions of this folder (/resume N picks one, /resume TEXT narrows):" + rows, ids
}

// Row is in's row in the list: short id, age at now, turns, how its last
// turn ended and its first prompt.
func Row(in session.Info, now time.Time) string {
	last := string(in.Last)
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
