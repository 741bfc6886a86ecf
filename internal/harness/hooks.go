package harness

import (
	"cmp"
	"context"
	"encoding/json"
	"path/filepath"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/hooks"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/smallfile"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/internal/trust"
)

// loadHooks reads the hooks of this start (docs/hooks.md): the user's
// ~/.claude/settings.json, the trusted workspace's .claude settings
// (each honoured only with its pinned content) and config `hooks:`.
func loadHooks(cfg *config.Config, cwd string, trusted bool, gate *trust.Gate, getenv func(string) string) (*hooks.Set, error) {
	home := getenv("HOME") // none: no user settings (tests pass no environment)
	layers := make([]hooks.ConfigLayer, 0, len(cfg.Hooks))
	for _, l := range cfg.Hooks {
		layers = append(layers, hooks.ConfigLayer{File: l.File, User: l.User, Hooks: l.Hooks})
	}
	return hooks.Load(hooks.LoadOptions{
		UserHome: home, Cwd: cwd, Trusted: trusted, Honour: gate.Honour,
		Config: layers, Unconfined: cfg.HooksUnconfined,
		ReadFile: func(p string) ([]byte, error) { return smallfile.Read(p, smallfile.Limit) },
	})
}

// attachHooks gives a session made with o its hook runner, when any hook
// is configured: the tool hooks on its Env, the loop's on its Agent.
func (h *Harness) attachHooks(s *Session, o SessionOptions, ws string, perm tool.Permission) {
	if s.Agent == nil || h.Hooks == nil || len(h.Hooks.Hooks) == 0 {
		return
	}
	log := s.Log
	r := &hooks.Runner{
		Set: h.Hooks, SessionID: log.Header().ID, Transcript: log.Path(),
		Cwd: ws, ProjectDir: h.Cwd, PermissionMode: claudeMode(perm),
		Policy: s.Agent.Env.Policy,
		Append: func(typ string, data any) { _, _ = log.Append(typ, data) },
	}
	if o.Parent != "" {
		// As in Claude Code, a child's hooks see its parent's session and
		// transcript, and the child as agent_id, agent_type and (for
		// SubagentStop) agent_transcript_path.
		r.Subagent = true
		r.Agent = hooks.Agent{ID: r.SessionID, Type: cmp.Or(o.Agent, "general"), Transcript: r.Transcript}
		r.SessionID, r.Transcript = o.Parent, filepath.Join(h.SessionsDir(), o.Parent, session.FileName)
	}
	s.Agent.Env.Hooks = r
	s.Agent.Hooks = r
	s.Hooks = r
	if ask := s.Agent.Env.Ask; ask != nil && h.Hooks.Has(hooks.Notification) {
		// The terminal is about to wait for its user: Notification
		// hooks (a desktop notice) run beside the question, never
		// delaying it; Close waits for them.
		s.Agent.Env.Ask = func(ctx context.Context, name string, args json.RawMessage) tool.Answer {
			s.hookWG.Add(1)
			go func() {
				defer s.hookWG.Done()
				r.Notification(context.WithoutCancel(ctx), "reins needs your permission to use "+hooks.ClaudeName(name), "permission_prompt")
			}()
			return ask(ctx, name, args)
		}
	}
	if o.Parent == "" && h.Hooks.Has(hooks.SessionStart) {
		source := "startup"
		if o.Resume != "" {
			source = "resume"
		}
		if extra := r.SessionStart(context.Background(), source); extra != "" {
			s.Agent.Notify(session.NoticeHook, "[SessionStart hook context]\n"+extra)
		}
	}
}

// endHooks runs the SessionEnd hooks of a session that is closing (not a
// child's) and waits for its Notification hooks.
func (s *Session) endHooks() {
	if s.Hooks == nil {
		return
	}
	if !s.Hooks.Subagent {
		s.Hooks.SessionEnd(context.Background(), "other")
	}
	s.hookWG.Wait()
}

// claudeMode is Claude Code's name (permission_mode) of a reins mode.
func claudeMode(p tool.Permission) string {
	switch p {
	case tool.ReadOnly:
		return "plan"
	case tool.FullAccess:
		return "bypassPermissions"
	}
	return "default"
}
