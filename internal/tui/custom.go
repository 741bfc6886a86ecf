package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/trust"
	"github.com/reinsdev/reins/internal/tui/attach"
	"github.com/reinsdev/reins/internal/tui/termtext"
)

// customNames are the names Tab completes besides the built-in commands:
// the custom commands (a:b, and b where it names one) and the skills.
func (m *Model) customNames() []string {
	if m.sess == nil {
		return nil
	}
	var out []string
	for _, c := range m.sess.Commands.List() {
		out = append(out, c.FullName())
		if c.Namespace != "" {
			if got, ok := m.sess.Commands.Get(c.Name); ok && got == c {
				out = append(out, c.Name)
			}
		}
	}
	if m.sess.Skills != nil {
		for _, sk := range m.sess.Skills.Set.List() {
			out = append(out, sk.Name)
		}
	}
	return out
}

// customHelp is /help's list of the custom commands, or "".
func (m *Model) customHelp() string {
	if m.sess == nil || len(m.sess.Commands.List()) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("custom commands:\n")
	for _, c := range m.sess.Commands.List() {
		name := "/" + c.FullName()
		if c.ArgumentHint != "" {
			name += " " + c.ArgumentHint
		}
		fmt.Fprintf(&b, "  %-12s %s %s\n", termsafe.EscapeLine(termtext.Cut(name, 60)), termsafe.EscapeLine(termtext.Cut(c.Description, 80)), termsafe.EscapeLine(c.Label()))
	}
	return b.String()
}

// cmdSkills is /skills: the skills the model can load, with where each
// came from.
func (m *Model) cmdSkills(string) tea.Cmd {
	if m.sess == nil || m.sess.Skills == nil {
		m.say("no skills (folders with SKILL.md in $REINS_HOME/skills, ~/.claude/skills, ~/.agents/skills, or a trusted project's .reins/skills, .claude/skills, .agents/skills)")
		return nil
	}
	var b strings.Builder
	b.WriteString("skills (/NAME runs one):")
	for _, sk := range m.sess.Skills.Set.List() {
		fmt.Fprintf(&b, "\n  %s (%s) %s", termsafe.EscapeLine(sk.Name), sk.Origin, termsafe.EscapeLine(termtext.Cut(sk.Description, 80)))
	}
	m.say(b.String())
	return nil
}

// custom runs line when its /NAME is a custom command or a skill and no
// built-in command: a turn whose prompt is the expansion (the inline
// commands run at the turn's start, inside it, so Esc stops them), with
// the @paths of the expansion attached as a typed prompt's are.
func (m *Model) custom(line string) (tea.Cmd, bool) {
	name, _, ok := harness.SlashName(line)
	if !ok || m.sess == nil || builtin(name) {
		return nil, false
	}
	c, isCmd := m.sess.Commands.Get(name)
	isSkill := false
	if m.sess.Skills != nil {
		_, isSkill = m.sess.Skills.Set.Get(name)
	}
	if !isCmd && !isSkill {
		return nil, false
	}
	if m.running || m.trustQ != nil {
		m.say(fmt.Sprintf("/%s: a turn is running; wait for it or press Esc", termsafe.EscapeLine(termtext.Cut(name, 40))))
		return nil, true
	}
	sess, cwd := m.sess, m.h.Cwd
	if isCmd && c.Model != "" {
		// The command's model for this one turn, then the session's
		// again, as in Claude Code: switched here and given back when
		// the turn is done, both between turns (agent.Agent's rule).
		if cm, restore, err := m.h.CommandModel(sess.Agent, m.opts.Session.Model, c.Model); err == nil {
			m.afterTurn = restore
			m.say(fmt.Sprintf("/%s runs on %s/%s", termsafe.EscapeLine(termtext.Cut(name, 40)), termsafe.EscapeLine(cm.Provider), termsafe.EscapeLine(cm.Name)))
		} else {
			m.say(fmt.Sprintf("/%s: its model %s is not one reins can use; running on %s", termsafe.EscapeLine(termtext.Cut(name, 40)), trust.Quote(c.Model), termsafe.EscapeLine(m.modelName())))
		}
	}
	m.sentAny = true
	begin := m.beginUndo(sess, line)
	return m.runTurn(line, func(ctx context.Context) (agent.TurnResult, *bool) {
		defer begin(ctx)()
		exp, _ := sess.Slash(ctx, line)
		full := exp.Prompt
		if files, _ := attach.Files(cwd, full); len(files) > 0 {
			full += "\n\n" + strings.Join(files, "\n\n")
		}
		return sess.Run(ctx, full), nil
	}), true
}

// builtin reports whether name is a built-in command: it wins over a
// custom command or skill of the same name.
func builtin(name string) bool {
	for _, c := range commands {
		if c.Name == name {
			return true
		}
	}
	return false
}
