package llm

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestBodyRecycledOnlyAfterItsEnd(t *testing.T) {
	tests := []struct {
		name     string
		read     int // bytes read before Recycle; -1: to EOF
		recycled bool
	}{
		{"read to its end", -1, true},
		{"cut short", 3, false},
		{"never read", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, "http://x.invalid/", nil)
			buf := append(BodyBuffer(16), "0123456789"...)
			b := SetBody(req, buf)
			if req.ContentLength != 10 {
				t.Fatalf("ContentLength %d", req.ContentLength)
			}
			switch {
			case tt.read < 0:
				got, _ := io.ReadAll(req.Body)
				if string(got) != "0123456789" {
					t.Fatalf("read %q", got)
				}
			case tt.read > 0:
				io.ReadFull(req.Body, make([]byte, tt.read))
			}
			b.Recycle()
			if (b.buf == nil) != tt.recycled {
				t.Fatalf("recycled = %v, want %v", b.buf == nil, tt.recycled)
			}
			b.Recycle() // twice is harmless
		})
	}
	var nilBody *Body
	nilBody.Recycle()
}

func TestBodyWriteTo(t *testing.T) {
	req, _ := http.NewRequest(http.MethodPost, "http://x.invalid/", nil)
	b := SetBody(req, append(BodyBuffer(4), "abcd"...))
	if _, ok := req.Body.(io.WriterTo); !ok {
		t.Fatal("the request body hides WriteTo")
	}
	var sb strings.Builder
	if n, err := io.Copy(&sb, req.Body); n != 4 || err != nil || sb.String() != "abcd" {
		t.Fatalf("copied %d %v %q", n, err, sb.String())
	}
	b.Recycle()
	if b.buf != nil {
		t.Fatal("a body written whole was not recycled")
	}
}
