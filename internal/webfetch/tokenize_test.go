package webfetch

import (
	"fmt"
	"go/build"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// tokensXNet is x/net/html's token stream for s, one line a token.
func tokensXNet(s string) []string {
	z := html.NewTokenizer(strings.NewReader(s))
	var out []string
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return out
		case html.TextToken, html.CommentToken, html.DoctypeToken:
			out = append(out, fmt.Sprintf("%v %q", tt, z.Text()))
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, more := z.TagName()
			var line strings.Builder
			fmt.Fprintf(&line, "%v %q", tt, name)
			for more && tt != html.EndTagToken {
				var k, v []byte
				k, v, more = z.TagAttr()
				fmt.Fprintf(&line, " %q=%q", k, v)
			}
			out = append(out, line.String())
		}
	}
}

// tokensOurs is tokenize.go's token stream for s, as tokensXNet writes it.
func tokensOurs(s string) []string {
	z := newTokenizer(s)
	var out []string
	names := map[tokenType]html.TokenType{textToken: html.TextToken, startTagToken: html.StartTagToken,
		endTagToken: html.EndTagToken, selfClosingTagToken: html.SelfClosingTagToken,
		commentToken: html.CommentToken, doctypeToken: html.DoctypeToken}
	for {
		tt := z.next()
		switch tt {
		case eofToken:
			return out
		case textToken, commentToken, doctypeToken:
			out = append(out, fmt.Sprintf("%v %q", names[tt], z.text()))
		default:
			var line strings.Builder
			fmt.Fprintf(&line, "%v %q", names[tt], z.tagName())
			for _, a := range z.tagAttrs() {
				fmt.Fprintf(&line, " %q=%q", a.key, a.val)
			}
			out = append(out, line.String())
		}
	}
}

