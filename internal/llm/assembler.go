package llm

// Assembler rebuilds content blocks from a chunk stream. It is a pure
// assembly algorithm: it judges nothing about the response (adapters
// classify wire facts, the loop decides what to do with a finish).
//
// One rule lives here because every consumer needs it: a max-tokens finish
// drops the step's tool calls, whose arguments may be cut mid-JSON. A
// tool-only step cut by max-tokens therefore assembles to no blocks at all.
//
// Deltas are appended to byte buffers, one per block, and become the
// blocks' strings only in Blocks: appending to a string copies it, which
// made a long streamed answer (or a long tool argument) quadratic in its
// length (BENCHMARKS.md, "Streaming").
type Assembler struct {
	blocks []Block
	bufs   [][]byte    // per block: its Text, or its Arguments for a tool call
	open   map[int]int // chunk index -> position in blocks
	usage  Usage
	finish *Finish
	text   []byte
}

// Push adds one chunk.
func (a *Assembler) Push(c Chunk) {
	switch c.Type {
	case ChunkBlockStart:
		if a.open == nil {
			a.open = make(map[int]int)
		}
		b := Block{}
		if c.Block != nil {
			b = *c.Block
		}
		a.open[c.Index] = len(a.blocks)
		var buf []byte
		if b.Type == BlockToolCall {
			buf, b.Arguments = append(buf, b.Arguments...), ""
		} else {
			buf, b.Text = append(buf, b.Text...), ""
		}
		a.blocks = append(a.blocks, b)
		a.bufs = append(a.bufs, buf)
	case ChunkTextDelta, ChunkReasoningDelta, ChunkToolCallDelta:
		i := a.block(c)
		a.bufs[i] = append(a.bufs[i], c.Delta...)
		if c.Type == ChunkTextDelta {
			a.text = append(a.text, c.Delta...)
		}
	case ChunkBlockEnd:
		if c.Signature != "" {
			a.blocks[a.block(c)].Signature = c.Signature
		}
	case ChunkUsage:
		if c.Usage != nil {
			a.usage = *c.Usage
		}
	case ChunkFinish:
		if c.Finish != nil {
			f := *c.Finish
			a.finish = &f
		}
	}
}

// block returns the position of the block a delta belongs to, opening one
// of the delta's kind if the adapter sent no block-start.
func (a *Assembler) block(c Chunk) int {
	if i, ok := a.open[c.Index]; ok {
		return i
	}
	t := BlockText
	switch c.Type {
	case ChunkReasoningDelta:
		t = BlockReasoning
	case ChunkToolCallDelta:
		t = BlockToolCall
	}
	a.Push(Chunk{Type: ChunkBlockStart, Index: c.Index, Block: &Block{Type: t}})
	return a.open[c.Index]
}

// Blocks returns the assembled content in the order blocks opened. After a
// max-tokens finish, tool calls are left out.
func (a *Assembler) Blocks() []Block {
	dropCalls := a.finish != nil && a.finish.Kind == FinishMaxTokens
	out := make([]Block, 0, len(a.blocks))
	for i, b := range a.blocks {
		if dropCalls && b.Type == BlockToolCall {
			continue
		}
		if b.Type == BlockToolCall {
			b.Arguments = string(a.bufs[i])
		} else {
			b.Text = string(a.bufs[i])
		}
		out = append(out, b)
	}
	return out
}

// Usage returns the last usage reported.
func (a *Assembler) Usage() Usage { return a.usage }

// Finish returns the stream's finish; a stream that ended without one is
// reported as a closed stream.
func (a *Assembler) Finish() Finish {
	if a.finish == nil {
		return Finish{Kind: FinishError, Code: CodeStreamClosed, Message: "stream ended without a finish"}
	}
	return *a.finish
}

// Text returns all streamed text deltas, in order.
func (a *Assembler) Text() string { return string(a.text) }
