package sdk_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/reinsdev/reins/sdk"
)

// FuzzFrameReader checks FrameReader against a reference splitter: the
// input cut at each "\n", the unterminated tail dropped, one trailing "\r"
// stripped per line, and a line longer than the limit (after the strip)
// reported as ErrFrameTooLong and skipped, the reader carrying on. Every
// frame is free of "\n", so the frames joined with "\n" are the input minus
// the over-long lines, the "\r"s and the tail.
func FuzzFrameReader(f *testing.F) {
	// Seeds: frames as `reins sdk` sends and receives them.
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n",
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"runtime":{"name":"reins"}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"session/event","params":{"sessionId":"s1","event":{"type":"status","status":"idle"}}}` + "\n",
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}` + "\r\n{not json\r\n\n",
		"a\r\n" + strings.Repeat("x", 100) + "\n\nb\ntail-without-newline",
		"\r\r\n\r\n\n",
		"",
	} {
		f.Add([]byte(s), uint8(10), false, false)
		f.Add([]byte(s), uint8(200), true, false)
	}
	// Lines past the 64 KiB read buffer, within and over a wide limit.
	big := strings.Repeat("y", 70000)
	f.Add([]byte(big+"\n"+big+big+"\r\nz\n"), uint8(200), false, true)
	f.Fuzz(func(t *testing.T, in []byte, max uint8, oneByte, wide bool) {
		limit := int(max)
		if wide {
			limit <<= 9 // up to 130 KiB: a frame may span read buffers
		}
		var r io.Reader = bytes.NewReader(in)
		if oneByte {
			r = iotest.OneByteReader(r)
		}
		fr := sdk.NewFrameReaderSize(r, limit)

		// The reference: whole lines only.
		var want []string // "" for a frame, or the frame; nil-marker below
		var wantLong []bool
		parts := bytes.Split(in, []byte("\n"))
		for _, p := range parts[:len(parts)-1] {
			p = bytes.TrimSuffix(p, []byte("\r"))
			wantLong = append(wantLong, len(p) > limit)
			if len(p) > limit {
				want = append(want, "")
			} else {
				want = append(want, string(p))
			}
		}

		var got []string
		var gotLong []bool
		for i := 0; ; i++ {
			if i > len(in)+1 {
				t.Fatalf("more results than lines in %d bytes", len(in))
			}
			line, err := fr.Next()
			if errors.Is(err, sdk.ErrFrameTooLong) {
				if line != nil {
					t.Fatalf("ErrFrameTooLong with a frame %q", line)
				}
				got, gotLong = append(got, ""), append(gotLong, true)
				continue
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			if bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("frame %q holds a newline", line)
			}
			if len(line) > limit {
				t.Fatalf("frame of %d bytes over the limit %d", len(line), limit)
			}
			got, gotLong = append(got, string(line)), append(gotLong, false)
		}
		if len(got) != len(want) {
			t.Fatalf("%d results, want %d (%q vs %q)", len(got), len(want), got, want)
		}
		for i := range want {
			if got[i] != want[i] || gotLong[i] != wantLong[i] {
				t.Fatalf("result %d: %q (too long %v), want %q (too long %v)", i, got[i], gotLong[i], want[i], wantLong[i])
			}
		}
		// Reconstruction: the kept frames joined with "\n".
		var kept, ref []string
		for i := range got {
			if !gotLong[i] {
				kept = append(kept, got[i])
			}
		}
		for _, p := range parts[:len(parts)-1] {
			if p = bytes.TrimSuffix(p, []byte("\r")); len(p) <= limit {
				ref = append(ref, string(p))
			}
		}
		if strings.Join(kept, "\n") != strings.Join(ref, "\n") {
			t.Fatalf("frames do not reconstruct the input")
		}
	})
}
