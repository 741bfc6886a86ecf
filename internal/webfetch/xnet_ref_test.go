package webfetch

// The reference for tokenize.go: Text and prescan as they were on
// golang.org/x/net/html's tokenizer (copied unchanged from main a0feea0
// but for their names), which stays a test-only dependency.

import (
	"bytes"
	"io"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// textXNet is Text on x/net/html.
func textXNet(r io.Reader) string {
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

// prescanXNet is prescan on x/net/html.
func prescanXNet(body []byte) charset {
	if len(body) > prescanLen {
		body = body[:prescanLen]
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if string(name) != "meta" {
				continue
			}
			var (
				cs             charset
				pragma, needIt bool
				seen           = map[string]bool{}
			)
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				key := string(k)
				if seen[key] {
					continue
				}
				seen[key] = true
				switch key {
				case "http-equiv":
					pragma = strings.EqualFold(string(v), "content-type")
				case "content":
					if cs == "" {
						if cs = label(fromContent(string(v))); cs != "" {
							needIt = true
						}
					}
				case "charset":
					cs, needIt = label(string(v)), false
				}
			}
			if cs == "" || needIt && !pragma {
				continue
			}
			switch cs {
			case csUTF_16BE, csUTF_16LE:
				return csUTF_8
			case csX_USER_DEFINED:
				return csWINDOWS_1252
			}
			return cs
		}
	}
}
