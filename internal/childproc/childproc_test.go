package childproc

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestEnviron(t *testing.T) {
	got := Environ([]string{"A=parent", "B=2", "A=again", "C=3"}, map[string]string{"C": "child", "A": "child"})
	want := []string{"B=2", "A=child", "C=child"}
	if !slices.Equal(got, want) {
		t.Errorf("Environ = %q, want %q", got, want)
	}
	if got := Environ([]string{"X=1"}, nil); !slices.Equal(got, []string{"X=1"}) {
		t.Errorf("no extra: %q", got)
	}
}

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

func TestLifetime(t *testing.T) {
	errTimeout, errParent := errors.New("timeout"), errors.New("parent")
	l := Start(20*time.Millisecond, errTimeout)
	<-l.Context().Done()
	if l.Cause() != errTimeout {
		t.Errorf("cause = %v", l.Cause())
	}
	l.End(errParent) // the first cause stays
	if l.Cause() != errTimeout {
		t.Errorf("cause = %v", l.Cause())
	}

	l = Start(0, errTimeout)
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-l.Context().Done()
		close(done)
	}()
	cancel()
	l.Wait(ctx, done, errParent)
	if l.Cause() != errParent {
		t.Errorf("cause = %v", l.Cause())
	}
}
