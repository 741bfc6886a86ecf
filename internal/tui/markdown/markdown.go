// Package markdown renders answers for the terminal: headings, emphasis, code
// spans and fenced blocks, lists, quotes, rules and GFM tables (columns
// lined up, wide cells wrapped inside their column), wrapped to the width
// with a two-column margin. A paragraph keeps its line breaks (a terminal
// user reads the answer as the model laid it out; CommonMark would join
// them). It is reins's own small renderer rather than glamour: glamour
// links chroma and goldmark, whose package initialisers cost every reins
// process — `reins version`, every `reins sdk` child — about 12 ms at
// start; this one adds no package and compiles its patterns on first use,
// so start-up is unchanged. Its input is escaped first (termsafe), so every
// escape sequence in its output is its own styling; with NO_COLOR the
// text keeps its Markdown markers, which read well as they are.
package markdown

import (
	"regexp"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/tui/termtext"
)

// Renderer renders Markdown at a width, in colour or not.
type Renderer struct {
	noColor bool
	width   int
	st      mdStyles
}

type mdStyles struct {
	heading, bold, italic, code, quote, rule lipgloss.Style
}

// New is a renderer 80 columns wide; noColor keeps the Markdown markers
// and adds no styling.
func New(noColor bool) *Renderer {
	md := &Renderer{noColor: noColor, width: 80}
	if !noColor {
		md.st = mdStyles{
			heading: lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("5")),
			bold:    lipgloss.NewStyle().Bold(true),
			italic:  lipgloss.NewStyle().Italic(true),
			code:    lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
			quote:   lipgloss.NewStyle().Faint(true),
			rule:    lipgloss.NewStyle().Faint(true),
		}
	}
	return md
}

// SetWidth sets the width lines are wrapped to.
func (md *Renderer) SetWidth(w int) { md.width = w }

// mdRe are the renderer's patterns, compiled on first use: compiling
// them at start-up would cost every reins command, not only the screen.
var mdRe = lazy.Value[*mdPatterns]{New: func() *mdPatterns {
	return &mdPatterns{
		listItem:   regexp.MustCompile(`^(\s*)([-*+]|\d{1,9}[.)])\s+`),
		heading:    regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`),
		rule:       regexp.MustCompile(`^\s*([-*_])(\s*([-*_])){2,}\s*$`),
		codeSpan:   regexp.MustCompile("`[^`\n]+`"),
		boldSpan:   regexp.MustCompile(`\*\*([^*\n]+)\*\*|__([^_\n]+)__`),
		italicSpan: regexp.MustCompile(`(^|[^*\w])\*([^*\s][^*\n]*?)\*($|[^*\w])`),
		tableDelim: regexp.MustCompile(`^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$`),
	}
}}

type mdPatterns struct {
	listItem, heading, rule, codeSpan, boldSpan, italicSpan, tableDelim *regexp.Regexp
}

// Render is text (escaped) as styled, wrapped lines.
func (md *Renderer) Render(text string) string {
	re := mdRe.Get()
	w := max(md.width-4, 20)
	var out []string
	var para []string
	// A paragraph keeps its line breaks, as a terminal user reads them
	// (and as the model wrote them); a hard break's marker (two trailing
	// spaces or a backslash) is dropped.
	flush := func() {
		if len(para) > 0 {
			out = append(out, indent(termtext.Wrap(md.inline(strings.Join(para, "\n")), w), "  ", "  "))
			para = nil
		}
	}
	inFence := false
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if !inFence && strings.Contains(trimmed, "|") && i+1 < len(lines) && re.tableDelim.MatchString(strings.TrimSpace(lines[i+1])) &&
			strings.Contains(lines[i+1], "-") && len(splitRow(trimmed)) == len(splitRow(strings.TrimSpace(lines[i+1]))) {
			flush()
			rows := [][]string{splitRow(trimmed)}
			align := tableAlign(splitRow(strings.TrimSpace(lines[i+1])))
			i += 2
			for ; i < len(lines) && strings.TrimSpace(lines[i]) != "" && strings.Contains(lines[i], "|"); i++ {
				rows = append(rows, splitRow(strings.TrimSpace(lines[i])))
			}
			i--
			out = append(out, md.table(rows, align, md.width-2)...)
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			flush()
			inFence = !inFence
			if md.noColor {
				out = append(out, termtext.Fit("  "+line, md.width))
			}
			continue
		}
		if inFence {
			out = append(out, termtext.Fit("    "+md.st.code.Render(line), md.width))
			continue
		}
		switch {
		case trimmed == "":
			flush()
			out = append(out, "")
		case re.heading.MatchString(trimmed):
			flush()
			h := re.heading.FindStringSubmatch(trimmed)
			if md.noColor {
				out = append(out, indent(termtext.Wrap(trimmed, w), "  ", "  "))
			} else {
				out = append(out, indent(termtext.Wrap(md.st.heading.Render(md.inline(h[2])), w), "  ", "  "))
			}
		case re.rule.MatchString(trimmed):
			flush()
			out = append(out, "  "+md.st.rule.Render(strings.Repeat("─", min(w, 40))))
		case strings.HasPrefix(trimmed, ">"):
			flush()
			q := strings.TrimSpace(strings.TrimPrefix(trimmed, ">"))
			out = append(out, indent(termtext.Wrap(md.inline(q), w-2), "  "+md.st.quote.Render("│ "), "  "+md.st.quote.Render("│ ")))
		case re.listItem.MatchString(line):
			flush()
			m := re.listItem.FindStringSubmatch(line)
			depth := len(m[1]) / 2
			marker := m[2]
			if !md.noColor && (marker == "-" || marker == "*" || marker == "+") {
				marker = "•"
			}
			body := line[len(m[0]):]
			lead := strings.Repeat("  ", depth+1)
			hang := lead + strings.Repeat(" ", ansi.StringWidth(marker)+1)
			out = append(out, indent(termtext.Wrap(md.inline(body), max(w-len(hang)+2, 10)), lead+marker+" ", hang))
		default:
			para = append(para, strings.TrimSuffix(strings.TrimRight(line, " "), "\\"))
		}
	}
	flush()
	// Blank lines at the ends and runs of them add nothing.
	var kept []string
	for _, l := range out {
		if l == "" && (len(kept) == 0 || kept[len(kept)-1] == "") {
			continue
		}
		kept = append(kept, l)
	}
	for len(kept) > 0 && kept[len(kept)-1] == "" {
		kept = kept[:len(kept)-1]
	}
	return strings.Join(kept, "\n")
}

