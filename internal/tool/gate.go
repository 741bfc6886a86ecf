package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinsdev/reins/internal/rules"
	"github.com/reinsdev/reins/internal/search"
)

// Rules decide calls by the session's permission rules (rules.Set).
// Registry.Run asks them before the approval hook: deny beats allow beats
// asking. rule is the rule that decided, as written, for the result and
// the screen.
type Rules interface {
	Decide(name string, args json.RawMessage) (v rules.Verdict, rule string)
}

// Answer is a user's answer to an approval question: OK allows the call;
// a refusal may carry the user's instruction, which the model gets with
// the refusal ("no, do this instead").
type Answer struct {
	OK   bool
	Note string
	// Mode, on a refusal nobody was asked about, is the mode that refused
	// it ("read-only": the terminal's plan mode) and How what changes it
	// ("Shift-Tab"): the model is told it was the mode, not a person.
	Mode, How string
}

// approve asks env's approval hook about a call: Ask when set (it can
// carry an instruction), else Approve; no hook approves.
func (env *Env) approve(ctx context.Context, name string, args json.RawMessage) Answer {
	switch {
	case env.Ask != nil:
		return env.Ask(ctx, name, args)
	case env.Approve != nil:
		return Answer{OK: env.Approve(ctx, name, args)}
	}
	return Answer{OK: true}
}

// asks reports whether env has an approval hook.
func (env *Env) asks() bool { return env.Ask != nil || env.Approve != nil }

// gate is the decision before a call runs, in one place: a deny rule
// refuses, an allow rule lets it through unasked, and otherwise a tool
// that needs more than read-only access asks the approval hook. ok false
// comes with the error result the model gets.
func (env *Env) gate(ctx context.Context, t Tool, name string, args json.RawMessage) (Result, bool) {
	verdict, rule := rules.VerdictAsk, ""
	if env.Rules != nil {
		verdict, rule = env.Rules.Decide(name, args)
	}
	switch {
	case verdict == rules.VerdictDeny:
		return Errorf("the %s call is denied by the permission rule %s", name, rule), false
	case verdict == rules.VerdictAllow || t.Needs() == ReadOnly || !env.asks():
		return Result{}, true
	}
	ans := env.approve(ctx, name, args)
	if ans.OK {
		return Result{}, true
	}
	return Refusal(name, ans), false
}

// gateHooked is gate after the PreToolUse hooks decided pre: a hook's
// allow spares the question as an allow rule would (a deny rule still
// refuses); a hook's ask asks even a call the gate would let through, and
// refuses it when there is nobody to ask.
func (env *Env) gateHooked(ctx context.Context, t Tool, name string, args json.RawMessage, pre PreVerdict) (Result, bool) {
	if !pre.Allow && !pre.Ask {
		return env.gate(ctx, t, name, args)
	}
	verdict, rule := rules.VerdictAsk, ""
	if env.Rules != nil {
		verdict, rule = env.Rules.Decide(name, args)
	}
	if verdict == rules.VerdictDeny {
		return Errorf("the %s call is denied by the permission rule %s", name, rule), false
	}
	if !pre.Ask {
		return Result{}, true
	}
	if !env.asks() {
		return Errorf("the %s call was refused: a PreToolUse hook asked for the user's confirmation and nobody can be asked in this session", name), false
	}
	ans := env.approve(ctx, name, args)
	if ans.OK {
		return Result{}, true
	}
	return Refusal(name, ans), false
}

// Refusal is the error result of a call ans refused: the user's refusal
// (with the instruction typed with it), or the mode's, naming the mode
// and what changes it. IsRefusal recognizes every one of them.
func Refusal(name string, ans Answer) Result {
	switch {
	case ans.Mode != "":
		return Errorf("the %s call was refused: the session is in %s mode, so it was refused without asking anyone; the user can change the mode with %s", name, ans.Mode, ans.How)
	case ans.Note != "":
		return Errorf("the %s call was not approved. The user says instead: %s", name, ans.Note)
	}
	return Errorf("the %s call was not approved", name)
}

// refusalHeads are the starts of the results gate and Registry.Run give a
// call they did not let run.
var refusalHeads = []string{"the %s call was not approved", "the %s call was refused: ", "the %s call is denied by the permission rule ", "tool %s is not permitted in ", "the %s call was blocked by a PreToolUse hook: "}

// IsRefusal reports whether content, an error result of a call of tool
// name, is a refusal (a question answered no, a mode, a rule): how a
// child's row and result tell a refused call from a failed one.
func IsRefusal(name, content string) bool {
	for _, h := range refusalHeads {
		if strings.HasPrefix(content, fmt.Sprintf(h, name)) {
			return true
		}
	}
	return false
}

// MatchPath reports whether the slash path name matches the glob pattern
// (the glob tool's syntax: * and ? within a segment, ** across segments,
// {a,b} alternatives). A malformed pattern is an error.
func MatchPath(pattern, name string) (bool, error) {
	m, err := search.CompileGlob(pattern)
	if err != nil {
		return false, err
	}
	return m.Match(name), nil
}
