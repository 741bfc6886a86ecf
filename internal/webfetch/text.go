package webfetch

import (
	"io"
	"strings"
)

// maxDepth bounds the element stack the converter tracks, so a page of
// a million unclosed tags costs no more than a flat one.
const maxDepth = 256

// Text converts an HTML document to readable text: scripts, styles and
// other invisible parts dropped, block elements on their own lines,
// headings marked with #, list items with -, links followed by their
// address, <pre> kept as written, other white space collapsed. It reads
// r whole (webfetch bounds a body to MaxBody) and converts it as htmlText
// does.
func Text(r io.Reader) string {
	b, _ := io.ReadAll(r) // on an error, what was read
	return htmlText(string(b))
}

// htmlText is Text of a page held whole. It reads it as a token stream
// (no tree), so its memory is bounded by its input.
func htmlText(page string) string {
	z := newTokenizer(page)
	var (
		b      strings.Builder
		skip   int // depth inside elements whose text is not shown
		pre    int // depth inside <pre>
		space  bool
		hrefs  []string // the open <a>s' addresses
		title  string
		inHead bool
	)
	newline := func(n int) {
		s := b.String()
		have := len(s) - len(strings.TrimRight(s, "\n"))
		if b.Len() == 0 {
			return
		}
		for ; have < n; have++ {
			b.WriteByte('\n')
		}
		space = false
	}
	for {
		tt := z.next()
		switch tt {
		case eofToken:
			out := strings.TrimSpace(b.String())
			if title != "" && !strings.Contains(out, title) {
				out = "# " + title + "\n\n" + out
			}
			return out
		case textToken:
			if skip > 0 {
				continue
			}
			t := z.text()
			if inHead {
				continue
			}
			if pre > 0 {
				b.WriteString(t)
				continue
			}
			pend := space || startsWithSpace(t)
			fields := strings.Fields(t)
			for i, f := range fields {
				if (i > 0 || pend) && b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
					b.WriteByte(' ')
				}
				b.WriteString(f)
			}
			space = endsWithSpace(t) || (len(fields) == 0 && pend)
		case startTagToken, selfClosingTagToken:
			name := z.tagName()
			switch name {
			case "script", "style", "noscript", "template", "svg", "iframe", "object":
				if tt == startTagToken && skip < maxDepth {
					skip++
				}
			case "head":
				inHead = true
			case "title":
				if inHead && tt == startTagToken && z.next() == textToken {
					title = strings.Join(strings.Fields(z.text()), " ")
				}
			case "br":
				b.WriteByte('\n')
				space = false
			case "pre":
				newline(2)
				if pre < maxDepth {
					pre++
				}
			case "h1", "h2", "h3", "h4", "h5", "h6":
				newline(2)
				b.WriteString(strings.Repeat("#", int(name[1]-'0')) + " ")
			case "li":
				newline(1)
				b.WriteString("- ")
			case "p", "div", "section", "article", "header", "footer", "main", "nav",
				"ul", "ol", "table", "blockquote", "dl", "hr", "form", "aside":
				newline(2)
			case "tr", "dt", "dd":
				newline(1)
			case "td", "th":
				b.WriteString(" | ")
			case "body":
				inHead = false
			case "a":
				href, _ := z.attr("href")
				if tt == startTagToken && len(hrefs) < maxDepth {
					hrefs = append(hrefs, href)
				}
			}
		case endTagToken:
			switch z.tagName() {
			case "script", "style", "noscript", "template", "svg", "iframe", "object":
				if skip > 0 {
					skip--
				}
			case "head":
				inHead = false
			case "pre":
				if pre > 0 {
					pre--
				}
				newline(2)
			case "h1", "h2", "h3", "h4", "h5", "h6", "p", "div", "section", "article",
				"header", "footer", "main", "nav", "ul", "ol", "table", "blockquote", "dl", "form", "aside":
				newline(2)
			case "tr", "li":
				newline(1)
			case "a":
				if n := len(hrefs); n > 0 {
					href := hrefs[n-1]
					hrefs = hrefs[:n-1]
					if href != "" && !strings.HasPrefix(href, "#") && !strings.HasPrefix(strings.ToLower(href), "javascript:") {
						b.WriteString(" (" + href + ")")
						space = false
					}
				}
			}
		}
	}
}

func startsWithSpace(s string) bool { return s != "" && strings.ContainsRune(" \t\n\r\f", rune(s[0])) }
func endsWithSpace(s string) bool {
	return s != "" && strings.ContainsRune(" \t\n\r\f", rune(s[len(s)-1]))
}
