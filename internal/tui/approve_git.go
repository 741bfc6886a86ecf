package tui

import (
	"context"

	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tui/termtext"
)

// The .git question (issue 47 item 1): every .git is read-only to
// sandboxed commands, so a bash call of the session's that failed on it
// (tool.Env.AskGitWritable; the condition of the result's .git hint) asks
// "run again with .git writable: COMMAND". [y] runs that one command once
// more with .git writable, for that call only, and the model gets the
// second run's result; [n] or Esc leave the first run's result, hint
// included. Enter does not answer: this lifts a wall of the sandbox, so
// only a deliberate y does. Modes and permission rules do not decide it
// (they are about tools, this is about the sandbox); only keys typed after
// it was drawn answer it (approve.go). It belongs to the call, so a turn
// that ends refuses it like a tool's question.

// gitAskName is the name a .git question carries where a tool's name
// would be (the window title).
const gitAskName = ".git"

// maxGitShown caps the command the question shows.
const maxGitShown = 200

// isGit reports whether a is a .git question.
func isGit(a *approval) bool { return a.preview != nil && a.preview.git }

// askGitWritable is the session's harness.SessionOptions.AskGitWritable:
// false when refused, or when ctx ends or the screen closes first.
func (f *feed) askGitWritable(ctx context.Context, command string) bool {
	return f.askSandbox(ctx, gitAskName, &preview{git: true, command: command})
}

// gitShown is the command as the question and its verdict show it:
// escaped, on one line, capped.
func gitShown(a *approval) string {
	return termsafe.EscapeLine(termtext.Cut(a.preview.command, maxGitShown))
}

// gitQuestion is the .git question's text, wrapped to width.
func (m *Model) gitQuestion(a *approval, width int) []string {
	return m.sandboxQuestion("? run again with .git writable: "+gitShown(a),
		"it failed because .git is read-only to sandboxed commands; "+
			"allowing lets this one command change the repository's control folder (hooks and config included)", width)
}

// gitHint is the .git question's last line.
const gitHint = "  [y] once  [n] no  [Esc] no"

// gitKey answers the head .git question with key s.
func (m *Model) gitKey(s string) bool {
	switch s {
	case "y":
		m.answer(true, false)
	case "n", "esc":
		m.answer(false, false)
	default:
		return false
	}
	return true
}

// gitVerdict is the line an answered .git question leaves.
func (m *Model) gitVerdict(a *approval, ok bool) string {
	v := "refused; .git stays read-only"
	if ok {
		v = "running it once more with .git writable"
	}
	return m.st.dim.Render("  .git: " + gitShown(a) + ": " + v)
}
