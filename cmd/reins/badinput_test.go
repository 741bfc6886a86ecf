package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tool"
)

// TestOversizedToolArguments has the model stream tool calls with 5 MiB
// of arguments: a write of 5 MiB of content (it works: the file holds
// every byte), a read of that one-line file (its result stays within the
// output cap), and a write whose 5 MiB of arguments are cut mid-JSON (an
// error result, short). Every result stays within the cap, the run
// completes, and the log, holding those lines, loads clean.
func TestOversizedToolArguments(t *testing.T) {
	content := strings.Repeat("0123456789abcdef", (5<<20)/16) // 5 MiB, one line
	whole, err := json.Marshal(map[string]string{"path": "big.txt", "content": content})
	if err != nil {
		t.Fatal(err)
	}
	cut, err := json.Marshal(string(whole[:len(whole)-100])) // a JSON string: sent verbatim
	if err != nil {
		t.Fatal(err)
	}
	sc := &mock.Script{Replies: []mock.Reply{
		{Chunk: 1 << 20, ToolCalls: []mock.ToolCall{
			{ID: "w1", Name: "write", Arguments: whole},
			{ID: "r1", Name: "read", Arguments: json.RawMessage(`{"path":"big.txt"}`)},
			{ID: "w2", Name: "write", Arguments: cut},
		}},
		{Text: "handled the big arguments"},
	}}
	url, srv, stop := mock.StartTest(sc)
	defer stop()
	home := t.TempDir()
	cmd := reinsCmd(t, home, "run", "--json", "--base-url", url, "-m", "openai/m", "write a big file")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if code, stderr := exitCode(t, cmd); code != 0 {
		t.Fatalf("exit %d: %s\n%.2000s", code, stderr, stdout.Bytes())
	}
	if !bytes.Contains(stdout.Bytes(), []byte(`"output":"handled the big arguments"`)) {
		t.Errorf("stdout %.2000s", stdout.Bytes())
	}
	if n := srv.Count(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}

	got, err := os.ReadFile(filepath.Join(cmd.Dir, "big.txt"))
	if err != nil || string(got) != content {
		t.Fatalf("big.txt: %d bytes (err %v), want the %d bytes streamed", len(got), err, len(content))
	}

	m, _ := filepath.Glob(filepath.Join(home, "sessions", "*", session.FileName))
	if len(m) != 1 {
		t.Fatalf("sessions %v", m)
	}
	ld, err := session.Load(m[0])
	if err != nil {
		t.Fatal(err)
	}
	if ld.Repair.Repaired() {
		t.Errorf("log needed repair: %+v", ld.Repair)
	}
	results := map[string]session.ToolResult{}
	for _, e := range ld.Events {
		if e.Type == session.TypeToolResult {
			var r session.ToolResult
			if err := e.Decode(&r); err != nil {
				t.Fatal(err)
			}
			results[r.CallID] = r
		}
	}
	limit := tool.DefaultOutputCap + len("\n[output truncated: showing 51200 of 99999999 bytes]")
	for _, id := range []string{"w1", "r1", "w2"} {
		r, ok := results[id]
		switch {
		case !ok:
			t.Errorf("no result for %s", id)
		case len(r.Content) > limit:
			t.Errorf("%s result of %d bytes exceeds the output cap", id, len(r.Content))
		}
	}
	if r := results["w1"]; r.IsError || !strings.Contains(r.Content, "wrote 5242880 bytes") {
		t.Errorf("write result %+v", r)
	}
	if r := results["r1"]; r.IsError || !strings.Contains(r.Content, "line truncated") {
		t.Errorf("read result: error %v, %.200q", r.IsError, r.Content)
	}
	if r := results["w2"]; !r.IsError || !strings.Contains(r.Content, "invalid arguments") {
		t.Errorf("cut write result %+v, want invalid arguments", r)
	}
}

// TestConfigDevZeroExits2: --config /dev/zero is a configuration error
// naming the file (exit 2), not a process reading zeros until memory runs
// out.
func TestConfigDevZeroExits2(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Fatal("this test needs /dev/zero (Linux)")
	}
	cmd := reinsCmd(t, t.TempDir(), "run", "--config", "/dev/zero", "-m", "openai/m", "hi")
	code, stderr := exitCode(t, cmd)
	if code != 2 || !strings.Contains(stderr, "/dev/zero") || !strings.Contains(stderr, "not a regular file") {
		t.Errorf("exit %d, stderr %q; want 2 naming /dev/zero", code, stderr)
	}
}
