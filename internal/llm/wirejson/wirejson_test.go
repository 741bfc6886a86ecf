package wirejson

import (
	"encoding/json"
	"testing"
)

// read decodes data as one value of the shape {"k": string, "n": int,
// "o": any} with the Reader, falling back to encoding/json as the
// adapters do.
type shape struct {
	K string          `json:"k"`
	N int             `json:"n"`
	O json.RawMessage `json:"o"`
}

func read(data []byte) (shape, bool) {
	var s shape
	var r Reader
	r.Reset(data)
	var seen Seen
	r.Object(func(key []byte) {
		switch string(key) {
		case "k":
			if r.Mark(&seen, 0) {
				s.K = r.String(nil)
			}
		case "n":
			if r.Mark(&seen, 1) {
				r.Int(&s.N)
			}
		case "o":
			if r.Mark(&seen, 2) {
				if raw := r.Raw(); raw != nil {
					s.O = append(json.RawMessage(nil), raw...)
				}
			}
		default:
			r.Other(key, "k", "n", "o")
		}
	})
	r.End()
	switch r.Status {
	case Invalid:
		return shape{}, false
	case Fallback:
		s = shape{}
		return s, json.Unmarshal(data, &s) == nil
	}
	return s, true
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{
		`{"k":"plain","n":42,"o":{"a":[1,2,{"b":"c"}]}}`,
		`{"k":"esc \" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00 \ud800 \udc00x \ud800\u0041","n":-7}`,
		"{\"k\":\"bad \xff utf8 \xed\xa0\x80\"}",
		`{"K":"case","N":1}`,
		`{"k":null,"n":null,"o":null}`,
		`{"k":1}`, `{"n":"1"}`, `{"n":1.5}`, `{"n":1e3}`, `{"n":99999999999999999999}`,
		`{"k":"a","k":"b"}`, `{"o":[1,2,]}`, `{"o":01}`, `{"o":-}`, `{"o":tru}`, `{"o":"\x"}`,
		`{"k":"ok"} `, `{"k":"ok"} x`, `{"k":"ctl` + "\x01" + `"}`, `{"ǩ":"non-ascii key"}`, `null`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, gotOK := read(data)
		var want shape
		wantOK := json.Unmarshal(data, &want) == nil
		if gotOK != wantOK {
			t.Fatalf("%q: ok=%v, encoding/json ok=%v", data, gotOK, wantOK)
		}
		if wantOK && (got.K != want.K || got.N != want.N || string(got.O) != string(want.O)) {
			t.Fatalf("%q: got %+v, encoding/json %+v", data, got, want)
		}
	})
}
