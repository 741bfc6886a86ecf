package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/engine/wire"
)

// A reins of another protocol version is refused: the helper says hello
// with its own version, then exits 1 with one line naming both, before
// any run is read.
func TestClientRefusesAnotherVersion(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"older", `{"op":"hello","version":1}` + "\n", "reins speaks protocol version 1, reins-temporal speaks version 2"},
		{"none", `{"op":"start","id":1,"task":{}}` + "\n", "reins speaks no protocol version (an older build); reins-temporal speaks version 2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main([]string{"client", "--address", "127.0.0.1:1", "--namespace", "default", "--task-queue", "q"},
				strings.NewReader(tt.in+`{"op":"start","id":2,"task":{}}`+"\n"), &out, &errb)
			if code != exitFailed {
				t.Errorf("exit %d, want %d", code, exitFailed)
			}
			lines := strings.Split(strings.TrimRight(errb.String(), "\n"), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Errorf("stderr %q, want one line naming %q", errb.String(), tt.want)
			}
			var hello wire.Msg
			if err := json.Unmarshal(bytes.SplitN(out.Bytes(), []byte("\n"), 2)[0], &hello); err != nil || hello.Op != wire.OpHello || hello.Version != wire.ProtocolVersion {
				t.Errorf("stdout %q, want the hello first", out.String())
			}
			if bytes.Count(out.Bytes(), []byte("\n")) != 1 {
				t.Errorf("stdout %q: a refused reins gets nothing but the hello", out.String())
			}
		})
	}
}
