package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/harness"
)

// A session's custom commands and skills reach the editor in
// available_commands_update, with a command's argument hint, and a prompt
// "/NAME ARGS" runs the command.
func TestAvailableCommands(t *testing.T) {
	home := t.TempDir()
	for name, body := range map[string]string{
		"commands/review.md":   "---\ndescription: Review a file\nargument-hint: FILE\n---\nPlease REVIEW $1 now",
		"skills/tidy/SKILL.md": "---\nname: tidy\ndescription: Tidy imports.\n---\nTIDY-BODY",
	} {
		p := filepath.Join(home, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base, err := harness.New(harness.Options{Home: home, Cwd: t.TempDir(), Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- Serve(context.Background(), Options{Base: base, Model: "mock/test", Version: "test"}, inR, outW)
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	var notes []string
	send := func(id int, method string, params any) map[string]any {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := inW.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
		for lines.Scan() {
			var f map[string]any
			if json.Unmarshal(lines.Bytes(), &f) != nil {
				continue
			}
			if v, ok := f["id"].(float64); ok && int(v) == id {
				if f["error"] != nil {
					t.Fatalf("%s: %v", method, f["error"])
				}
				r, _ := f["result"].(map[string]any)
				return r
			}
			if f["method"] == "session/update" {
				notes = append(notes, lines.Text())
			}
		}
		t.Fatalf("%s: no answer", method)
		return nil
	}
	send(1, "initialize", map[string]any{"protocolVersion": 1})
	r := send(2, "session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
	sid, _ := r["sessionId"].(string)
	send(3, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "/review main.go"}}})
	inW.Close()
	go io.Copy(io.Discard, outR)
	select {
	case <-served:
	case <-time.After(time.Minute):
		t.Fatal("Serve did not return after stdin closed")
	}
	all := strings.Join(notes, "\n")
	var avail struct {
		Params struct {
			Update struct {
				SessionUpdate     string `json:"sessionUpdate"`
				AvailableCommands []struct {
					Name, Description string
					Input             *struct{ Hint string }
				} `json:"availableCommands"`
			} `json:"update"`
		}
	}
	for _, n := range notes {
		if strings.Contains(n, "available_commands_update") {
			json.Unmarshal([]byte(n), &avail)
		}
	}
	cmds := avail.Params.Update.AvailableCommands
	if len(cmds) != 2 || cmds[0].Name != "review" || cmds[0].Input == nil || cmds[0].Input.Hint != "FILE" || cmds[1].Name != "tidy" {
		t.Fatalf("available_commands_update %+v in\n%s", avail, all)
	}
	if !strings.Contains(all, "Please REVIEW main.go now") {
		t.Errorf("the prompt was not the command's expansion:\n%s", all)
	}
}