// inline styles code spans, bold and italic; with NO_COLOR it leaves the
// text as it is.
func (md *Renderer) inline(s string) string {
	if md.noColor {
		return s
	}
	re := mdRe.Get()
	// Code spans first; their text is not styled further.
	var codes []string
	s = re.codeSpan.ReplaceAllStringFunc(s, func(c string) string {
		codes = append(codes, md.st.code.Render(c[1:len(c)-1]))
		return "\x00" + string(rune('A'+len(codes)-1)) + "\x00"
	})
	s = re.boldSpan.ReplaceAllStringFunc(s, func(b string) string { return md.st.bold.Render(b[2 : len(b)-2]) })
	s = re.italicSpan.ReplaceAllStringFunc(s, func(it string) string {
		m := re.italicSpan.FindStringSubmatch(it)
		return m[1] + md.st.italic.Render(m[2]) + m[3]
	})
	for i, c := range codes {
		s = strings.Replace(s, "\x00"+string(rune('A'+i))+"\x00", c, 1)
	}
	return s
}

// indent prefixes the first line of s with first and the others with rest.
func indent(s, first, rest string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = rest + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// splitRow is a GFM table row's cells: split on the pipes that are not
// escaped (\|) and not inside a code span, the outer pipes dropped, each
// cell trimmed.
func splitRow(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	var cells []string
	var cur strings.Builder
	inCode := false
	for i := 0; i < len(row); i++ {
		c := row[i]
		switch {
		case c == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteByte('|')
			i++
		case c == '`':
			inCode = !inCode
			cur.WriteByte(c)
		case c == '|' && !inCode:
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// cellAlign is a table column's alignment, from its delimiter cell.
type cellAlign byte

const (
	alignLeft cellAlign = iota
	alignCenter
	alignRight
)

func tableAlign(delims []string) []cellAlign {
	out := make([]cellAlign, len(delims))
	for i, d := range delims {
		switch l, r := strings.HasPrefix(d, ":"), strings.HasSuffix(d, ":"); {
		case l && r:
			out[i] = alignCenter
		case r:
			out[i] = alignRight
		}
	}
	return out
}

// table lays a GFM table out in columns that line up, within width
// cells: a column wider than its share is wrapped inside its cell (the
// widest column gives way first), so every row stays a row at 40 columns
// too. The header is bold, a rule under it; cells are styled inline.
func (md *Renderer) table(rows [][]string, align []cellAlign, width int) []string {
	ncol := len(align)
	cells := make([][]string, len(rows))
	widths := make([]int, ncol)
	for r, row := range rows {
		cells[r] = make([]string, ncol)
		for c := 0; c < ncol; c++ {
			if c < len(row) {
				cells[r][c] = md.inline(row[c])
			}
			if r == 0 && !md.noColor {
				cells[r][c] = md.st.bold.Render(cells[r][c])
			}
			widths[c] = max(widths[c], ansi.StringWidth(cells[r][c]))
		}
	}
	sep := " │ "
	if md.noColor {
		sep = " | "
	}
	avail := width - 2 - 3*(ncol-1)
	for total := sum(widths); total > avail; total-- {
		wi := 0
		for c := range widths {
			if widths[c] > widths[wi] {
				wi = c
			}
		}
		if widths[wi] <= 3 {
			break
		}
		widths[wi]--
	}
	var out []string
	for r := range cells {
		wrapped := make([][]string, ncol)
		height := 1
		for c := range ncol {
			wrapped[c] = strings.Split(ansi.Wrap(cells[r][c], widths[c], " "), "\n")
			height = max(height, len(wrapped[c]))
		}
		for l := range height {
			parts := make([]string, ncol)
			for c := range ncol {
				s := ""
				if l < len(wrapped[c]) {
					s = wrapped[c][l]
				}
				parts[c] = pad(s, widths[c], align[c])
			}
			out = append(out, strings.TrimRight("  "+strings.Join(parts, sep), " "))
		}
		if r == 0 {
			rule := make([]string, ncol)
			for c := range ncol {
				rule[c] = strings.Repeat("─", widths[c])
			}
			if md.noColor {
				for c := range ncol {
					rule[c] = strings.Repeat("-", widths[c])
				}
				out = append(out, "  "+strings.Join(rule, " | "))
			} else {
				out = append(out, "  "+md.st.rule.Render(strings.Join(rule, "─┼─")))
			}
		}
	}
	return out
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// pad fills s (styled or not) to w cells, as the column aligns.
func pad(s string, w int, a cellAlign) string {
	gap := max(w-ansi.StringWidth(s), 0)
	switch a {
	case alignRight:
		return strings.Repeat(" ", gap) + s
	case alignCenter:
		return strings.Repeat(" ", gap/2) + s + strings.Repeat(" ", gap-gap/2)
	}
	return s + strings.Repeat(" ", gap)
}
