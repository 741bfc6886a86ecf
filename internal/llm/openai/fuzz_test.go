package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/mock"
)

// bodyTransport answers every request with HTTP 200 and body as an event
// stream, handing out at most step bytes per Read (0: all at once), so the
// SSE reader and the sniffer see the bytes split at arbitrary places.
type bodyTransport struct {
	body []byte
	step int
}

func (bt bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(&choppyReader{b: bt.body, step: bt.step}),
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

// recorder passes requests to a real transport and keeps the response
// bodies it read.
type recorder struct {
	rt   http.RoundTripper
	body *bytes.Buffer
}

func (r recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, r.body), resp.Body}
	return resp, nil
}

// mockCaptures returns the exact bytes the mock server sends on the OpenAI
// wire for replies covering every shape and fault it can render: the real
// captures the fuzzer starts from.
func mockCaptures(tb testing.TB) [][]byte {
	tb.Helper()
	args := func(s string) json.RawMessage { return json.RawMessage(s) }
	replies := []mock.Reply{
		{Text: "Hello there, how can I help?", Chunk: 5},
		{Reasoning: "Let me think about it.", Text: "It is 4.", Chunk: 4},
		{Reasoning: "only thinking"},
		{Text: " \n "},
		{ToolCalls: []mock.ToolCall{{Name: "read", Arguments: args(`{"path":"notes.txt"}`)}, {ID: "call_x", Name: "bash", Arguments: args(`{"command":"ls -la"}`)}}, Chunk: 3},
		{Text: "Let me look.", ToolCalls: []mock.ToolCall{{Name: "grep", Arguments: args(`"{not json"`)}}},
		{ToolCalls: []mock.ToolCall{{Name: "job_list"}}, Finish: "stop"},
		{Text: "alive", Chunk: 1, KeepAlive: true},
		{Text: "cut sho", Finish: "length"},
		{Finish: "length"},
		{Text: "no", Finish: "content_filter"},
		{Text: "odd", Finish: "weird-reason.v2"},
		{Text: "no finish", Finish: "none"},
		{Text: "usage", Usage: &mock.Usage{Input: 100, Output: 20, CacheRead: 64, Reasoning: 7}},
		{Fault: mock.FaultEmpty},
		{Fault: mock.FaultEmptyBody},
		{Fault: mock.FaultCut, Text: "partial answer", Chunk: 4},
		{Fault: mock.FaultMalformed, Text: "before the bad payload"},
		{Fault: mock.FaultContextWindow},
		{Fault: mock.FaultOverloaded},
	}
	var out [][]byte
	for _, r := range replies {
		srv := mock.NewServer(&mock.Script{Replies: []mock.Reply{r}})
		var body bytes.Buffer
		c := &Client{BaseURL: "http://mock.invalid", Provider: "deepseek",
			HTTP: &http.Client{Transport: recorder{srv.Transport(), &body}}}
		for range c.Stream(context.Background(), simpleRequest) {
		}
		out = append(out, body.Bytes())
	}
	return out
}

// Messages a finish may carry: fixed texts, never provider bytes.
var fixedMessages = map[string]bool{
	msgEmpty: true, msgEmptyBody: true, msgClosed: true, msgMalformed: true, msgNotSSE: true,
	msgTooLong: true, msgStreamError: true, msgStreamCW: true, msgUnknown: true,
}

var knownCodes = map[string]bool{
	llm.CodeEmptyResponse: true, llm.CodeContextWindowExceeded: true, llm.CodeStreamClosed: true,
	llm.CodeMalformedResponse: true, llm.CodeRateLimit: true, llm.CodeServer: true, llm.CodeAuth: true,
	llm.CodeInvalidRequest: true, llm.CodeTimeout: true, llm.CodeTransport: true, llm.CodeAborted: true,
	llm.CodeQuota: true,
}

var reasonCodeRE = regexp.MustCompile(`^[A-Z0-9_]{1,64}$`)

// FuzzStream serves arbitrary bytes as the SSE body of a 200 answer, once
// whole and once in small reads, and checks the stream contract: no panic;
// the protocol of checkProtocol (exactly one finish, last; blocks opened in
// order from 0; deltas only into an open block of their kind; every block
// ended); a finish kind from the known set; an error finish with a known
// code or a sanitised [A-Z0-9_] code and a fixed message; a stop finish only
// with content; and the same chunks however the body is split.
func FuzzStream(f *testing.F) {
	for _, b := range mockCaptures(f) {
		f.Add(b, uint8(0))
		f.Add(b, uint8(2))
	}
	for _, s := range []string{
		"",
		": keep-alive\n\n",
		"data: [DONE]\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{}\"}}]}}]}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"x\"}},{\"id\":\"b\",\"function\":{\"name\":\"y\"}}]}}]}\n\ndata: [DONE]\n\n",
		"event: error\ndata: {\"message\":\"maximum context length\"}\n\n",
		"data: {\"error\":\"overloaded\"}\n\n",
		"<html>502 Bad Gateway</html>",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"",
	} {
		f.Add([]byte(s), uint8(0))
	}

	f.Fuzz(func(t *testing.T, body []byte, split uint8) {
		whole := streamBody(t, body, 0)
		checkProtocol(t, whole)
		checkFinish(t, whole)
		step := 1 + int(split%8)
		if chopped := streamBody(t, body, step); !cmp.Equal(whole, chopped) {
			t.Fatalf("reads of %d bytes change the stream (-whole +chopped):\n%s", step, cmp.Diff(whole, chopped))
		}
		var asm llm.Assembler
		for _, c := range whole {
			asm.Push(c)
		}
		_ = asm.Blocks()
	})
}

func streamBody(t *testing.T, body []byte, step int) []llm.Chunk {
	t.Helper()
	c := &Client{BaseURL: "http://fuzz.invalid", Provider: "deepseek",
		HTTP: &http.Client{Transport: bodyTransport{body: body, step: step}}}
	var chunks []llm.Chunk
	for ch := range c.Stream(context.Background(), simpleRequest) {
		chunks = append(chunks, ch)
	}
	return chunks
}

// checkFinish checks the finish of a stream that was neither cancelled nor
// timed out (checkProtocol has checked there is exactly one, last).
func checkFinish(t *testing.T, chunks []llm.Chunk) {
	t.Helper()
	fin := chunks[len(chunks)-1].Finish
	opened := 0
	for _, c := range chunks {
		if c.Type == llm.ChunkBlockStart {
			opened++
		}
	}
	switch fin.Kind {
	case llm.FinishStop:
		if opened == 0 {
			t.Fatalf("stop finish with no content block: want %s", llm.CodeEmptyResponse)
		}
	case llm.FinishToolCalls, llm.FinishMaxTokens, llm.FinishRefusal:
	case llm.FinishError:
		if !knownCodes[fin.Code] && !reasonCodeRE.MatchString(fin.Code) {
			t.Fatalf("error finish code %q is neither known nor [A-Z0-9_]", fin.Code)
		}
		if !fixedMessages[fin.Message] {
			t.Fatalf("error finish message %q is not one of the fixed texts", fin.Message)
		}
	default:
		t.Fatalf("finish kind %q is not in the known set", fin.Kind)
	}
}
