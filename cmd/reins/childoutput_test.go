package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSubagentOutputAfterResume: a child's 88 KB output, cut in the
// parent's tool result, can still be paged with subagent_output after the
// parent is resumed in a new reins process: the output is rebuilt from the
// log, not reported as 0 bytes.
func TestSubagentOutputAfterResume(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	var big strings.Builder
	for i := 0; big.Len() < 88<<10; i++ {
		fmt.Fprintf(&big, "line %05d of the child's long answer\n", i)
	}
	script := filepath.Join(dir, "s.json")
	write := func(v any) {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(script, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(map[string]any{
		"replies": []any{
			map[string]any{"match": "zqdelegatezq", "toolCalls": []any{map[string]any{"name": "subagent", "arguments": map[string]any{"description": "long work", "prompt": "zqchildzq"}}}},
			map[string]any{"match": "zqchildzq", "text": big.String()},
		},
		"fallback": map[string]any{"text": "done"},
	})
	run := func(args ...string) {
		t.Helper()
		cmd := reinsCmd(t, home, append([]string{"run", "-m", "mock/m", "--cwd", dir}, args...)...)
		cmd.Env = append(cmd.Env, "REINS_MOCK_SCRIPT="+script)
		if code, stderr := exitCode(t, cmd); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	run("zqdelegatezq")
	logs, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "session.jsonl"))
	var parent, childID string
	for _, p := range logs {
		b, _ := os.ReadFile(p)
		if m := regexp.MustCompile(`subagent_output \{\\"child\\":\\"(child-[0-9a-f]{8})\\"`).FindSubmatch(b); m != nil {
			parent, childID = filepath.Base(filepath.Dir(p)), string(m[1])
		}
	}
	if childID == "" {
		t.Fatalf("no cut child result in %v", logs)
	}
	write(map[string]any{
		"replies": []any{
			map[string]any{"match": "zqreadmorezq", "toolCalls": []any{map[string]any{"name": "subagent_output", "arguments": map[string]any{"child": childID, "offset": 32768}}}},
		},
		"fallback": map[string]any{"text": "done"},
	})
	run("--resume", parent, "zqreadmorezq")
	f, err := os.Open(filepath.Join(home, "sessions", parent, "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var last struct {
		Type string `json:"type"`
		Data struct {
			Content string `json:"content"`
			IsError bool   `json:"isError"`
		} `json:"data"`
	}
	var got string
	var isErr bool
	for sc.Scan() {
		if json.Unmarshal(sc.Bytes(), &last) == nil && last.Type == "tool/result" {
			got, isErr = last.Data.Content, last.Data.IsError
		}
	}
	want := big.String()[32768 : 32768+64]
	if isErr || !strings.HasPrefix(got, want) {
		t.Fatalf("subagent_output after --resume: isError %v, content %.300q; want it to start with %q", isErr, got, want)
	}
}
