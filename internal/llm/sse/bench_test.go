package sse

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	gosse "github.com/tmaxmax/go-sse"
)

// wireStream is 10,000 OpenAI-shaped chunk events plus keep-alives: the
// framing work of a long streamed answer, without the JSON.
func wireStream() []byte {
	var b bytes.Buffer
	for i := range 10000 {
		if i%100 == 0 {
			b.WriteString(": keep-alive\n\n")
		}
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"word%d "},"logprobs":null,"finish_reason":null}],"usage":null}`+"\n\n", i)
	}
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// BenchmarkFraming measures SSE framing alone (MB/s of wire bytes): this
// package against the go-sse reader the adapters used before it.
func BenchmarkFraming(b *testing.B) {
	stream := wireStream()
	b.Run("reins", func(b *testing.B) {
		b.SetBytes(int64(len(stream)))
		b.ReportAllocs()
		for b.Loop() {
			r := NewReader(bytes.NewReader(stream), 17<<20)
			n := 0
			for {
				e, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				n += len(e.Data)
			}
			if n == 0 {
				b.Fatal("no data")
			}
		}
	})
	b.Run("go-sse", func(b *testing.B) {
		b.SetBytes(int64(len(stream)))
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			for e, err := range gosse.Read(bytes.NewReader(stream), &gosse.ReadConfig{MaxEventSize: 17 << 20}) {
				if err != nil {
					b.Fatal(err)
				}
				n += len(e.Data)
			}
			if n == 0 {
				b.Fatal("no data")
			}
		}
	})
}
