package session

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/reinsdev/reins/internal/llm"
)

// Info sums up one session of a sessions directory for a listing (reins
// log, reins view).
type Info struct {
	Header Header
	Turns  int
	Last   EndReason // the last turn's end reason
	Prompt string    // the first user message
	// Usage and DurationMs are the session's Tally: its turns' usage with
	// its children's, and the time spent in turns.
	Usage      llm.Usage
	DurationMs int64
	// Children is how many children this session started (subagent/start
	// events that are no continuation), of every kind: ACP and pi
	// children keep no reins session, so no header names this one.
	Children int
	Err      error // the log could not be read; Header has only the ID
}

// Scan reads every session of root (a sessions directory), newest first.
// A missing root is no sessions.
func Scan(root string) ([]Info, error) {
	ents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(root, e.Name(), FileName)
		ld, err := Load(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		info := Info{Err: err}
		if err == nil {
			info.Header = ld.Header
			for _, ev := range ld.Events {
				switch d := ev.Payload.(type) {
				case TurnEnd:
					info.Turns++
					info.Last = d.Reason
				case SubagentStart:
					if d.Continues == "" {
						info.Children++
					}
				case UserMessage:
					if info.Prompt == "" && d.Notice == "" { // a prompt, not reins's notice
						info.Prompt = d.Message.Text()
					}
				}
			}
			tally := TallyOf(ld.Events)
			info.Usage, info.DurationMs = tally.Usage(), tally.DurationMs()
		} else {
			info.Header.ID = e.Name()
		}
		out = append(out, info)
	}
	// Newest first: by creation time, then id (ids begin with the second
	// they were made in; an unreadable log has only its id).
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Header, out[j].Header
		if !a.CreatedAt.Equal(b.CreatedAt) && a.ID[:min(len(a.ID), 15)] == b.ID[:min(len(b.ID), 15)] {
			return a.CreatedAt.After(b.CreatedAt)
		}
		return a.ID > b.ID
	})
	return out, nil
}

// ValidID reports whether id can name a session directory: not empty, no
// path separator, not . or .. — an id read from a log or a URL is checked
// with it before it becomes a path.
func ValidID(id string) bool {
	if id == "" || id == "." || id == ".." || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}
