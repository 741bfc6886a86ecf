package tui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/procmem"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/trust"
	"github.com/reinsdev/reins/internal/tui/childtree"
	"github.com/reinsdev/reins/internal/tui/sessionlist"
	"github.com/reinsdev/reins/internal/tui/slash"
	"github.com/reinsdev/reins/internal/tui/termtext"
)

// commands are the slash commands, in the order /help lists them.
var commands slash.Set[*Model]

func init() {
	commands = slash.Set[*Model]{
		{Name: "help", Help: "this list, and the keys", Run: (*Model).cmdHelp},
		{Name: "agents", Help: "the agent definitions a subagent can run as", Run: (*Model).cmdAgents},
		{Name: "skills", Help: "the Agent Skills the model can load; /NAME runs one as a command", Run: (*Model).cmdSkills},
		{Name: "jobs", Help: "background jobs of this session", Run: (*Model).cmdJobs},
		{Name: "model", Args: "[NAME]", Help: "switch the model: alone, a picker of the catalogue (type to filter); PROVIDER/MODEL, an alias or part of a name", Idle: true, Run: (*Model).cmdModel},
		{Name: "compact", Help: "summarise the conversation to free context", Idle: true, Run: (*Model).cmdCompact},
		{Name: "cost", Help: "tokens and cost of this session", Run: (*Model).cmdCost},
		{Name: "log", Help: "where this session's log is, and how to render it", Run: (*Model).cmdLog},
		{Name: "resume", Args: "[TEXT]", Help: "continue another session of this workspace: a picker (type to filter by id or first prompt), or its id", Idle: true, Run: (*Model).cmdResume},
		{Name: "new", Help: "start a new session", Idle: true, Run: (*Model).cmdNew},
		{Name: "clear", Help: "start a new session (as /new)", Idle: true, Run: (*Model).cmdNew},
		{Name: "undo", Help: "put back the files the last turn changed (edits, and in git what commands changed)", Idle: true, Run: (*Model).cmdUndo},
		{Name: "rewind", Args: "[N]", Help: "go back to before prompt N: its files restored, the conversation forked from there", Idle: true, Run: (*Model).cmdRewind},
		{Name: "init", Help: "draft AGENTS.md for this repository through the model (the write asks with its diff)", Idle: true, Run: (*Model).cmdInit},
		{Name: "trust", Help: "trust this folder, so its instructions, agents and MCP servers are used", Idle: true, Run: (*Model).cmdTrust},
		{Name: "quit", Help: "exit (also Ctrl-D)", Run: func(m *Model, _ string) tea.Cmd { return m.quit() }},
		{Name: "exit", Help: "exit (as /quit)", Run: func(m *Model, _ string) tea.Cmd { return m.quit() }},
	}
}

// slash runs a slash command line: a built-in command, else a custom
// command or a skill (custom.go).
func (m *Model) slash(line string) tea.Cmd {
	if cmd, ok := m.custom(line); ok {
		return cmd
	}
	cmd, say := commands.Run(m, line, m.running)
	if say != "" {
		m.say(say)
	}
	return cmd
}

// say commits one of reins's own lines (never model text unescaped).
func (m *Model) say(s string) { m.commit(m.st.dim.Render(s)) }

func (m *Model) cmdHelp(string) tea.Cmd {
	var b strings.Builder
	b.WriteString("commands:\n" + commands.Help())
	b.WriteString(m.customHelp())
	b.WriteString("keys: Enter sends · Alt-Enter (Shift-Enter) new line · Up/Down history · Ctrl-O full transcript (reasoning, whole results)\n")
	b.WriteString("      Esc or Ctrl-C cancels the running turn · Ctrl-C twice or Ctrl-D exits\n")
	b.WriteString("      Shift-Tab cycles ask → auto-edit → read-only · Tab completes /commands\n      a prompt sent while a turn runs is queued")
	m.say(b.String())
	return nil
}

func (m *Model) cmdAgents(string) tea.Cmd {
	list := m.h.Agents.List()
	if len(list) == 0 {
		m.say("no agent definitions (see docs/agents.md)")
		return nil
	}
	var b strings.Builder
	b.WriteString("agents:")
	for _, a := range list {
		prov := a.Provider
		if prov == "" {
			prov = "inprocess"
		}
		fmt.Fprintf(&b, "\n  %s (%s) %s", termsafe.EscapeLine(a.Name), termsafe.EscapeLine(prov), termsafe.EscapeLine(termtext.Cut(a.Description, 80)))
	}
	m.say(b.String())
	return nil
}

func (m *Model) cmdJobs(string) tea.Cmd {
	jobs := append(append([]*childtree.Node(nil), m.pastJobs...), m.tree.Jobs()...)
	var kept []subagent.KeptChild
	if m.sess != nil && m.sess.Subagents != nil {
		kept = m.sess.Subagents.KeptChildren()
	}
	if len(jobs) == 0 && len(kept) == 0 {
		m.say("no background jobs in this session")
		return nil
	}
	var b strings.Builder
	if len(jobs) > 0 {
		b.WriteString("jobs:")
		for _, j := range jobs {
			b.WriteString("\n  " + j.Line(m.now(), m.st.tree()))
		}
	}
	if len(kept) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("kept children (idle until continued; stopped after subagents.idleTimeout):")
		for _, k := range kept {
			b.WriteString("\n  " + keptLine(k, m.now()))
		}
	}
	m.say(b.String())
	return nil
}

