package webfetch

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf16"

	"golang.org/x/text/encoding/htmlindex"
)

// TestCharsetTablesMatchXText: the generated labels and single-byte
// tables decode as x/text's htmlindex does (the package webfetch linked
// before), for every WHATWG encoding.
func TestCharsetTablesMatchXText(t *testing.T) {
	names := []string{"utf-8", "ibm866", "iso-8859-2", "iso-8859-3", "iso-8859-4", "iso-8859-5", "iso-8859-6",
		"iso-8859-7", "iso-8859-8", "iso-8859-8-i", "iso-8859-10", "iso-8859-13", "iso-8859-14", "iso-8859-15",
		"iso-8859-16", "koi8-r", "koi8-u", "macintosh", "windows-874", "windows-1250", "windows-1251",
		"windows-1252", "windows-1253", "windows-1254", "windows-1255", "windows-1256", "windows-1257",
		"windows-1258", "x-mac-cyrillic", "gbk", "gb18030", "big5", "euc-jp", "iso-2022-jp", "shift_jis",
		"euc-kr", "replacement", "utf-16be", "utf-16le", "x-user-defined"}
	single := 0
	for _, n := range names {
		if got := lookupLabel(n); string(got) != n {
			t.Errorf("lookupLabel(%q) = %q", n, got)
		}
		tab := singleByte(charset(n))
		if tab == nil {
			continue
		}
		single++
		e, err := htmlindex.Get(n)
		if err != nil {
			t.Fatal(err)
		}
		for b := 0x80; b < 0x100; b++ {
			want, _ := e.NewDecoder().Bytes([]byte{byte(b)})
			if got := decodeSingleByte([]byte{byte(b)}, tab); got != string(want) {
				t.Errorf("%s: byte %#x is %q, x/text %q", n, b, got, want)
			}
		}
	}
	if single != 29 {
		t.Errorf("%d single-byte tables, want 29", single)
	}
	// Aliases, case and white space, as htmlindex reads them.
	for _, l := range []string{"latin1", "ASCII", " us-ascii\t", "ISO-8859-1", "iso_8859-1:1987", "cp1252", "l1",
		"csisolatin2", "koi", "sjis", "x-sjis", "ms932", "unicode", "ucs-2", "unicodefffe", "utf8", "x-mac-ukrainian", "dos-874"} {
		e, err := htmlindex.Get(l)
		if err != nil {
			t.Fatal(l, err)
		}
		want, _ := htmlindex.Name(e)
		if got := label(l); string(got) != want {
			t.Errorf("label(%q) = %q, htmlindex %q", l, got, want)
		}
	}
	if got := label("x-no-such-charset"); got != "" {
		t.Errorf("unknown label: %q", got)
	}
}

func utf16Bytes(s string, bigEndian bool) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		if bigEndian {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return b
}

