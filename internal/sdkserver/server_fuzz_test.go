package sdkserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/sdkserver"
	"github.com/reinsdev/reins/sdk"
)

// fuzzSentinel is a request sent after the fuzzed lines: its answer proves
// the runtime kept serving through them.
const fuzzSentinel = `{"jsonrpc":"2.0","id":"fuzz-sentinel","method":"fuzz/unknown"}`

// FuzzServe feeds fuzzed lines to a runtime (initialized on the in-process
// mock model) and checks that every output line is a JSON-RPC 2.0 object,
// that a malformed line is answered with a parse error, that the runtime
// keeps serving (it answers a request sent after the fuzzed lines, unless
// they asked it to shut down), and that it returns once its input ends.
func FuzzServe(f *testing.F) {
	// Seeds: traffic of a real session, and its broken variants.
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"content":[{"type":"text","text":"hello"}]}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/cancel","params":{"sessionId":"nope"}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{}}`,
		`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":9,"result":{}}`,
		"{not json\n[1,2]\n\"str\"\nnull\n{}\n{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"x\"}",
		`{"jsonrpc":"2.0","id":{"a":1},"method":"session/prompt","params":{"sessionId":7}}`,
		"\r\n\t \n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		cwd, home := t.TempDir(), t.TempDir()
		cfg := sdkserver.Config{Home: home, Cwd: cwd, Model: "mock/echo", Getenv: func(string) string { return "" }}

		// What the runtime must do with the fuzzed lines.
		malformed, shutdown := false, false
		fr := sdk.NewFrameReaderSize(bytes.NewReader([]byte(in+"\n")), sdk.MaxFrameBytes)
		for {
			l, err := fr.Next()
			if err != nil {
				break
			}
			if len(bytes.TrimSpace(l)) == 0 {
				continue
			}
			if !json.Valid(l) {
				malformed = true
				continue
			}
			var r struct {
				JSONRPC string `json:"jsonrpc"`
				Method  string `json:"method"`
			}
			if json.Unmarshal(l, &r) == nil && r.JSONRPC == "2.0" && r.Method == sdk.MethodShutdown {
				shutdown = true
			}
		}

		inR, inW := io.Pipe()
		var out bytes.Buffer
		served := make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			defer close(served)
			sdkserver.New(cfg).Serve(ctx, inR, &out)
		}()
		go func() {
			io.WriteString(inW, `{"jsonrpc":"2.0","id":"fuzz-init","method":"initialize","params":{"protocolVersion":1}}`+"\n")
			io.WriteString(inW, in+"\n")
			io.WriteString(inW, fuzzSentinel+"\n")
			inW.Close()
		}()
		select {
		case <-served:
		case <-time.After(20 * time.Second):
			cancel() // a bound on a broken runtime, not a timing assertion
			<-served
			t.Fatal("Serve did not return after its input ended")
		}
		inR.CloseWithError(io.ErrClosedPipe) // unblock the writer if Serve stopped reading

		parseErrors, sentinel := 0, false
		for _, l := range bytes.Split(out.Bytes(), []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(l, &m); err != nil {
				t.Fatalf("output line is not a JSON object: %q", l)
			}
			if string(m["jsonrpc"]) != `"2.0"` {
				t.Fatalf("output line without jsonrpc 2.0: %q", l)
			}
			_, hasMethod := m["method"]
			_, hasResult := m["result"]
			_, hasError := m["error"]
			_, hasID := m["id"]
			switch {
			case hasMethod:
				if hasID || hasResult || hasError {
					t.Fatalf("notification with a response field: %q", l)
				}
			case hasResult == hasError || !hasID:
				t.Fatalf("response needs an id and exactly one of result and error: %q", l)
			case hasError:
				var e sdk.RPCError
				if err := json.Unmarshal(m["error"], &e); err != nil || e.Message == "" {
					t.Fatalf("malformed error object: %q", l)
				}
				if e.Code == sdk.CodeParseError {
					if string(m["id"]) != "null" {
						t.Fatalf("parse error with an id: %q", l)
					}
					parseErrors++
				}
				if string(m["id"]) == `"fuzz-sentinel"` {
					sentinel = e.Code == sdk.CodeMethodNotFound
				}
			}
		}
		if malformed && parseErrors == 0 && !shutdown {
			t.Fatalf("a malformed line got no parse error; output:\n%s", out.Bytes())
		}
		if !shutdown && !sentinel {
			t.Fatalf("the runtime stopped serving before the last request; output:\n%s", out.Bytes())
		}
	})
}
