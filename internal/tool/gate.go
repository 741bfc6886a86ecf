package tool

import (
	"context"
	"encoding/json"
)

// Verdict is what the permission rules say of a call before anyone is
// asked (config `permissions:`, internal/rules).
type Verdict string

const (
	// VerdictAsk: no rule names the call; the approval hook decides.
	VerdictAsk Verdict = ""
	// VerdictAllow: an allow rule names it; it runs without a question
	// (the permission mode stays the ceiling).
	VerdictAllow Verdict = "allow"
	// VerdictDeny: a deny rule names it; it is refused with an error
	// result, whatever the mode or the approval hook would say.
	VerdictDeny Verdict = "deny"
)

// Rules decide calls by the session's permission rules. Registry.Run
// asks them before the approval hook: deny beats allow beats asking.
// rule is the rule that decided, as written, for the result and the
// screen.
type Rules interface {
	Decide(name string, args json.RawMessage) (v Verdict, rule string)
}

// Answer is a user's answer to an approval question: OK allows the call;
// a refusal may carry the user's instruction, which the model gets with
// the refusal ("no, do this instead").
type Answer struct {
	OK   bool
	Note string
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
	verdict, rule := VerdictAsk, ""
	if env.Rules != nil {
		verdict, rule = env.Rules.Decide(name, args)
	}
	switch {
	case verdict == VerdictDeny:
		return Errorf("the %s call is denied by the permission rule %s", name, rule), false
	case verdict == VerdictAllow || t.Needs() == ReadOnly || !env.asks():
		return Result{}, true
	}
	ans := env.approve(ctx, name, args)
	if ans.OK {
		return Result{}, true
	}
	if ans.Note != "" {
		return Errorf("the %s call was not approved. The user says instead: %s", name, ans.Note), false
	}
	return Errorf("the %s call was not approved", name), false
}

// MatchPath reports whether the slash path name matches the glob pattern
// (the glob tool's syntax: * and ? within a segment, ** across segments,
// {a,b} alternatives). A malformed pattern is an error.
func MatchPath(pattern, name string) (bool, error) {
	m, err := compileGlob(pattern)
	if err != nil {
		return false, err
	}
	return m.Match(name), nil
}

// CheckPathPattern reports whether pattern is a well-formed glob.
func CheckPathPattern(pattern string) error {
	_, err := compileGlob(pattern)
	return err
}