// TestWebfetchCharsets: each way a page says its encoding (BOM,
// Content-Type, <meta>), the fallback when none does, a label that is no
// encoding, and an encoding webfetch does not decode.
func TestWebfetchCharsets(t *testing.T) {
	padding := "<p>" + strings.Repeat("ascii only ", 120) + "</p>" // > 1024 bytes
	cases := []struct {
		name, ctype, body string
		want, not         []string
		note              bool
	}{
		{name: "header iso-8859-1 is windows-1252", ctype: "text/html; charset=ISO-8859-1",
			body: "<p>caf\xe9 \x80 \x93q\x94</p>", want: []string{"café € “q”"}},
		{name: "header latin1 label", ctype: "text/html; charset=latin1", body: "<p>\xe9t\xe9</p>", want: []string{"été"}},
		{name: "header us-ascii label", ctype: `text/html; charset="us-ascii"`, body: "<p>\x93quoted\x94</p>", want: []string{"“quoted”"}},
		{name: "header windows-1251", ctype: "text/html; charset=windows-1251", body: "<p>\xcf\xf0\xe8\xe2\xe5\xf2</p>", want: []string{"Привет"}},
		{name: "header beats meta", ctype: "text/html; charset=iso-8859-15",
			body: `<meta charset="windows-1251"><p>` + "\xa4" + `</p>`, want: []string{"€"}},
		{name: "meta charset", ctype: "text/html",
			body: `<html><head><meta charset="koi8-r"></head><body><p>` + "\xf0\xd2\xc9\xd7\xc5\xd4" + `</p>`, want: []string{"Привет"}},
		{name: "meta http-equiv", ctype: "text/html",
			body: `<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-2"><p>` + "\xb1" + `</p>`, want: []string{"ą"}},
		{name: "meta content without http-equiv is ignored", ctype: "text/html",
			body: `<meta content="text/html; charset=iso-8859-2"><p>` + "\xb1" + `</p>`, want: []string{"±"}},
		{name: "meta utf-16 means utf-8", ctype: "text/html",
			body: `<meta charset="utf-16"><p>café</p>`, want: []string{"café"}},
		{name: "meta after 1024 bytes is not seen", ctype: "text/html",
			body: padding + `<meta charset="windows-1251"><p>` + "\xe9" + `</p>`, want: []string{"é"}, not: []string{"й"}},
		{name: "utf-8 bom beats the header", ctype: "text/html; charset=windows-1251",
			body: "\xef\xbb\xbf<p>café</p>", want: []string{"café"}, not: []string{"\ufeff"}},
		{name: "utf-16le bom", ctype: "text/html",
			body: "\xff\xfe" + string(utf16Bytes("<p>naïve 日本 🙂</p>", false)), want: []string{"naïve 日本 🙂"}},
		{name: "utf-16be bom", ctype: "text/html; charset=utf-8",
			body: "\xfe\xff" + string(utf16Bytes("<p>naïve 日本 🙂</p>", true)), want: []string{"naïve 日本 🙂"}},
		{name: "unknown label falls back to meta", ctype: "text/html; charset=x-no-such-charset",
			body: `<meta charset="windows-1251"><p>` + "\xcf\xf0\xe8" + `</p>`, want: []string{"При"}},
		{name: "unknown label, utf-8 body", ctype: "text/html; charset=x-no-such-charset", body: "<p>café</p>", want: []string{"café"}},
		{name: "undeclared utf-8 past the first 1024 bytes", ctype: "text/html",
			body: padding + "<p>café</p>", want: []string{"café"}, not: []string{"Ã"}},
		{name: "undeclared, not utf-8: windows-1252", ctype: "text/html", body: "<p>caf\xe9</p>", want: []string{"café"}},
		{name: "undecoded encoding says so", ctype: "text/html; charset=SJIS",
			body: "<p>abc \x93\xfa\x96\x7b</p>", want: []string{"abc \ufffd", "[the page is in shift_jis, which webfetch does not decode"}, note: true},
		{name: "text/plain in windows-1252", ctype: "text/plain; charset=windows-1252", body: "caf\xe9", want: []string{"café"}},
		{name: "text/plain utf-16le bom", ctype: "text/plain", body: "\xff\xfe" + string(utf16Bytes("naïve", false)), want: []string{"naïve"}},
	}
	mux := http.NewServeMux()
	for i, c := range cases {
		mux.HandleFunc("/"+string(rune('a'+i)), func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", c.ctype)
			w.Write([]byte(c.body))
		})
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := fetch(t, networkOn, urlArgs(srv.URL+"/"+string(rune('a'+i))))
			if res.IsError {
				t.Fatal(res.Content)
			}
			for _, w := range c.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("no %q in %q", w, res.Content)
				}
			}
			for _, n := range c.not {
				if strings.Contains(res.Content, n) {
					t.Errorf("%q in %q", n, res.Content)
				}
			}
			if got := strings.Contains(res.Content, "webfetch does not decode"); got != c.note {
				t.Errorf("note shown: %v, want %v: %q", got, c.note, res.Content)
			}
		})
	}
}

// TestWebfetchCharsetNoteIsOurs: the note names the encoding by its
// canonical name, never the page's label as written.
func TestWebfetchCharsetNoteIsOurs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<meta charset=" Shift_JIS "><p>x</p>`))
	}))
	defer srv.Close()
	res := fetch(t, networkOn, urlArgs(srv.URL))
	if !strings.Contains(res.Content, "the page is in shift_jis,") || strings.Contains(res.Content, "Shift_JIS") {
		t.Errorf("%q", res.Content)
	}
}

// TestDecodeEdges: an odd trailing byte of UTF-16 and an unpaired
// surrogate become U+FFFD; a rune cut at the end of a body does not make
// it "not UTF-8", a bad byte inside does.
func TestDecodeEdges(t *testing.T) {
	if got := decodeUTF16([]byte{'a', 0, 'b'}, false); got != "a\uFFFD" {
		t.Errorf("odd byte: %q", got)
	}
	if got := decodeUTF16([]byte{0xD8, 0x3D, 0, 'x'}, true); got != "\uFFFDx" {
		t.Errorf("unpaired surrogate: %q", got)
	}
	if !validUTF8Prefix([]byte("caf\xc3")) || !validUTF8Prefix([]byte("x\xf0\x9f\x99")) {
		t.Error("a rune cut at the end is not UTF-8")
	}
	if validUTF8Prefix([]byte("caf\xe9 ok")) || validUTF8Prefix([]byte("\xff")) {
		t.Error("latin-1 byte taken for UTF-8")
	}
	if got, _ := toUTF8([]byte("caf\xc3"), "", 0); got != "caf\uFFFD" {
		t.Errorf("cut UTF-8 body: %q", got)
	}
}
