package harness

import (
	"context"
	"encoding/json"

	"github.com/reinsdev/reins/internal/patch"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/tool"
)

// RecordChanges makes the session call before just before each call of a
// tool that can change files or start something that can — write, edit,
// multi_edit, apply_patch, bash, every tool that needs more than
// read-only access (MCP tools included), and subagent — after the call
// was approved, with the paths a file tool is about to change (absolute,
// resolved by the session's own rule, tool.Env.Resolve; a path the tool
// will refuse is left out; nil for the other tools). The interactive
// /undo keeps before-images of the paths, and makes every such call wait
// for the working-tree snapshot of the turn, which it takes while the
// model writes its first answer. Children are not covered: their
// sessions have tools of their own. Call it before the session runs.
func (s *Session) RecordChanges(before func(ctx context.Context, paths []string)) {
	reg := s.Agent.Tools
	for _, name := range reg.Names() {
		t, _ := reg.Get(name)
		if t.Needs() == tool.ReadOnly && name != "subagent" {
			continue
		}
		r := &recorded{Tool: t, before: before}
		if ad, ok := t.(tool.Admitter); ok {
			reg.Add(&recordedAdmitter{recorded: r, ad: ad}) // the subagent tool's background admission
		} else {
			reg.Add(r)
		}
	}
}

// recorded is a tool that reports what it will change first.
type recorded struct {
	tool.Tool
	before func(ctx context.Context, paths []string)
}

func (r *recorded) Run(ctx context.Context, env *tool.Env, args json.RawMessage) tool.Result {
	var paths []string
	for _, p := range ChangedPaths(r.Spec().Name, args) {
		if abs, err := env.Resolve(p); err == nil {
			paths = append(paths, abs)
		}
	}
	r.before(ctx, paths)
	return r.Tool.Run(ctx, env, args)
}

// recordedAdmitter is a recorded tool that keeps its Admitter step.
type recordedAdmitter struct {
	*recorded
	ad tool.Admitter
}

func (r *recordedAdmitter) Admit(ctx context.Context, args json.RawMessage) (context.Context, func()) {
	return r.ad.Admit(ctx, args)
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
