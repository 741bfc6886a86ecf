package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm/mock"
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
	c := startClient(t, Options{Base: base, Model: "mock/test", Version: "test"})
	send := c.send
	send(1, "initialize", map[string]any{"protocolVersion": 1})
	r := send(2, "session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
	sid, _ := r["sessionId"].(string)
	send(3, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "/review main.go"}}})
	c.close()
	notes := c.notes
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

// client is an editor talking to Serve over pipes.
type client struct {
	t     *testing.T
	inW   *io.PipeWriter
	outR  *io.PipeReader
	lines *bufio.Scanner
	// notes are the session/update notifications seen.
	notes  []string
	served chan error
}

func startClient(t *testing.T, opts Options) *client {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, inW: inW, outR: outR, served: make(chan error, 1)}
	go func() {
		c.served <- Serve(context.Background(), opts, inR, outW)
		outW.Close()
	}()
	c.lines = bufio.NewScanner(outR)
	c.lines.Buffer(make([]byte, 1<<20), 1<<20)
	return c
}

// send calls method and returns its result, keeping the notifications
// that come before it.
func (c *client) send(id int, method string, params any) map[string]any {
	t := c.t
	t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := c.inW.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
	for c.lines.Scan() {
		var f map[string]any
		if json.Unmarshal(c.lines.Bytes(), &f) != nil {
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
			c.notes = append(c.notes, c.lines.Text())
		}
	}
	t.Fatalf("%s: no answer", method)
	return nil
}

// close ends the editor's side and waits for Serve to return.
func (c *client) close() {
	c.inW.Close()
	go io.Copy(io.Discard, c.outR)
	select {
	case <-c.served:
	case <-time.After(time.Minute):
		c.t.Fatal("Serve did not return after stdin closed")
	}
}

// A custom command's model: front matter runs that one prompt on its
// model; the next prompt is on the session's model again.
func TestCommandModelForOneTurn(t *testing.T) {
	sc, err := mock.Parse([]byte("replies:\n  - {text: answered, repeat: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	url, srv, stop := mock.StartTest(sc)
	defer stop()
	home := t.TempDir()
	p := filepath.Join(home, "commands", "review.md")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte("---\ndescription: Review\nmodel: openai/small-reviewer\n---\nReview $1"), 0o644); err != nil {
		t.Fatal(err)
	}
	base, err := harness.New(harness.Options{Home: home, Cwd: t.TempDir(), Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	c := startClient(t, Options{Base: base, Model: "openai/big", BaseURL: url, Version: "test"})
	c.send(1, "initialize", map[string]any{"protocolVersion": 1})
	r := c.send(2, "session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
	sid, _ := r["sessionId"].(string)
	for i, text := range []string{"plain before", "/review main.go", "plain after"} {
		if r := c.send(3+i, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}}); r["stopReason"] != "end_turn" {
			t.Fatalf("%q: %v", text, r)
		}
	}
	c.close()
	var models []string
	for _, req := range srv.Requests() {
		var body struct{ Model string }
		json.Unmarshal(req.Body, &body)
		models = append(models, body.Model)
	}
	if want := []string{"big", "small-reviewer", "big"}; !slices.Equal(models, want) {
		t.Errorf("the requests' models %q, want %q", models, want)
	}
}
