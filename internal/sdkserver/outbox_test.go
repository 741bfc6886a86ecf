package sdkserver

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"
)

// TestOutboxBackPressure: while the writer is blocked, push blocks once
// the queue holds its bound; every frame arrives, in order, once the
// reader reads (issue 14 #17).
func TestOutboxBackPressure(t *testing.T) {
	r, w := io.Pipe()
	o := newOutbox(w, t.Logf, 1000, time.Second)
	const n = 200
	pushed := make(chan struct{})
	go func() {
		defer close(pushed)
		for i := range n {
			o.push(fmt.Sprintf("frame %03d %s", i, bytes.Repeat([]byte("x"), 80)))
		}
	}()
	// The writer holds one frame in a blocked Write; the queue fills up.
	for o.queued() < 900 {
		select {
		case <-pushed:
			t.Fatalf("all %d frames were queued (%d bytes) while nothing was written: no back-pressure", n, o.queued())
		default:
		}
		time.Sleep(time.Millisecond)
	}
	if q := o.queued(); q > 1000 {
		t.Fatalf("%d bytes queued, bound 1000", q)
	}
	select {
	case <-pushed:
		t.Fatal("the pusher finished while the queue was full")
	default:
	}
	got := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); got <- b }()
	<-pushed
	o.close()
	w.Close()
	lines := bytes.Split(bytes.TrimSuffix(<-got, []byte("\n")), []byte("\n"))
	if len(lines) != n {
		t.Fatalf("%d frames arrived, want %d", len(lines), n)
	}
	for i, l := range lines {
		if want := fmt.Sprintf(`"frame %03d `, i); !bytes.HasPrefix(l, []byte(want)) {
			t.Fatalf("frame %d is %.20q, want %q...", i, l, want)
		}
	}
}
