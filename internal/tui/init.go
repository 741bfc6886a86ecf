package tui

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/agent"
)

// initPrompt is what /init sends the model: it drafts the project's
// AGENTS.md with the write tool, so the user approves the draft from the
// question's diff like any other write (in ask mode). The prompt is fixed
// so the habit is the same in every workspace.
const initPrompt = `Draft this repository's AGENTS.md: the instructions a coding agent reads before working here.

First look at the repository with your read-only tools (ls, glob, grep, read): the README, the build files (go.mod, package.json, Makefile, Cargo.toml, pyproject.toml and the like), the CI configuration, the layout of the source folders, and any existing AGENTS.md or CLAUDE.md.

Then write AGENTS.md at the workspace root with the write tool, in Markdown, short (under about 80 lines), with only what is true of this repository and useful to an agent:
- what the project is, in two or three sentences;
- how to build, test (the whole suite and one test), lint and format, as exact commands;
- the layout: the main folders and what each holds;
- the conventions the code follows (naming, errors, tests) that are not obvious from one file;
- anything an agent must not do here.

If AGENTS.md already exists, keep what is still true and improve it rather than starting over. Do not change any other file. When it is written, say in one or two sentences what you put in it.`

// cmdInit runs the /init turn, shown as "/init" rather than the prompt.
func (m *Model) cmdInit(string) tea.Cmd {
	if m.trustQ != nil {
		m.say("/init: answer the folder question first")
		return nil
	}
	sess := m.sess
	m.sentAny = true
	begin := m.beginUndo(sess, "/init")
	return m.runTurn("/init", func(ctx context.Context) (agent.TurnResult, *bool) {
		defer begin(ctx)()
		return sess.Run(ctx, initPrompt), nil
	})
}
