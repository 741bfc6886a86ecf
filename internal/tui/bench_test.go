package tui

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/session"
)

// BenchmarkStreamToken is the screen's cost of one streamed token at its
// worst: a batch of one text delta, then a full redraw of the view (the
// program batches what arrives between frames, so real streams cost less).
func BenchmarkStreamToken(b *testing.B) {
	s := newScreen(b, "", nil)
	root := s.m.root
	it := s.ev(root, session.TypeAssistantChunk, chunk("token "))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2000 == 0 { // a step ends now and then, as in a real answer
			s.m.live.text.Reset()
		}
		s.send(feedMsg{[]item{it}})
		_ = s.m.View()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkStreamTokenMarkdown is BenchmarkStreamToken for an answer
// whose paragraphs end every 40 tokens: each end renders the finished
// paragraphs on screen as Markdown again.
func BenchmarkStreamTokenMarkdown(b *testing.B) {
	s := newScreen(b, "", nil)
	root := s.m.root
	word := s.ev(root, session.TypeAssistantChunk, chunk("some *word* "))
	end := s.ev(root, session.TypeAssistantChunk, chunk("end.\n\n"))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2000 == 0 {
			s.m.live.text.Reset()
		}
		it := word
		if i%40 == 39 {
			it = end
		}
		s.send(feedMsg{[]item{it}})
		_ = s.m.View()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// TestStreamKeepsInput: while 2,000 tokens stream at about 1,000 a
// second through a real Bubble Tea program, every key typed reaches the
// editor, in order.
func TestStreamKeepsInput(t *testing.T) {
	s := newScreen(t, "", nil)
	in, keys := io.Pipe()
	p := tea.NewProgram(s.m, tea.WithInput(in), tea.WithOutput(io.Discard), tea.WithWindowSize(100, 30), tea.WithoutSignals())
	done := make(chan tea.Model, 1)
	go func() {
		m, err := p.Run()
		if err != nil {
			t.Error(err)
		}
		done <- m
	}()
	typed := make(chan struct{})
	want := strings.Repeat("the quick brown fox ", 15) // 300 keys
	go func() {
		defer close(typed)
		for i, r := range want {
			keys.Write([]byte(string(r)))
			if i%3 == 0 {
				time.Sleep(2 * time.Millisecond) // a fast typist, interleaved with the stream
			}
		}
	}()
	root := s.m.root
	for i := 0; i < 2000; i++ {
		s.m.feed.Push(s.ev(root, session.TypeAssistantChunk, chunk(fmt.Sprintf("tok%d ", i))))
		if i%10 == 9 {
			time.Sleep(10 * time.Millisecond) // ≈1,000 tokens a second
		}
	}
	<-typed
	keys.Write([]byte{0x04}) // Ctrl-D: after every key typed
	var m tea.Model
	select {
	case m = <-done:
	case <-time.After(60 * time.Second):
		p.Kill()
		t.Fatal("the program did not exit")
	}
	keys.Close()
	if got := m.(*Model).editor.Value(); got != want {
		t.Errorf("the editor holds %d of %d keys typed:\n%q", len(got), len(want), got)
	}
}

// TestLongSessionHoldsLittle: after a 200-step turn on the mock model the
// screen holds nothing per step (the scrollback is the terminal's): no
// live text, calls or children, and its heap use is reported.
func TestLongSessionHoldsLittle(t *testing.T) {
	heap, m := longSession(t, 200)
	if m.live.text.Len() != 0 || len(m.live.calls) != 0 || !m.tree.Empty() || len(m.approvals) != 0 {
		t.Errorf("the screen keeps step state: text %d, calls %d", m.live.text.Len(), len(m.live.calls))
	}
	t.Logf("heap added by a 200-step session: %.1f MiB", float64(heap)/(1<<20))
}

// longSession runs one turn of steps steps (each an ls call) through the
// model and returns the heap it added (in use after it, collected, less before).
func longSession(t testing.TB, steps int) (uint64, *Model) { return session500(t, steps, true) }

// session500 runs the long turn through the screen, or (screen false)
// straight on the session with the screen's feed closed: the difference
// of the two heaps is what the screen holds.
func session500(t testing.TB, steps int, screen bool) (uint64, *Model) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	s := newScreen(t, `
replies:
  - match: LOOP
    toolCalls:
      - {id: l1, name: ls, arguments: {path: "."}}
  - repeat: true
    text: "looking further"
    toolCalls:
      - {id: l2, name: ls, arguments: {path: "."}}
`, func(o *Options) { o.Session.MaxSteps = steps })
	var committed int
	s.m.print = func(c string) { committed += len(c) } // the terminal keeps it, not the screen
	if screen {
		s.typeText("LOOP")
		s.pump(func() bool { return !s.m.running })
	} else {
		s.m.feed.Close()
		s.m.sess.Run(t.Context(), "LOOP")
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("%d bytes committed to the scrollback", committed)
	return ms.HeapInuse - min(ms.HeapInuse, before.HeapInuse), s.m
}

// BenchmarkSession500Steps reports the heap in use after a 500-step
// session driven through the screen (the agent's history included).
func BenchmarkSession500Steps(b *testing.B) {
	for _, screen := range []bool{true, false} {
		b.Run(fmt.Sprintf("screen=%v", screen), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				heap, _ := session500(b, 500, screen)
				b.ReportMetric(float64(heap)/(1<<20), "heap-added-MiB")
			}
		})
	}
}
