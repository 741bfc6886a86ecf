package agent

import (
	"context"
	"testing"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
)

// A model that answers pause_turn forever (issue 28): every pause costs a
// step, so the turn ends MAX_STEPS after MaxSteps requests. On main the
// loop asked again without bound (here: until the script ran out).
func TestPauseTurnBounded(t *testing.T) {
	pause := []llm.Chunk{
		{Type: llm.ChunkBlockStart, Index: 0, Block: &llm.Block{Type: llm.BlockText}},
		{Type: llm.ChunkTextDelta, Index: 0, Delta: "thinking on"},
		{Type: llm.ChunkBlockEnd, Index: 0},
		finish(llm.FinishPause),
	}
	s := &script{}
	for range 50 {
		s.replies = append(s.replies, chunks(pause...))
	}
	a := newAgent(t, s)
	a.MaxSteps = 3
	res := a.RunTurn(context.Background(), "hi")
	if res.Reason != session.ReasonError || res.Failure == nil || res.Failure.Code != llm.CodeMaxSteps {
		t.Fatalf("turn ended %s %+v, want error %s", res.Reason, res.Failure, llm.CodeMaxSteps)
	}
	if n := len(s.requests); n != 3 {
		t.Fatalf("%d model requests, want MaxSteps = 3", n)
	}
}

// A pause followed by a final answer within the limit completes.
func TestPauseTurnThenAnswer(t *testing.T) {
	pause := []llm.Chunk{finish(llm.FinishPause)}
	s := &script{replies: []func(context.Context, func(llm.Chunk) bool){chunks(pause...), chunks(textReply("done")...)}}
	a := newAgent(t, s)
	a.MaxSteps = 2
	if res := a.RunTurn(context.Background(), "hi"); res.Reason != session.ReasonCompleted {
		t.Fatalf("turn ended %s %+v, want completed", res.Reason, res.Failure)
	}
}