// corpus is realistic and hostile HTML for the differential tests (and
// the fuzz target's seeds).
var corpus = []string{
	"",
	"plain text only",
	"<!DOCTYPE html><html><head><title>T &amp; U</title></head><body><h1>Hi</h1><p>a&nbsp;b &lt;c&gt; &copy 2024 &notit; &#169; &#xA9; &#x1F600; &#0; &#128; &#xD800; &#99999999999; &#5</p></body></html>",
	`<a href="/x?a=1&copy=2&amp;b=3&lang=en&notit=1&amp">link</a> <a href='single&#39;q'>s</a> <a href=unq&lt;x>u</a>`,
	`<a HREF="first" href="second">dup</a><A Href=third>upper</A>`,
	`<DIV CLASS=X><P>Upper</P></DIV><Br/><bR>`,
	`<script>var s = "</scr" + "ipt>"; if (a <!-- b) {}</script>after`,
	`<script><!-- document.write("<script>x</script>"); --></script>visible`,
	`<script>a</script >b<script>c</script	>d<script>e</SCRIPT/>f`,
	`<script><!--<script></script>still</script>shown`,
	`text<!-- unclosed comment <p>hidden`,
	`a<!---->b<!-->c<!--->d<!-- x --!>e<!-- y --!-->f<!--z-`,
	`<title>a <b>not bold</b> &amp; x</title><p>body</p>`,
	`<head><title>  Spaced   Title &amp; more </title></head><body>Spaced Title &amp; more and text</body>`,
	"<pre>  keep\n    this\r\n  as is &lt;ok&gt;\r</pre>after <b>x</b>",
	`<ul><li>one<ul><li>nested</li></ul></li><li>two</li></ul><ol><li>1</li></ol>`,
	`<table><tr><th>h1</th><th>h2</th></tr><tr><td>a</td><td>b</td></tr></table>`,
	`<a href="outer">out <a href="#frag">in</a> <a href="javascript:void(0)">js</a> <a href="JavaScript:x">js2</a></a>`,
	"nul\x00byte <p a\x00b=\"v\x00\">x\x00y</p><script>s\x00</script><title>t\x00</title>",
	"invalid \xff\xfe utf8 <p title=\"\xc3\">\xe2\x82</p> end\xc3",
	`<meta charset="utf-8">`,
	`<meta charset=iso-8859-2>`,
	`<META CHARSET='Windows-1251'>`,
	`<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">`,
	`<meta content="text/html; charset=shift_jis" http-equiv=content-type>`,
	`<meta content="text/html; charset=latin1">`,
	`<meta charset="utf-16le"><meta charset=x-user-defined>`,
	`<meta http-equiv=content-type content="text/html;charset='big5'" charset=euc-kr>`,
	`<meta charset="bogus"><meta charset="latin2">`,
	`<meta charset="utf-8" charset="latin1"><meta CHARSET=&quot;x>`,
	`<!-- <meta charset=latin1> --><meta charset=latin2>`,
	`<script><meta charset=latin1></script><meta charset=latin3>`,
	`<p a=/>not closed</p><br/><img src=x/><img src="x"/><p a b/>`,
	`<p =x a==b c = "d" e='f'g h=>i</p>`,
	`</><//x> </ bogus> <? pi ?> <!bogus> <![CDATA[cdata]]> <!doctype x> <!DOCTYPE>`,
	`a < b <3 5<6 <<<<<p>x</p> <`,
	`<textarea>a<b>&amp;</textarea><xmp><b>&amp;</b></xmp><noscript><p>n</p></noscript><iframe><p>i</p></iframe>`,
	`<style>p { color: red } </style ><noframes>nf</noframes><noembed>ne</noembed>after`,
	`<plaintext><p>all &amp; text</p>`,
	`<h2>Two</h2><h6>Six</h6><hr><blockquote>q</blockquote><dl><dt>t</dt><dd>d</dd></dl>`,
	`<svg><text>hidden</text></svg><template>tpl</template><object>obj</object>shown`,
	`<div`, `<div class="x`, `<div class=`, `</div`, `<!--`, `<!`, `<!D`, `<!-`, `<!>`, `</`, `<a href=x`,
	`&`, `&#`, `&#x`, `&#x;`, `&#;`, `&amp`, `&fjlig;&acE;&NotEqualTilde;&semi;`, `<a title="&fjlig;&semi;&amp=&notin;&noti;&ampx">x</a>`,
	`<p a=1 a=/>x<p A=1 b=2 a=/>y<p a b=/>z`,
	`&#4294967361; &#x100000041; &#1114111; &#1114112;`,
	`<script><!--<b></script>out<script><!--<script>x</script>--></script>out2<script><!-- <x </script>out3`,
	`<script><!--< <script></script>after</script>end<script><!--a-<script>b--</script>c-></script>d`,
	`<script><!--a-><script></script>X</script>Y<script><!--<script>a-></script>b</script>c`,
	`<p>line one
line two   spaced</p><p> leading and trailing </p>`,
}

