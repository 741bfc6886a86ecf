package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/jsonstream"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// TestStreamJSON is issue 17's acceptance 4: `reins run --stream-json` on a
// run with a parent, two in-process children, an ACP child and a background
// job. Every line parses and is placed in the tree; every child's events
// come before the parent's turn/end that waited for it; the ACP child's
// activity is in the stream; the last line is the --json object.
func TestStreamJSON(t *testing.T) {
	nm := testutil.Peers(t)
	sc, err := mock.Parse([]byte(`
replies:
  - match: stream-me
    toolCalls:
      - {name: subagent, arguments: {description: child a, prompt: "CHILD-A go"}}
      - {name: subagent, arguments: {description: child b, prompt: "CHILD-B go"}}
      - {name: subagent, arguments: {description: acp child, agent: acpkid, prompt: "ACP go"}}
      - {name: subagent, arguments: {description: bg child, prompt: "CHILD-BG go", run_in_background: true}}
    usage: {input: 10, output: 5}
    repeat: true
  - {match: CHILD-A, text: a done, usage: {input: 3, output: 1}, repeat: true}
  - {match: CHILD-B, text: b done, usage: {input: 3, output: 1}, repeat: true}
  - {match: CHILD-BG, text: bg done, usage: {input: 3, output: 1}, repeat: true}
  - {match: "finished [status", text: all done, usage: {input: 5, output: 2}, repeat: true}
  - {match: Started background job, text: waiting for the job, usage: {input: 4, output: 2}, repeat: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	url, _, stop := mock.StartTest(sc)
	defer stop()
	home := t.TempDir()
	mark := testutil.MarkChildren(t)
	mk, mv, _ := strings.Cut(mark, "=")
	agent := "---\nname: acpkid\ndescription: an ACP child\nprovider: acp\ncommand: node\nargs: [" +
		filepath.Join(testutil.RepoRoot(t), "internal", "subagent", "acpchild", "testdata", "child.mjs") + "]\nenv:\n" +
		"  ACP_SDK_PATH: " + filepath.Join(nm, "@agentclientprotocol", "sdk", "dist", "v1", "stable", "acp.js") + "\n" +
		"  ACP_SCENARIO: success\n  " + mk + ": " + mv + "\n---\n"
	os.MkdirAll(filepath.Join(home, "agents"), 0o755)
	if err := os.WriteFile(filepath.Join(home, "agents", "acpkid.md"), []byte(agent), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(flag string) ([]byte, string) {
		cmd := reinsCmd(t, home, "run", flag, "--base-url", url, "-m", "openai/m", "stream-me")
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		if code, stderr := exitCode(t, cmd); code != 0 {
			t.Fatalf("reins run %s: exit %d; stderr %s", flag, code, stderr)
		}
		return stdout.Bytes(), ""
	}
	out, _ := run("--stream-json")
	lines := bytes.Split(bytes.TrimRight(out, "\n"), []byte("\n"))
	if len(lines) < 10 {
		t.Fatalf("only %d lines:\n%s", len(lines), out)
	}
	var (
		root       string
		sessions   = map[string]jsonstream.Line{} // the first line of each session
		lastIndex  = map[string]int{}
		rootEnds   []int // line indexes of the root's turn/ends
		acpText    strings.Builder
		types      = map[string]int{}
		background = map[string]bool{}
	)
	for i, l := range lines[:len(lines)-1] {
		var e jsonstream.Line
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatalf("line %d does not parse: %v\n%s", i+1, err, l)
		}
		if e.Type == "" || e.SessionID == "" || e.Data == nil || e.Agent == "" {
			t.Fatalf("line %d lacks a field: %s", i+1, l)
		}
		if e.Type == "stream/dropped" {
			t.Fatalf("lines were dropped: %s", l)
		}
		types[e.Type]++
		if e.Depth == 0 {
			if root == "" {
				root = e.SessionID
			}
			if e.SessionID != root || e.ParentSessionID != "" || e.Agent != "main" {
				t.Fatalf("line %d: a second root: %s", i+1, l)
			}
			if e.Type == session.TypeTurnEnd {
				rootEnds = append(rootEnds, i)
			}
		} else if e.Depth != 1 || e.ParentSessionID != root {
			t.Fatalf("line %d: a child not placed under the root: %s", i+1, l)
		}
		if _, ok := sessions[e.SessionID]; !ok {
			sessions[e.SessionID] = e
		}
		lastIndex[e.SessionID] = i
		if bytes.Contains(l, []byte("CHILD-BG")) && e.Depth == 1 {
			background[e.SessionID] = true
		}
		if e.Agent == "acpkid" && e.Type == session.TypeAssistantChunk {
			var d session.AssistantChunk
			json.Unmarshal(e.Data, &d)
			acpText.WriteString(d.Chunk.Delta)
		}
	}
	if len(sessions) != 5 {
		t.Errorf("%d sessions in the stream, want 5 (parent, 2 in-process, acp, background)", len(sessions))
	}
	if acpText.String() != "Hello, world" {
		t.Errorf("the ACP child's text in the stream: %q", acpText.String())
	}
	if len(rootEnds) == 0 || len(background) != 1 {
		t.Fatalf("root turn/ends at %v, background sessions %v", rootEnds, background)
	}
	for id, first := range sessions {
		if id == root {
			continue
		}
		last := lastIndex[id]
		// Foreground children end within the first turn; the background
		// job before the turn that delivered its notice (the first, when
		// it settled before the parent's next step; else a later one).
		limit := rootEnds[0]
		if background[id] {
			limit = rootEnds[len(rootEnds)-1]
		}
		if last > limit {
			t.Errorf("session %s (agent %s): last event at line %d, after the root's turn/end at line %d", id, first.Agent, last+1, limit+1)
		}
	}
	t.Logf("%d lines, %d sessions, event types %v", len(lines), len(sessions), types)

	// The last line is {"type":"result", ...the --json object} (SPEC §12):
	// the same fields as reins run --json prints for the same run.
	var last streamResult
	var plain runResult
	if err := json.Unmarshal(lines[len(lines)-1], &last); err != nil {
		t.Fatalf("last line is not the --json object: %v", err)
	}
	j, _ := run("--json")
	if err := json.Unmarshal(j, &plain); err != nil {
		t.Fatal(err)
	}
	if last.SessionID != root || last.StopReason != "completed" || last.Output != "all done" {
		t.Errorf("last line %+v", last)
	}
	// The same object: nothing more or less than --json's fields, encoded
	// alike; the usage depends on whether the job settled before the
	// parent's next step, so only its shape is compared.
	again, _ := jsonstream.Encode(last)
	if !bytes.Equal(again, append(lines[len(lines)-1], '\n')) {
		t.Errorf("the last line is not exactly a --json object:\n%s\n%s", lines[len(lines)-1], again)
	}
	if last.Type != "result" || !bytes.HasPrefix(lines[len(lines)-1], []byte(`{"type":"result",`)) {
		t.Errorf("the last line has no type result: %s", lines[len(lines)-1])
	}
	if last.StopReason != plain.StopReason || last.Output != plain.Output || (last.Error == nil) != (plain.Error == nil) {
		t.Errorf("the last line %+v differs from --json's %+v", last, plain)
	}
}