// keptLine is one kept child in /jobs: its id, agent, how long it has
// been idle, when it stops, and for a process its tree's resident memory.
func keptLine(k subagent.KeptChild, now time.Time) string {
	line := fmt.Sprintf("%s  %s (%s)  idle %s, stops in %s", termsafe.EscapeLine(k.ID), termsafe.EscapeLine(k.Agent), termsafe.EscapeLine(k.Provider),
		now.Sub(k.Since).Round(time.Second), max(k.Stops.Sub(now), 0).Round(time.Second))
	if k.Pid > 0 {
		if rss, ok := procmem.TreeRSS(k.Pid); ok {
			line += fmt.Sprintf(", %d MB resident", (rss+500_000)/1_000_000)
		}
	}
	return line
}

func (m *Model) cmdModel(arg string) tea.Cmd {
	nm, err := m.h.ResolveModel(arg, m.opts.BaseURL)
	if arg == "" || err != nil && !strings.Contains(arg, "/") {
		spec, ok := m.pickModel(arg)
		if !ok {
			return nil
		}
		return m.useModel(spec)
	} else if err != nil {
		m.say("/model: " + termsafe.EscapeLine(err.Error()))
		return nil
	}
	m.switchModel(nm)
	return nil
}

// useModel switches to the model spec names (the picker's choice).
func (m *Model) useModel(spec string) tea.Cmd {
	nm, err := m.h.ResolveModel(spec, m.opts.BaseURL)
	if err != nil {
		m.say("/model: " + termsafe.EscapeLine(err.Error()))
		return nil
	}
	m.switchModel(nm)
	return nil
}

// switchModel makes nm the model from the next turn on.
func (m *Model) switchModel(nm *harness.Model) {
	// Between turns the agent's fields may change (agent.Agent); new
	// children, /new and /resume take the template's model.
	m.h.UseModel(m.sess.Agent, nm)
	m.opts.Session.Model = nm
	m.say("model: " + termsafe.EscapeLine(m.modelName()))
}

// cmdCompact summarizes the older history now (agent.Compact, as `reins
// compact` does) as a turn of its own: Esc cancels it and the log records
// it like any turn.
func (m *Model) cmdCompact(string) tea.Cmd {
	return m.runTurn("/compact", func(ctx context.Context) (agent.TurnResult, *bool) {
		res, ok := m.sess.Agent.Compact(ctx)
		return res, &ok
	})
}

// cmdCost says the session's usage, cost and time in turns by the one rule
// (session.Tally), children included; a running turn counts its steps so
// far (its children count once they settle).
func (m *Model) cmdCost(string) tea.Cmd {
	m.say(costLine(m.root, &m.tally))
	return nil
}

// costLine is what /cost says of a session's tally.
func costLine(id string, t *session.Tally) string {
	u := t.Usage()
	cost := "unknown (no price for this model)"
	if u.CostUSD != nil {
		cost = budget.Dollars(*u.CostUSD)
	}
	return fmt.Sprintf("session %s: %d input tokens (%d cached), %d output tokens; cost %s; %d turn(s) in %s",
		id, u.InputTokens, u.CacheReadTokens, u.OutputTokens, cost, len(t.Turns),
		(time.Duration(t.DurationMs()) * time.Millisecond).String())
}

func (m *Model) cmdLog(string) tea.Cmd {
	m.say(fmt.Sprintf("log: %s\nrender it with: reins log %s · continue it with: reins run --resume %s PROMPT",
		trust.Quote(m.sess.Log.Path()), m.root, sessionlist.ShortID(m.root)))
	return nil
}

func (m *Model) cmdNew(string) tea.Cmd {
	o := m.opts.Session
	o.Resume = ""
	m.switchTo(o)
	return nil
}

func (m *Model) cmdResume(arg string) tea.Cmd {
	id, err := session.Resolve(m.h.SessionsDir(), arg)
	if arg == "" || err != nil {
		// Not an id's prefix: pick among this folder's sessions.
		var ok bool
		if id, ok = m.cmdResumePick(arg); !ok {
			return nil
		}
	}
	return m.resumeID(id)
}

// resumeID continues session id of this folder (the picker's choice).
func (m *Model) resumeID(id string) tea.Cmd {
	if id == m.root {
		m.say("/resume: that is this session")
		return nil
	}
	ld, err := session.Load(filepath.Join(m.h.SessionsDir(), id, session.FileName))
	if err != nil {
		m.say("/resume: " + termsafe.EscapeLine(err.Error()))
		return nil
	}
	if ld.Header.Cwd != m.h.Cwd {
		m.say(fmt.Sprintf("/resume: session %s belongs to %s; run there: reins --resume %s", id, trust.Quote(ld.Header.Cwd), id))
		return nil
	}
	o := m.opts.Session
	o.Resume = id
	m.switchTo(o)
	return nil
}

// switchTo opens the session o and closes the current one; on failure the
// current one stays.
func (m *Model) switchTo(o harness.SessionOptions) {
	s, err := m.h.NewSession(o)
	if err != nil {
		m.say("could not open the session: " + termsafe.EscapeLine(err.Error()))
		return
	}
	if err := m.sess.Close(); err != nil {
		m.say("closing the previous session: " + termsafe.EscapeLine(err.Error()))
	}
	m.setSession(s)
	m.commit(m.banner())
	if s.Resumed != nil {
		m.replay(s.Resumed.Events)
	}
}
