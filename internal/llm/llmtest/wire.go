package llmtest

import (
	"bytes"
	"context"
	"iter"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/mock"
)

// Wire runs one request of a wire's client over rt: the test's own
// Client{BaseURL, HTTP: &http.Client{Transport: rt}}.Stream. It is what the
// helpers below need of a wire, so each wire's tests say only how its
// client is built.
type Wire func(ctx context.Context, rt http.RoundTripper) iter.Seq[llm.Chunk]

// Collect serves body as a 200 event stream, in reads of step bytes (0:
// whole), and returns every chunk the wire made of it.
func Collect(w Wire, body []byte, step int) []llm.Chunk {
	var chunks []llm.Chunk
	for ch := range w(context.Background(), BodyTransport{Body: body, Step: step}) {
		chunks = append(chunks, ch)
	}
	return chunks
}

// Assemble pushes chunks into a new Assembler.
func Assemble(chunks []llm.Chunk) *llm.Assembler {
	var a llm.Assembler
	for _, c := range chunks {
		a.Push(c)
	}
	return &a
}

// MockCaptures returns the exact bytes `reins mock-llm` sends on the wire
// for each reply, one request a reply: the fuzz seeds that cover every
// shape and fault the mock renders.
func MockCaptures(w Wire, replies []mock.Reply) [][]byte {
	var out [][]byte
	for _, r := range replies {
		srv := mock.NewServer(&mock.Script{Replies: []mock.Reply{r}})
		var body bytes.Buffer
		for range w(context.Background(), Recorder{RT: srv.Transport(), Body: &body}) {
		}
		out = append(out, body.Bytes())
	}
	return out
}

// FuzzStream serves arbitrary bytes as the SSE body of a 200 answer, once
// whole and once in small reads: no panic, the chunk protocol holds
// (CheckStream, with fixed telling the wire's own error texts), and the
// split does not change the chunks. seeds are added whole and split.
func FuzzStream(f *testing.F, w Wire, fixed func(msg string) bool, seeds ...[]byte) {
	for _, b := range seeds {
		f.Add(b, uint8(0))
		f.Add(b, uint8(2))
	}
	f.Fuzz(func(t *testing.T, body []byte, split uint8) {
		whole := Collect(w, body, 0)
		CheckStream(t, whole, fixed)
		step := 1 + int(split%8)
		if chopped := Collect(w, body, step); !cmp.Equal(whole, chopped) {
			t.Fatalf("reads of %d bytes change the stream (-whole +chopped):\n%s", step, cmp.Diff(whole, chopped))
		}
		_ = Assemble(whole).Blocks()
	})
}
