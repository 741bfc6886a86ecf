package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"testing"
)

// TestNotJSONLineAnswered: `reins acp` (like `reins sdk`) answers a line
// that is not JSON with the JSON-RPC parse error -32700 (id null) and
// keeps serving: the next request is answered too.
func TestNotJSONLineAnswered(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		init string
	}{
		{"acp", []string{"acp", "-m", "mock/echo"}, `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`},
		{"sdk", []string{"sdk", "-m", "mock/echo"}, `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := acpCmd(t, t.TempDir(), t.TempDir(), tc.args...)
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() {
				io.WriteString(stdin, "this is not json\n")
				io.WriteString(stdin, tc.init+"\n")
			}()
			sc := bufio.NewScanner(stdout)
			var parseErr, inited bool
			for !inited && sc.Scan() {
				var f struct {
					ID     json.RawMessage `json:"id"`
					Result json.RawMessage `json:"result"`
					Error  *struct {
						Code int `json:"code"`
					} `json:"error"`
				}
				if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
					t.Fatalf("stdout line is not JSON: %q", sc.Text())
				}
				switch {
				case string(f.ID) == "7" && f.Result != nil:
					inited = true
				case f.Error != nil && f.Error.Code == -32700 && string(f.ID) == "null":
					parseErr = true
				}
			}
			stdin.Close()
			if code := waitExit(t, cmd); code != 0 || !parseErr || !inited {
				t.Errorf("exit %d, parse error answered %v, initialize answered %v; stderr %s", code, parseErr, inited, stderr.String())
			}
		})
	}
}