// TestPrescanNotUTF8: a <meta content> with a byte that is not UTF-8
// before "charset" (a Latin-1 page) is read, not a panic: fromContent
// lower-cased with strings.ToLower, which made the byte three and sliced
// past the end (found by FuzzTokenizerMatchesXNet).
func TestPrescanNotUTF8(t *testing.T) {
	for in, want := range map[string]charset{
		"<metA Content=000\xa3ChArset0>":                                             "",
		"<meta http-equiv=content-type content='text/html; caf\xe9 charset=latin2'>": csISO_8859_2,
	} {
		if got := prescan([]byte(in)); got != want {
			t.Errorf("prescan(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTokenizerMatchesXNet: on the corpus, tokenize.go's tokens, Text
// and prescan are x/net/html's.
func TestTokenizerMatchesXNet(t *testing.T) {
	for _, s := range corpus {
		compare(t, s)
	}
}

func compare(t *testing.T, s string) {
	t.Helper()
	if got, want := tokensOurs(s), tokensXNet(s); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tokens of %q:\n got %q\nwant %q", s, got, want)
	}
	if got, want := htmlText(s), textXNet(strings.NewReader(s)); got != want {
		t.Errorf("Text of %q:\n got %q\nwant %q", s, got, want)
	}
	if got, want := prescan([]byte(s)), prescanXNet([]byte(s)); got != want {
		t.Errorf("prescan of %q: got %q, want %q", s, got, want)
	}
}

// TestEntitiesMatchXNet: every named reference the standard library
// knows decodes as x/net/html decodes it, in text and in attribute
// values, whole, cut short, followed by letters or by '='.
func TestEntitiesMatchXNet(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(build.Default.GOROOT, "src", "html", "entity.go"))
	if err != nil {
		t.Fatalf("the standard library's html/entity.go (every Go install ships it): %v", err)
	}
	names := regexp.MustCompile(`(?m)^\s*"([A-Za-z0-9]+;?)":`).FindAllSubmatch(src, -1)
	if len(names) < 2000 {
		t.Fatalf("%d entity names in entity.go", len(names))
	}
	var b strings.Builder
	for _, m := range names {
		n := strings.TrimSuffix(string(m[1]), ";")
		fmt.Fprintf(&b, `<a x="&%s;" y="&%s" z="&%s=" w="&%sx;" v='&%sq' u=&%s>&%s; &%s &%sx; &%s=</a>`,
			n, n, n, n, n, n, n, n, n, n)
		b.WriteByte('\n')
	}
	compare(t, b.String())
}

// hostile are inputs built to make a tokenizer slow: a million '<',
// unclosed comments, huge attributes, a tag of many attributes, a script
// of many "</".
func hostile() map[string]string {
	const n = 1 << 18
	return map[string]string{
		"lt":              strings.Repeat("<", n),
		"lt-letter":       strings.Repeat("<a", n/2),
		"unclosed":        "<!--" + strings.Repeat("-", n),
		"unclosed-bang":   "<!--" + strings.Repeat("--!", n/3),
		"bogus":           "<!" + strings.Repeat("x", n),
		"huge-attr":       `<a href="` + strings.Repeat("&amp;x", n/6) + `">x</a>`,
		"huge-unquoted":   `<a href=` + strings.Repeat("&ampx", n/5) + ` title=/>`,
		"many-attrs":      "<meta " + strings.Repeat("a ", n/2) + "charset=latin1>",
		"distinct-attrs":  "<a " + attrs(n/8) + "href=x>y</a>",
		"script-lt-slash": "<script>" + strings.Repeat("</scrip", n/7),
		"script-escaped":  "<script><!--" + strings.Repeat("<script </script", n/16),
		"title-lt-slash":  "<title>" + strings.Repeat("</titl", n/6),
		"entities":        strings.Repeat("&notit", n/6) + strings.Repeat("&#99999999999", n/13),
		"nested":          strings.Repeat("<div><a href=x><pre>", n/20) + "text",
		"amps":            strings.Repeat("&", n),
	}
}

// TestTokenizerHostile: the hostile inputs give x/net/html's output. What
// they cost is measured by BenchmarkTokenizerHostile, beside x/net's (no
// test's verdict depends on the machine's speed).
func TestTokenizerHostile(t *testing.T) {
	for _, s := range hostile() {
		compare(t, s)
	}
}

// BenchmarkTokenizerHostile: the hostile inputs through tokenize.go and
// through x/net/html (a quadratic pass would cost hundreds of times
// x/net's).
func BenchmarkTokenizerHostile(b *testing.B) {
	for name, s := range hostile() {
		b.Run(name+"/ours", func(b *testing.B) {
			for b.Loop() {
				htmlText(s)
				tokensOurs(s)
			}
		})
		b.Run(name+"/xnet", func(b *testing.B) {
			for b.Loop() {
				textXNet(strings.NewReader(s))
				tokensXNet(s)
			}
		})
	}
}

func attrs(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "a%d ", i)
	}
	return b.String()
}

// FuzzTokenizerMatchesXNet: on any input, tokenize.go's tokens, Text and
// prescan are x/net/html's.
func FuzzTokenizerMatchesXNet(f *testing.F) {
	for _, s := range corpus {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		compare(t, s)
	})
}
