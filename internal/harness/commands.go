package harness

import (
	"context"
	"strings"
	"time"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/commands"
	"github.com/reinsdev/reins/internal/skills"
	"github.com/reinsdev/reins/internal/tool"
)

// InlineTimeout bounds one inline !`command` of a custom command.
const InlineTimeout = 30 * time.Second

// commandsFor is the custom commands of workspace ws (skillsFor's rule).
func (h *Harness) commandsFor(ws string) *commands.Set {
	if ws == h.Cwd || h.gate == nil {
		return h.Commands
	}
	set, _ := commands.Discover(commands.Options(h.skillOptions(ws)))
	return set
}

// Slash is what a /NAME line of the user stands for: a custom command
// or a skill run as one.
type Slash struct {
	// Prompt is the text the turn sends.
	Prompt string
	// Model is a custom command's `model` ("": the session's).
	Model string
	// Command or Skill is what answered.
	Command *commands.Command
	Skill   *skills.Skill
}

// SlashName splits a /NAME ARGS line; ok is false when line is no such
// line.
func SlashName(line string) (name, args string, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "/")
	if !ok {
		return "", "", false
	}
	name, args, _ = strings.Cut(rest, " ")
	if i := strings.IndexAny(name, "\n\t"); i >= 0 {
		name, args = name[:i], rest[i:]
	}
	return name, strings.TrimSpace(args), name != ""
}

// Slash expands line when its /NAME is one of the session's custom
// commands (first) or skills: the prompt, with a command's inline
// !`...` run confined in the session's sandbox (only files the user
// wrote or pinned are loaded at all) and its arguments passed to them as
// data. The command's or skill's allowed-tools narrow the turn about to
// start; a skill's load is logged (skill/load, by the user). ok is false
// when nothing answers to NAME.
func (s *Session) Slash(ctx context.Context, line string) (Slash, bool) {
	name, args, ok := SlashName(line)
	if !ok {
		return Slash{}, false
	}
	if c, ok := s.Commands.Get(name); ok {
		run := func(ctx context.Context, command string, params []string, arguments string) string {
			r := tool.RunShell(ctx, s.Agent.Env, command, params, map[string]string{"ARGUMENTS": arguments}, InlineTimeout, commands.MaxInlineOutput)
			// A clean exit says nothing; another keeps its status line.
			return strings.TrimSuffix(strings.TrimRight(r.Content, "\n"), "\n[exit code 0]")
		}
		text := c.Expand(ctx, args, run)
		s.Narrowing.Limit(c.AllowedTools, "the command /"+c.FullName(), true)
		return Slash{Prompt: text, Model: c.Model, Command: c}, true
	}
	if s.Skills != nil {
		if sk, ok := s.Skills.Set.Get(name); ok {
			text, _ := s.Skills.Load(name, skills.ByUser)
			if args != "" {
				text += "\n\nARGUMENTS: " + args
			}
			return Slash{Prompt: text, Skill: sk}, true
		}
	}
	return Slash{}, false
}

// CommandModel puts a on a custom command's model (spec, its `model:`)
// for one turn, as Claude Code runs a command on its model and then goes
// back: restore gives a the model it had. cur is the session's model: a
// spec on cur's provider keeps cur's base URL, as a child's does. Call it
// between turns; an error (a model reins cannot use) leaves a as it was.
func (h *Harness) CommandModel(a *agent.Agent, cur *Model, spec string) (m *Model, restore func(), err error) {
	prov, _, err := h.Config.ResolveModel(spec)
	if err != nil {
		return nil, nil, &ConfigError{err}
	}
	base := ""
	if cur != nil && prov == cur.Provider {
		base = cur.BaseURL
	}
	if m, err = h.ResolveModel(spec, base); err != nil {
		return nil, nil, err
	}
	model, name, prov0, retry, cost, window, maxOut, ctxs := a.Model, a.ModelName, a.Provider, a.Retry, a.Cost, a.Window, a.MaxOutput, a.Context
	h.UseModel(a, m)
	return m, func() {
		a.Model, a.ModelName, a.Provider, a.Retry, a.Cost = model, name, prov0, retry, cost
		a.Window, a.MaxOutput, a.Context = window, maxOut, ctxs
	}, nil
}
