package tui

import (
	"fmt"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tui/pick"
	"github.com/reinsdev/reins/internal/tui/termtext"
)

// The filterable picker of /model and /resume (issue 48): it takes the
// keys while it is up — typing filters, Up and Down move, Enter chooses,
// Esc (or Ctrl-C) closes — and is drawn in the editor's place.

// pickerRows bounds the rows a picker shows at once; the rest scroll.
const pickerRows = 10

// pickRow is one choice: id is what Enter chooses, key and text what the
// filter matches (pick.Rank), row what is shown (escaped by its maker);
// a row in a later group sorts after every row of an earlier one
// (models without a key after those with one).
type pickRow struct {
	id, key, text, row string
	group              int
}

type picker struct {
	title  string
	rows   []pickRow
	filter string
	sel    int
	choose func(m *Model, id string) tea.Cmd
}

// shown are the rows the filter matches: by group, then how well they
// match, then in their order.
func (p *picker) shown() []pickRow {
	type ranked struct {
		r    pickRow
		rank int
	}
	var rs []ranked
	for _, r := range p.rows {
		rank := 3
		if p.filter != "" {
			rank = pick.Rank(p.filter, r.key, r.text)
		}
		if rank > 0 {
			rs = append(rs, ranked{r, rank})
		}
	}
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].r.group != rs[j].r.group {
			return rs[i].r.group < rs[j].r.group
		}
		return rs[i].rank > rs[j].rank
	})
	out := make([]pickRow, len(rs))
	for i := range rs {
		out[i] = rs[i].r
	}
	return out
}

// openPicker puts a picker up, filtered by filter to begin with.
func (m *Model) openPicker(p *picker, filter string) {
	p.filter = filter
	m.picker = p
	m.notice = ""
}

// pickerKey is a key while the picker is up.
func (m *Model) pickerKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.picker
	n := len(p.shown())
	switch s := k.String(); s {
	case "esc", "ctrl+c":
		m.picker = nil
		return nil
	case "ctrl+d":
		return m.quit()
	case "enter", "tab":
		rows := p.shown()
		if len(rows) == 0 {
			return nil
		}
		m.picker = nil
		return p.choose(m, rows[min(p.sel, len(rows)-1)].id)
	case "up", "ctrl+p":
		if p.sel > 0 {
			p.sel--
		}
	case "down", "ctrl+n":
		if p.sel < n-1 {
			p.sel++
		}
	case "pgup":
		p.sel = max(p.sel-pickerRows, 0)
	case "pgdown":
		p.sel = max(min(p.sel+pickerRows, n-1), 0)
	case "backspace", "ctrl+h":
		if r := []rune(p.filter); len(r) > 0 {
			p.filter, p.sel = string(r[:len(r)-1]), 0
		}
	case "ctrl+u":
		p.filter, p.sel = "", 0
	default:
		p.typed(k.Text)
	}
	return nil
}

// typed adds text typed or pasted to the filter (bounded, no controls).
func (p *picker) typed(text string) {
	if text != "" && len(p.filter) < 200 {
		r := []rune(p.filter + strings.Map(printable, text))
		p.filter, p.sel = string(r[:min(len(r), 200)]), 0
	}
}

// printable drops control characters from typed filter text.
func printable(r rune) rune {
	if r < ' ' || r == 0x7f {
		return -1
	}
	return r
}

// pickerView draws the picker: its title, the filter, a window of rows
// around the selection, and the keys.
func (m *Model) pickerView() []string {
	p := m.picker
	rows := p.shown()
	w := m.width
	out := []string{m.st.bold.Render(p.title), termtext.Fit("filter: "+termsafe.EscapeLine(p.filter)+"▏", w)}
	if len(rows) == 0 {
		out = append(out, m.st.dim.Render("  nothing matches"))
	}
	p.sel = max(min(p.sel, len(rows)-1), 0)
	first := max(0, min(p.sel-pickerRows/2, len(rows)-pickerRows))
	if first > 0 {
		out = append(out, m.st.dim.Render(fmt.Sprintf("  … %d above", first)))
	}
	for i := first; i < len(rows) && i < first+pickerRows; i++ {
		mark, st := "  ", m.st.dim
		if i == p.sel {
			mark, st = "› ", m.st.bold
		}
		out = append(out, termtext.Fit(st.Render(mark+rows[i].row), w))
	}
	if rest := len(rows) - first - pickerRows; rest > 0 {
		out = append(out, m.st.dim.Render(fmt.Sprintf("  … %d more (type to filter)", rest)))
	}
	out = append(out, m.st.dim.Render("↑↓ move · Enter chooses · Esc closes"))
	return out
}
