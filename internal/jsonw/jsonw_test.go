package jsonw_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/jsonw"
	"github.com/reinsdev/reins/internal/jsonw/jsonwtest"
)

func TestStringMatchesEncodingJSON(t *testing.T) {
	cases := append([]string{}, jsonwtest.Strings...)
	for c := range 256 { // every byte alone, and after a valid rune
		cases = append(cases, string([]byte{byte(c)}), "é"+string([]byte{byte(c)})+"x")
	}
	for _, s := range cases {
		want, _ := json.Marshal(s)
		if got := jsonw.String([]byte("prefix"), s); string(got) != "prefix"+string(want) {
			t.Errorf("String(%q) = %s, want %s", s, got[6:], want)
		}
	}
}

func FuzzString(f *testing.F) {
	for _, s := range jsonwtest.Strings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := jsonw.String(nil, s); string(got) != string(want) {
			t.Errorf("String(%q) = %s, want %s", s, got, want)
		}
	})
}

func TestFloat(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 0.1, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, -1e21, 1.5e300, 5e-324, 123.456, 1e-10} {
		want, _ := json.Marshal(f)
		got, err := jsonw.Float(nil, f)
		if err != nil || string(got) != string(want) {
			t.Errorf("Float(%v) = %s, %v; want %s", f, got, err, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := jsonw.Float(nil, f); err != jsonw.ErrUnsupported {
			t.Errorf("Float(%v): err %v, want ErrUnsupported", f, err)
		}
	}
}

func TestBytesAndTime(t *testing.T) {
	for _, b := range [][]byte{nil, {}, {0}, []byte("hello, world"), {0xff, 0xfe, 0xfd, 0xfc}} {
		want, _ := json.Marshal(b)
		if got := jsonw.Bytes(nil, b); string(got) != string(want) {
			t.Errorf("Bytes(%v) = %s, want %s", b, got, want)
		}
	}
	for _, tm := range []time.Time{{}, time.Date(2026, 12, 3, 10, 4, 5, 123456789, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", -5*3600-1800))} {
		want, _ := json.Marshal(tm)
		if got, err := jsonw.Time(nil, tm); err != nil || string(got) != string(want) {
			t.Errorf("Time(%v) = %s, %v; want %s", tm, got, err, want)
		}
	}
	if _, err := jsonw.Time(nil, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)); err != jsonw.ErrUnsupported {
		t.Errorf("Time(year 10000): err %v, want ErrUnsupported", err)
	}
}

func TestObject(t *testing.T) {
	var o jsonw.Object
	if got := string(o.End()); got != "{}" {
		t.Errorf("empty object = %s", got)
	}
	o = jsonw.Object{B: []byte("x")}
	o.String("a", "<")
	o.OmitString("b", "")
	o.OmitInt("c", 0)
	o.Int("d", -7)
	o.OmitBool("e", false)
	o.Bool("f", false)
	if got, want := string(o.End()), `x{"a":"\u003c","d":-7,"f":false}`; got != want {
		t.Errorf("object = %s, want %s", got, want)
	}
}

func TestStringNoHTML(t *testing.T) {
	for _, s := range append([]string{"<a href=\"x\">&</a>"}, jsonwtest.Strings...) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		if got, want := string(jsonw.StringNoHTML(nil, s)), strings.TrimSuffix(b.String(), "\n"); got != want {
			t.Errorf("StringNoHTML(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestCompact(t *testing.T) {
	for _, s := range []string{
		`{}`, ` { "a" : [ 1 , 2 ] } `, "{\n\t\"a\": \"x y\\\" <b> & \u2028 \u2029 \\\\\",\r\n \"b\": null}",
		`["\\", " ", "<"]`, `"\u2028"`, "\"é\u2029\"", `{"a":"\"<\""}`,
	} {
		want, _ := json.Marshal(json.RawMessage(s))
		if got := jsonw.Compact([]byte("x"), []byte(s), true); string(got) != "x"+string(want) {
			t.Errorf("Compact(%q, html) = %s, want %s", s, got[1:], want)
		}
		var b bytes.Buffer
		json.Compact(&b, []byte(s))
		if got := jsonw.Compact(nil, []byte(s), false); string(got) != b.String() {
			t.Errorf("Compact(%q) = %s, want %s", s, got, b.String())
		}
	}
}

func FuzzCompact(f *testing.F) {
	f.Add(`{"a": "<b>", "c": [1, 2.5, true, null]}`, true)
	f.Fuzz(func(t *testing.T, s string, html bool) {
		if !json.Valid([]byte(s)) {
			return
		}
		var want []byte
		if html {
			want, _ = json.Marshal(json.RawMessage(s))
		} else {
			var b bytes.Buffer
			json.Compact(&b, []byte(s))
			want = b.Bytes()
		}
		if got := jsonw.Compact(nil, []byte(s), html); string(got) != string(want) {
			t.Errorf("Compact(%q, %v) = %s, want %s", s, html, got, want)
		}
	})
}
