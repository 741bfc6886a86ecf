package harness

import (
	"context"
	"encoding/json"

	"github.com/reinsdev/reins/internal/patch"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/tool"
)

// fileTools are the tools that change files by name; bash changes them
// too, but what it touches is not known before it runs (the interactive
// terminal snapshots a git working tree before each turn for that).
var fileTools = []string{"write", "edit", "multi_edit", "apply_patch"}

// RecordChanges makes the session call before with the paths a write,
// edit, multi_edit or apply_patch call is about to change, after it was
// approved and just before it runs, so that the caller can keep their
// before-images (the interactive /undo). Paths are absolute, resolved by
// the session's own rule (tool.Env.Resolve); a path the tool will refuse
// is left out. Children are not covered: their sessions have tools of
// their own. Call it before the session runs.
func (s *Session) RecordChanges(before func(paths []string)) {
	for _, name := range fileTools {
		if t, ok := s.Agent.Tools.Get(name); ok {
			s.Agent.Tools.Add(&recorded{Tool: t, before: before})
		}
	}
}

// recorded is a file-changing tool that reports what it will change first.
type recorded struct {
	tool.Tool
	before func(paths []string)
}

func (r *recorded) Run(ctx context.Context, env *tool.Env, args json.RawMessage) tool.Result {
	var paths []string
	for _, p := range ChangedPaths(r.Spec().Name, args) {
		if abs, err := env.Resolve(p); err == nil {
			paths = append(paths, abs)
		}
	}
	if len(paths) > 0 {
		r.before(paths)
	}
	return r.Tool.Run(ctx, env, args)
}

// ChangedPaths is the paths (as the model wrote them) a call of a
// file-changing tool names: its path, or for apply_patch every file the
// patch adds, deletes, updates or moves to. Invalid arguments name none
// (the tool refuses them).
func ChangedPaths(name string, args json.RawMessage) []string {
	switch name {
	case "write", "edit", "multi_edit":
		var a struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(args, &a) == nil && a.Path != "" {
			return []string{a.Path}
		}
	case "apply_patch":
		var a struct {
			Input string `json:"input"`
		}
		if json.Unmarshal(args, &a) != nil {
			return nil
		}
		ops, err := patch.Parse(a.Input)
		if err != nil {
			return nil
		}
		var out []string
		for _, op := range ops {
			out = append(out, op.Path)
			if op.MoveTo != "" {
				out = append(out, op.MoveTo)
			}
		}
		return out
	}
	return nil
}

// Fork opens a new session (o, with o.ForkOf naming the session events
// come from) that continues a copy of the conversation in events — a
// prefix of that session's log — written as its turn 0 and loaded as its
// history, as a fork child's is (subagent.Conversation, startFork). The
// interactive /rewind continues from an earlier prompt this way: the
// original session's log is never written to.
func (h *Harness) Fork(o SessionOptions, events []session.Event) (*Session, error) {
	conv, err := subagent.Conversation(events)
	if err != nil {
		return nil, err
	}
	o.Resume = ""
	s, err := h.NewSession(o)
	if err != nil {
		return nil, err
	}
	if err := startFork(s, conv); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}
