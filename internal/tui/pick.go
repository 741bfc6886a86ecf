package tui

import (
	"sort"
	"strconv"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/models"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tui/pick"
	"github.com/reinsdev/reins/internal/tui/sessionlist"
	"github.com/reinsdev/reins/internal/tui/termtext"
)

// maxPicks bounds the sessions a /resume list shows.
const maxPicks = 10

// cmdResumePick is /resume without an id: a numbered list of this
// folder's sessions, filtered by arg (fuzzy over the id — the short id in
// the status bar included — and the first prompt); a single best match is
// resumed at once, and /resume N picks from the last list.
func (m *Model) cmdResumePick(arg string) (id string, ok bool) {
	if id, ok := pick.Numbered(arg, m.picks); ok {
		return id, true
	}
	list, err := sessionlist.Folder(m.h.SessionsDir(), m.h.Cwd, m.root)
	if err != nil {
		m.say("/resume: " + termsafe.EscapeLine(err.Error()))
		return "", false
	}
	id, say, ids := sessionlist.Choose(arg, list, maxPicks, m.now())
	if id != "" {
		return id, true
	}
	if ids != nil {
		m.picks = ids
	}
	m.say(say)
	return "", false
}

// completeSlash completes the slash command being typed (Tab,
// slash.Set.Tab).
func (m *Model) completeSlash() tea.Cmd {
	value, notice := commands.Tab(m.editor.Value())
	if value != "" {
		m.editor.SetValue(value)
	}
	if notice != "" {
		m.notice = notice
	}
	return nil
}

// modelChoices are the models /model offers: the catalogue (built-in
// entries and config's) as PROVIDER/MODEL, then the config's aliases.
// One function, so a richer catalogue replaces it in one place.
func (m *Model) modelChoices() []string {
	var out []string
	for _, in := range models.All(m.h.Config.Models) {
		out = append(out, in.Spec)
	}
	aliases := make([]string, 0, len(m.h.Config.ModelAliases))
	for a := range m.h.Config.ModelAliases {
		aliases = append(aliases, a)
	}
	sort.Strings(aliases)
	return append(out, aliases...)
}

// pickModel is /model with no name or a name that does not resolve: a
// numbered list of modelChoices filtered by arg (fuzzy); one best match
// is the choice, and /model N picks from the last list.
func (m *Model) pickModel(arg string) (spec string, ok bool) {
	if spec, ok := pick.Numbered(arg, m.modelPicks); ok {
		return spec, true
	}
	best := pick.Best(arg, m.modelChoices(), func(c string) string { return c }, func(string) string { return "" })
	if arg != "" && len(best) == 1 {
		return best[0], true
	}
	if len(best) == 0 {
		m.say("/model: nothing in the catalogue matches " + strconv.Quote(termsafe.EscapeLine(termtext.Cut(arg, 40))) + " (reins models lists it)")
		return "", false
	}
	rows, ids := pick.List(best, maxPicks*3, func(c string) string { return c }, termsafe.EscapeLine)
	m.modelPicks = ids
	m.say("model: " + termsafe.EscapeLine(m.modelName()) + "; the catalogue (/model N picks, /model TEXT narrows, /model PROVIDER/MODEL names any):" + rows)
	return "", false
}
