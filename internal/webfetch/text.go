package webfetch

import (
	"io"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxDepth bounds the element stack the converter tracks, so a page of
// a million unclosed tags costs no more than a flat one.
const maxDepth = 256

// Text converts an HTML document to readable text: scripts, styles and
// other invisible parts dropped, block elements on their own lines,
// headings marked with #, list items with -, links followed by their
// address, <pre> kept as written, other white space collapsed. It reads
// r as a token stream (no tree), so its memory is bounded by its input.
func Text(r io.Reader) string {
	z := html.NewTokenizer(r)
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
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			out := strings.TrimSpace(b.String())
			if title != "" && !strings.Contains(out, title) {
				out = "# " + title + "\n\n" + out
			}
			return out
		case html.TextToken:
			if skip > 0 {
				continue
			}
			t := string(z.Text())
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
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			switch a {
			case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Iframe, atom.Object:
				if tt == html.StartTagToken && skip < maxDepth {
					skip++
				}
			case atom.Head:
				inHead = true
			case atom.Title:
				if inHead && tt == html.StartTagToken && z.Next() == html.TextToken {
					title = strings.Join(strings.Fields(string(z.Text())), " ")
				}
			case atom.Br:
				b.WriteByte('\n')
				space = false
			case atom.Pre:
				newline(2)
				if pre < maxDepth {
					pre++
				}
			case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
				newline(2)
				b.WriteString(strings.Repeat("#", int(name[1]-'0')) + " ")
			case atom.Li:
				newline(1)
				b.WriteString("- ")
			case atom.P, atom.Div, atom.Section, atom.Article, atom.Header, atom.Footer, atom.Main, atom.Nav,
				atom.Ul, atom.Ol, atom.Table, atom.Blockquote, atom.Dl, atom.Hr, atom.Form, atom.Aside:
				newline(2)
			case atom.Tr, atom.Dt, atom.Dd:
				newline(1)
			case atom.Td, atom.Th:
				b.WriteString(" | ")
			case atom.Body:
				inHead = false
			case atom.A:
				href := ""
				for hasAttr {
					var k, v []byte
					k, v, hasAttr = z.TagAttr()
					if string(k) == "href" {
						href = string(v)
					}
				}
				if tt == html.StartTagToken && len(hrefs) < maxDepth {
					hrefs = append(hrefs, href)
				}
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch atom.Lookup(name) {
			case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Iframe, atom.Object:
				if skip > 0 {
					skip--
				}
			case atom.Head:
				inHead = false
			case atom.Pre:
				if pre > 0 {
					pre--
				}
				newline(2)
			case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.P, atom.Div, atom.Section, atom.Article,
				atom.Header, atom.Footer, atom.Main, atom.Nav, atom.Ul, atom.Ol, atom.Table, atom.Blockquote, atom.Dl, atom.Form, atom.Aside:
				newline(2)
			case atom.Tr, atom.Li:
				newline(1)
			case atom.A:
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
