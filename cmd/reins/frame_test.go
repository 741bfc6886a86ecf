package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/reinsdev/reins/sdk"
)

// TestOversizeFrameOneLimit sends `reins acp` and `reins sdk` a line one
// byte over sdk.MaxFrameBytes and then an initialize request: each runtime
// answers the long line with a JSON-RPC parse error (id null), answers the
// initialize, and exits 0 when stdin ends (issue 14 #6). A line exactly at
// the limit is a frame, not "too long".
func TestOversizeFrameOneLimit(t *testing.T) {
	initACP := `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`
	initSDK := `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1}}`
	for _, tc := range []struct {
		name string
		args []string
		init string
	}{
		{"acp", []string{"acp", "-m", "mock/echo"}, initACP},
		{"sdk", []string{"sdk", "-m", "mock/echo"}, initSDK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cwd := t.TempDir()
			cmd := acpCmd(t, cwd, t.TempDir(), tc.args...)
			cmd.Args[0] = "reins"
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() {
				// Over the limit by one byte, then exactly at it (a string
				// value padded so the JSON text is MaxFrameBytes long, an
				// invalid request: answered, not "too long"), then initialize.
				over := `{"x":"` + strings.Repeat("a", sdk.MaxFrameBytes+1-8) + `"}`
				at := `{"x":"` + strings.Repeat("a", sdk.MaxFrameBytes-8) + `"}`
				io.WriteString(stdin, over+"\n")
				io.WriteString(stdin, at+"\n")
				io.WriteString(stdin, tc.init+"\n")
			}()
			type frame struct {
				ID     json.RawMessage `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			sc := bufio.NewScanner(stdout)
			sc.Buffer(nil, 1<<20)
			var tooLong, inited bool
			var got []string
			for !inited && sc.Scan() {
				got = append(got, sc.Text())
				var f frame
				if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
					t.Fatalf("stdout line is not JSON: %q", sc.Text())
				}
				switch {
				case string(f.ID) == "7" && f.Result != nil:
					inited = true
				case f.Error != nil && strings.Contains(f.Error.Message, "too long"):
					if tooLong {
						t.Errorf("two too-long answers: the line at the limit was refused")
					}
					tooLong = true
					if f.Error.Code != sdk.CodeParseError || (len(f.ID) != 0 && string(f.ID) != "null") {
						t.Errorf("too-long answer %s: want code %d, id null", sc.Text(), sdk.CodeParseError)
					}
				}
			}
			stdin.Close()
			err = cmd.Wait()
			if !tooLong || !inited {
				t.Errorf("answers %q: want a too-long parse error and the initialize result\nstderr %s", got, stderr.String())
			}
			if err != nil {
				t.Errorf("exit: %v\nstderr %s", err, stderr.String())
			}
		})
	}
}
