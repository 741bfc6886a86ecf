package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want [][]string
	}{
		{[]string{"a", "version"}, [][]string{{"a", "version"}}},
		{[]string{"a", "version", "--", "b"}, [][]string{{"a", "version"}, {"b"}}},
		{[]string{"--", "a", "--", "--", "b", "x", "--"}, [][]string{{"a"}, {"b", "x"}}},
		{nil, nil},
	} {
		if got := split(tc.args); !cmp.Equal(got, tc.want) {
			t.Errorf("split(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	for q, want := range map[float64]float64{0: 1, 0.25: 2, 0.5: 3, 0.75: 4, 1: 5} {
		if got := quantile(xs, q); got != want {
			t.Errorf("quantile(%v, %v) = %v, want %v", xs, q, got, want)
		}
	}
	if xs[0] != 5 {
		t.Error("quantile sorted its argument in place")
	}
}
