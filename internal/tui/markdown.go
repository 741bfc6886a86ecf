package tui

import (
	"regexp"
	"strings"
	"sync"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// markdown renders answers for the terminal: headings, emphasis, code
// spans and fenced blocks, lists, quotes and rules, wrapped to the width
// with a two-column margin. It is reins's own small renderer rather than
// glamour: glamour links chroma and goldmark, whose package initialisers
// cost every reins process — `reins version`, every `reins sdk` child —
// about 12 ms at start. Its input is escaped first (termsafe), so every
// escape sequence in its output is its own styling; with NO_COLOR the
// text keeps its Markdown markers, which read well as they are.
type markdown struct {
	noColor bool
	width   int
	st      mdStyles
}

type mdStyles struct {
	heading, bold, italic, code, quote, rule lipgloss.Style
}

func newMarkdown(noColor bool) *markdown {
	md := &markdown{noColor: noColor, width: 80}
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

func (md *markdown) setWidth(w int) { md.width = w }

// mdRe are the renderer's patterns, compiled on first use: compiling
// them at start-up would cost every reins command, not only the screen.
var mdRe = sync.OnceValue(func() *mdPatterns {
	return &mdPatterns{
		listItem:   regexp.MustCompile(`^(\s*)([-*+]|\d{1,9}[.)])\s+`),
		heading:    regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`),
		rule:       regexp.MustCompile(`^\s*([-*_])(\s*([-*_])){2,}\s*$`),
		codeSpan:   regexp.MustCompile("`[^`\n]+`"),
		boldSpan:   regexp.MustCompile(`\*\*([^*\n]+)\*\*|__([^_\n]+)__`),
		italicSpan: regexp.MustCompile(`(^|[^*\w])\*([^*\s][^*\n]*?)\*($|[^*\w])`),
	}
})

type mdPatterns struct {
	listItem, heading, rule, codeSpan, boldSpan, italicSpan *regexp.Regexp
}

// render is text (escaped) as styled, wrapped lines.
func (md *markdown) render(text string) string {
	re := mdRe()
	w := max(md.width-4, 20)
	var out []string
	var para []string
	flush := func() {
		if len(para) > 0 {
			out = append(out, indent(wrap(md.inline(strings.Join(para, " ")), w), "  ", "  "))
			para = nil
		}
	}
	inFence := false
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			flush()
			inFence = !inFence
			if md.noColor {
				out = append(out, fitLine("  "+line, md.width))
			}
			continue
		}
		if inFence {
			out = append(out, fitLine("    "+md.st.code.Render(line), md.width))
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
				out = append(out, indent(wrap(trimmed, w), "  ", "  "))
			} else {
				out = append(out, indent(wrap(md.st.heading.Render(md.inline(h[2])), w), "  ", "  "))
			}
		case re.rule.MatchString(trimmed):
			flush()
			out = append(out, "  "+md.st.rule.Render(strings.Repeat("─", min(w, 40))))
		case strings.HasPrefix(trimmed, ">"):
			flush()
			q := strings.TrimSpace(strings.TrimPrefix(trimmed, ">"))
			out = append(out, indent(wrap(md.inline(q), w-2), "  "+md.st.quote.Render("│ "), "  "+md.st.quote.Render("│ ")))
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
			out = append(out, indent(wrap(md.inline(body), max(w-len(hang)+2, 10)), lead+marker+" ", hang))
		default:
			para = append(para, trimmed)
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
func (md *markdown) inline(s string) string {
	if md.noColor {
		return s
	}
	re := mdRe()
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
