// Package jsonwtest holds hand-written JSON encoders (package jsonw) to
// encoding/json: values of a type with every exported field set at random,
// hostile strings among them, encoded both ways.
package jsonwtest

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// Strings are the strings a filled field takes besides random bytes:
// everything encoding/json escapes, invalid UTF-8, multi-byte runes.
var Strings = []string{
	"", "a", "hello world", "<b>&amp;</b>", "\x00\x01\x1f\x7f", "\b\f\n\r\t",
	`"quoted" \back\slash`, "é漢字", "\u2028 and \u2029", "\xff\xfe invalid", "\xe2\x80",
	"😀 emoji", "ends in invalid \xc3",
}

var floats = []float64{0, 0.1, 1, -2.5, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789.125, -3.4e-9, 5e-324, 1.7976931348623157e308}

var timeType = reflect.TypeFor[time.Time]()

// Fill sets every exported field of the struct, pointer, slice or scalar
// v holds (v must be settable) to a random value; pointers and slices are
// left nil now and then, so omitempty is exercised both ways.
func Fill(v reflect.Value, r *rand.Rand) {
	switch {
	case v.Type() == timeType:
		zone := time.FixedZone("", (r.IntN(29)-14)*3600+r.IntN(2)*1800)
		t := time.Unix(r.Int64N(300_000_000_000)-62_000_000_000, r.Int64N(1e9)).In(zone)
		if r.IntN(4) == 0 {
			t = t.UTC()
		}
		v.Set(reflect.ValueOf(t))
		return
	}
	switch v.Kind() {
	case reflect.String:
		if r.IntN(3) == 0 {
			b := make([]byte, r.IntN(8))
			for i := range b {
				b[i] = byte(r.IntN(256))
			}
			v.SetString(string(b))
		} else {
			v.SetString(Strings[r.IntN(len(Strings))])
		}
	case reflect.Uint8:
		v.SetUint(uint64(r.IntN(256)))
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int64, reflect.Int32:
		switch r.IntN(3) {
		case 0:
			v.SetInt(0)
		case 1:
			v.SetInt(int64(r.IntN(1000)))
		default:
			v.SetInt(r.Int64() - r.Int64())
		}
	case reflect.Float64:
		f := floats[r.IntN(len(floats))]
		if r.IntN(2) == 0 {
			f = -f
		}
		v.SetFloat(f)
	case reflect.Pointer:
		if r.IntN(4) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		Fill(p.Elem(), r)
		v.Set(p)
	case reflect.Slice:
		if r.IntN(5) == 0 {
			v.SetZero()
			return
		}
		n := r.IntN(4)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			Fill(s.Index(i), r)
		}
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				Fill(v.Field(i), r)
			}
		}
	case reflect.Interface:
		// Left to the test, which knows what the field may hold.
	default:
		panic("jsonwtest: cannot fill a " + v.Type().String())
	}
}

// Check encodes n values of T, filled at random, with enc and with
// json.Marshal, and fails t at the first difference in bytes or in
// whether each refused the value.
func Check[T any](t *testing.T, n int, enc func(T) ([]byte, error)) {
	t.Helper()
	CheckWith(t, n, nil, json.Marshal, enc)
}

// CheckWith is Check with a reference encoder of its own (ref), and fill,
// when not nil, called on each filled value to set what Fill leaves alone
// (interface fields).
func CheckWith[T any](t *testing.T, n int, fill func(*T, *rand.Rand), ref func(any) ([]byte, error), enc func(T) ([]byte, error)) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, uint64(n)))
	for i := range n {
		var v T
		Fill(reflect.ValueOf(&v).Elem(), r)
		if fill != nil {
			fill(&v, r)
		}
		want, werr := ref(v)
		got, gerr := enc(v)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%T #%d: json.Marshal error %v, hand-written error %v\nvalue %#v", v, i, werr, gerr, v)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("%T #%d differs from json.Marshal:\n got %s\nwant %s", v, i, got, want)
		}
	}
}
