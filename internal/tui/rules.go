package tui

import (
	"context"
	"encoding/json"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/rules"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/internal/tui/termtext"
)

// The permission rules in the terminal (issue 30 item 7). Config and
// agent-file rules are decided before a question is asked
// (tool.Registry.Run), so an allowed call never reaches the screen and a
// denied one is refused there. The question adds two answers:
//
//   - [a] "always allow this" adds the narrowest rule that covers the
//     call (rules.Narrowest: the exact command, the exact path) to the
//     session's rules, and says which; later calls it covers are not
//     asked, children's included.
//   - [n] asks what the model should do instead: the text typed then
//     (optional) goes to the model with the refusal.

// maxInstruction bounds the instruction a refusal carries.
const maxInstruction = 4 << 10

// answerNote is the session's tool.Env.Ask: the feed's question, whose
// refusal carries the instruction typed with it.
func (f *feed) answerNote(ctx context.Context, name string, args json.RawMessage) tool.Answer {
	return f.answerChild(ctx, "", name, args)
}

// answerChild is the session's harness.SessionOptions.AskChild: a
// child's call is asked like the session's own, under the same mode and
// rules, the question naming the child.
func (f *feed) answerChild(ctx context.Context, child, name string, args json.RawMessage) tool.Answer {
	var ans tool.Answer
	ans.OK = f.askWith(ctx, child, name, args, func(a *approval) {
		ans.Note = a.note
		if a.mode != "" {
			ans.Mode, ans.How = a.mode, modeHow
		}
	})
	return ans
}

// sessionRules is the running session's rule set, nil when it has none.
func (m *Model) sessionRules() *rules.Set {
	if m.sess == nil || m.sess.Agent == nil || m.sess.Agent.Env == nil {
		return nil
	}
	s, _ := m.sess.Agent.Env.Rules.(*rules.Set)
	return s
}

// narrowest is the rule [a] adds for a.
func (m *Model) narrowest(a *approval) rules.Rule {
	return rules.Narrowest(m.h.Cwd, a.name, a.args)
}

// allowAlways is [a]: it adds the narrowest rule covering a for the rest
// of the session and returns what the screen says.
func (m *Model) allowAlways(a *approval) string {
	set := m.sessionRules()
	if set == nil {
		m.always[a.name] = true
		return "allowed for this session"
	}
	r := m.narrowest(a)
	set.Add(r)
	return "allowed; rule " + termsafe.EscapeLine(r.String()) + " added for this session"
}

// ruleAllows reports whether the session's rules now allow a (a question
// asked before [a] added the rule that covers it).
func (m *Model) ruleAllows(a *approval) bool {
	if m.always[a.name] {
		return true
	}
	set := m.sessionRules()
	if set == nil {
		return false
	}
	v, _ := set.Decide(a.name, a.args)
	return v == rules.VerdictAllow
}

// startReject is [n]: the question asks for the optional instruction,
// typed in the editor (its draft is kept and given back).
func (m *Model) startReject() {
	a := m.approvals[0]
	a.rejecting, a.draft = true, m.editor.Value()
	m.editor.Reset()
}

// instructKey handles a key while the head question takes the
// instruction: Enter rejects with it, Esc rejects without, the rest edit.
func (m *Model) instructKey(k tea.KeyPressMsg) tea.Cmd {
	a := m.approvals[0]
	switch k.String() {
	case "enter", "ctrl+j", "esc":
		if k.String() != "esc" {
			a.note = termtext.Cut(strings.TrimSpace(m.editor.Value()), maxInstruction)
		}
		m.answer(false, false) // gives the draft back
		return m.front()
	}
	var cmd tea.Cmd
	m.editor, cmd = m.editor.Update(k)
	return cmd
}

// answerHint is the question's last line.
func (m *Model) answerHint(a *approval) string {
	if a.rejecting {
		return "  rejected: what should it do instead? Type it and Enter (empty: nothing), Esc: nothing"
	}
	always := termsafe.EscapeLine(a.name) + " for this session"
	if m.sessionRules() != nil {
		always = "always allow " + termsafe.EscapeLine(m.narrowest(a).String())
	}
	return "  [y] once  [a] " + always + "  [n] reject…  [Esc] reject"
}
