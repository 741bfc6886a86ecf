package tui

import (
	"sort"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/models"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tui/pick"
	"github.com/reinsdev/reins/internal/tui/sessionlist"
	"github.com/reinsdev/reins/internal/tui/termtext"
)

// cmdResumePick is /resume without an id: arg filters this folder's
// sessions (fuzzy over the id — the short id in the status bar included —
// and the first prompt); a single best match is resumed at once, several
// (or none typed) open the picker.
func (m *Model) cmdResumePick(arg string) (id string, ok bool) {
	list, err := sessionlist.Folder(m.h.SessionsDir(), m.h.Cwd, m.root)
	if err != nil {
		m.say("/resume: " + termsafe.EscapeLine(err.Error()))
		return "", false
	}
	id, say, _ := sessionlist.Choose(arg, list, maxPicks, m.now())
	if id != "" {
		return id, true
	}
	if len(list) == 0 || !strings.HasPrefix(say, "sessions of this folder") {
		m.say(say)
		return "", false
	}
	p := &picker{title: "resume a session of this folder", choose: (*Model).resumeID}
	for _, in := range list {
		p.rows = append(p.rows, pickRow{id: in.Header.ID, key: in.Header.ID, text: in.Prompt, row: sessionlist.Row(in, m.now())})
	}
	m.openPicker(p, arg)
	return "", false
}

// maxPicks bounds the sessions a "no match" or single-match decision
// considers listing (sessionlist.Choose); the picker shows them all.
const maxPicks = 10

// completeSlash completes the slash command being typed (Tab,
// slash.Set.Tab).
func (m *Model) completeSlash() tea.Cmd {
	value, notice := commands.Tab(m.editor.Value(), m.customNames()...)
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
	for _, in := range models.All(m.h.Config.Models, m.h.Config.ListedModels()) {
		out = append(out, in.Spec)
	}
	aliases := make([]string, 0, len(m.h.Config.ModelAliases))
	for a := range m.h.Config.ModelAliases {
		aliases = append(aliases, a)
	}
	sort.Strings(aliases)
	return append(out, aliases...)
}

// keyMissing is the key variable a provider needs and lacks ("" when it
// has a key or needs none — the mock, a local preset, a provider of the
// config's own without apiKeyEnv — or is the running session's, which
// evidently works): the config's rule (config.Config.MissingKey).
func (m *Model) keyMissing(provider string) string {
	if provider == m.sess.Agent.Provider {
		return ""
	}
	return m.h.Config.MissingKey(provider, m.h.Getenv)
}

// pickModel is /model with no name or a name that does not resolve: arg
// filters modelChoices (fuzzy); one best match is the choice, several (or
// none typed) open the picker, models whose provider has a key first.
func (m *Model) pickModel(arg string) (spec string, ok bool) {
	choices := m.modelChoices()
	best := pick.Best(arg, choices, func(c string) string { return c }, func(string) string { return "" })
	if arg != "" && len(best) == 1 {
		return best[0], true
	}
	if len(best) == 0 {
		m.say("/model: nothing in the catalogue matches " + strconv.Quote(termsafe.EscapeLine(termtext.Cut(arg, 40))) + " (reins models lists it)")
		return "", false
	}
	p := &picker{title: "model: " + termsafe.EscapeLine(m.modelName()) + " — choose another (PROVIDER/MODEL typed in full names any)", choose: (*Model).useModel}
	for _, c := range choices {
		r := pickRow{id: c, key: c, row: termsafe.EscapeLine(c)}
		if prov, _, found := strings.Cut(c, "/"); found {
			if env := m.keyMissing(prov); env != "" {
				r.group, r.row = 1, r.row+" (no key: "+env+")"
			}
		}
		p.rows = append(p.rows, r)
	}
	m.openPicker(p, arg)
	return "", false
}
