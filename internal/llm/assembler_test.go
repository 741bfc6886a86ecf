package llm

import (
	"runtime"
	"strings"
	"testing"
)

// stream is a streamed answer of n text deltas, n reasoning deltas and n
// tool-argument deltas, as adapters emit them.
func stream(n int) []Chunk {
	cs := []Chunk{
		{Type: ChunkBlockStart, Index: 0, Block: &Block{Type: BlockReasoning}},
		{Type: ChunkBlockStart, Index: 1, Block: &Block{Type: BlockText}},
		{Type: ChunkBlockStart, Index: 2, Block: &Block{Type: BlockToolCall, ID: "c1", Name: "write"}},
	}
	for range n {
		cs = append(cs,
			Chunk{Type: ChunkReasoningDelta, Index: 0, Delta: "thinking "},
			Chunk{Type: ChunkTextDelta, Index: 1, Delta: "word "},
			Chunk{Type: ChunkToolCallDelta, Index: 2, Delta: `"ab",`})
	}
	return append(cs, Chunk{Type: ChunkFinish, Finish: &Finish{Kind: FinishToolCalls}})
}

func assembleAll(cs []Chunk) []Block {
	var a Assembler
	for _, c := range cs {
		a.Push(c)
	}
	return a.Blocks()
}

func TestAssemblerKeepsEveryDelta(t *testing.T) {
	var a Assembler
	a.Push(Chunk{Type: ChunkBlockStart, Index: 0, Block: &Block{Type: BlockText, Text: "pre:"}})
	a.Push(Chunk{Type: ChunkTextDelta, Index: 0, Delta: "a"})
	a.Push(Chunk{Type: ChunkToolCallDelta, Index: 1, Delta: `{"x":`}) // no block-start
	a.Push(Chunk{Type: ChunkTextDelta, Index: 0, Delta: "b"})
	a.Push(Chunk{Type: ChunkToolCallDelta, Index: 1, Delta: `1}`})
	a.Push(Chunk{Type: ChunkReasoningDelta, Index: 2, Delta: "hm"})
	a.Push(Chunk{Type: ChunkBlockEnd, Index: 2, Signature: "sig"})
	got := a.Blocks()
	want := []Block{
		{Type: BlockText, Text: "pre:ab"},
		{Type: BlockToolCall, Arguments: `{"x":1}`},
		{Type: BlockReasoning, Text: "hm", Signature: "sig"},
	}
	if len(got) != len(want) {
		t.Fatalf("blocks = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("block %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if a.Text() != "ab" {
		t.Errorf("Text() = %q", a.Text())
	}
	// Blocks is repeatable: it does not consume the buffers.
	if again := a.Blocks(); again[0].Text != "pre:ab" {
		t.Errorf("second Blocks() = %+v", again)
	}
}

// TestAssembleIsLinear: the bytes allocated to assemble 8× the deltas stay
// within 12× (appending to strings made it 64×: every delta copied all the
// text before it; a growing buffer's rounding puts linear at 8–10×).
// Bytes, not time, so no machine speed decides it.
func TestAssembleIsLinear(t *testing.T) {
	small, large := stream(10_000), stream(80_000)
	got := assembleAll(large)
	if want := strings.Repeat("word ", 80_000); got[1].Text != want {
		t.Fatalf("text of %d bytes, want %d", len(got[1].Text), len(want))
	}
	ratio := float64(allocated(large)) / float64(allocated(small))
	t.Logf("allocated bytes, 80k/10k deltas: %.1f×", ratio)
	if ratio > 12 {
		t.Errorf("80k deltas allocate %.1f× what 10k do, want ≤ 12×", ratio)
	}
}

func allocated(cs []Chunk) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	assembleAll(cs)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// BenchmarkAssemble: BENCHMARKS.md, "Streaming".
func BenchmarkAssemble(b *testing.B) {
	for _, n := range []struct {
		name string
		n    int
	}{{"10k", 10_000}, {"80k", 80_000}} {
		cs := stream(n.n)
		b.Run(n.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				assembleAll(cs)
			}
		})
	}
}
