// Package llmtest holds what the adapters' tests share: the helpers a
// wire's tests run over its client (Wire: collect, assemble, mock captures,
// the stream fuzz target), an HTTP transport
// that serves fixed bytes in arbitrary pieces, one that records the bytes
// a real server sent, and the closed set of failure codes a finish may
// carry. It is imported only by tests.
package llmtest

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
)

// BodyTransport answers every request with HTTP 200 and Body as an event
// stream, handing out at most Step bytes per Read (0: all at once), so an
// adapter's SSE reader sees the bytes split at arbitrary places.
type BodyTransport struct {
	Body []byte
	Step int
}

// RoundTrip implements http.RoundTripper.
func (bt BodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(&choppyReader{b: bt.Body, step: bt.Step}),
		Request:    r,
	}, nil
}

type choppyReader struct {
	b    []byte
	step int
}

func (c *choppyReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	if c.step > 0 && len(p) > c.step {
		p = p[:c.step]
	}
	n := copy(p, c.b)
	c.b = c.b[n:]
	return n, nil
}

// Recorder passes requests to RT and appends the response bodies it read
// to Body: how tests capture the exact bytes of the mock server.
type Recorder struct {
	RT   http.RoundTripper
	Body *bytes.Buffer
}

// RoundTrip implements http.RoundTripper.
func (r Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.RT.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, r.Body), resp.Body}
	return resp, nil
}

var reasonCodeRE = regexp.MustCompile(`^[A-Z0-9_]{1,64}$`)

// ValidCode reports whether an error finish's code is one of docs/providers.md's or
// an upper-cased, sanitised unknown finish reason ([A-Z0-9_], ≤ 64 bytes).
func ValidCode(code llm.Code) bool {
	return slices.Contains(llm.ProviderCodes(), code) || reasonCodeRE.MatchString(string(code))
}

// LingeringServer starts a server that answers every request with the
// event stream body and then waits a moment before ending it (the chunked
// encoding's last chunk comes after the stream's end marker, as from a
// provider behind a proxy). It counts the connections clients opened: a
// client that drops a finished stream's connection dials once per request.
func LingeringServer(t testing.TB, body string) (*httptest.Server, *atomic.Int32) {
	var dials atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
		w.(http.Flusher).Flush()
		time.Sleep(20 * time.Millisecond)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &dials
}

// CheckStream checks the chunk protocol and the finish of a stream that
// was neither cancelled nor timed out: exactly one finish, last; blocks
// opened in order from 0; deltas and ends only for an opened, not yet
// ended block, deltas of the block's kind; a finish kind from the known
// set; an error finish with a valid code (ValidCode) and one of fixed,
// the adapter's fixed messages (provider text never reaches a finish);
// a stop finish only with content.
func CheckStream(t testing.TB, chunks []llm.Chunk, fixed func(msg string) bool) {
	t.Helper()
	if len(chunks) == 0 {
		t.Fatal("no chunks: the stream must end with a finish")
	}
	for i, c := range chunks {
		if (c.Type == llm.ChunkFinish) != (i == len(chunks)-1) {
			t.Fatalf("chunk %d of %d is %q: want exactly one finish, last", i, len(chunks), c.Type)
		}
	}
	kinds := map[int]llm.BlockType{}
	ended := map[int]bool{}
	deltaKind := map[llm.ChunkType]llm.BlockType{
		llm.ChunkTextDelta: llm.BlockText, llm.ChunkReasoningDelta: llm.BlockReasoning, llm.ChunkToolCallDelta: llm.BlockToolCall,
	}
	for i, c := range chunks {
		switch c.Type {
		case llm.ChunkBlockStart:
			if c.Index != len(kinds) || c.Block == nil {
				t.Fatalf("chunk %d: block-start index %d (block %v), want index %d", i, c.Index, c.Block, len(kinds))
			}
			kinds[c.Index] = c.Block.Type
		case llm.ChunkTextDelta, llm.ChunkReasoningDelta, llm.ChunkToolCallDelta:
			k, ok := kinds[c.Index]
			if !ok || ended[c.Index] || k != deltaKind[c.Type] {
				t.Fatalf("chunk %d: %s into block %d (opened %v, ended %v, kind %q)", i, c.Type, c.Index, ok, ended[c.Index], k)
			}
		case llm.ChunkBlockEnd:
			if _, ok := kinds[c.Index]; !ok || ended[c.Index] {
				t.Fatalf("chunk %d: block-end of block %d (opened %v, ended %v)", i, c.Index, ok, ended[c.Index])
			}
			ended[c.Index] = true
		case llm.ChunkUsage:
			if c.Usage == nil {
				t.Fatalf("chunk %d: usage chunk without usage", i)
			}
		case llm.ChunkFinish:
		default:
			t.Fatalf("chunk %d: unknown type %q", i, c.Type)
		}
	}
	fin := chunks[len(chunks)-1].Finish
	if fin == nil {
		t.Fatal("finish chunk without a Finish")
	}
	switch fin.Kind {
	case llm.FinishStop:
		if len(kinds) == 0 {
			t.Fatalf("stop finish with no content block: want %s", llm.CodeEmptyResponse)
		}
	case llm.FinishToolCalls, llm.FinishMaxTokens, llm.FinishRefusal, llm.FinishPause:
	case llm.FinishError:
		if !ValidCode(fin.Code) {
			t.Fatalf("error finish code %q is neither known nor [A-Z0-9_]", fin.Code)
		}
		if !fixed(fin.Message) {
			t.Fatalf("error finish message %q is not one of the fixed texts", fin.Message)
		}
	default:
		t.Fatalf("finish kind %q is not in the known set", fin.Kind)
	}
}
