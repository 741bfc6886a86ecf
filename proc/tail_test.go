package proc

import (
	"strings"
	"testing"
)

func TestTail(t *testing.T) {
	tl := Tail{Max: 8}
	tl.Write([]byte("hello "))
	tl.Write([]byte("world"))
	if got := tl.String(); got != "lo world" {
		t.Errorf("tail = %q", got)
	}
	tl.Write([]byte(strings.Repeat("x", 20) + "12345678"))
	if got := tl.String(); got != "12345678" {
		t.Errorf("tail = %q", got)
	}
	var def Tail
	def.Write([]byte(strings.Repeat("y", DefaultTailBytes+10)))
	if n := len(def.String()); n != DefaultTailBytes {
		t.Errorf("default tail keeps %d bytes", n)
	}
}
