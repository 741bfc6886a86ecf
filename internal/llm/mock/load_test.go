package mock

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseYAMLAndJSONAgree(t *testing.T) {
	yamlSrc := `
replies:
  - match: weather
    text: sunny
    delay: 150ms
    chunkDelay: 20
    chunk: 3
    toolCalls:
      - id: c1
        name: read
        arguments:
          path: a.go
          lines: [1, 2]
          opts: {z: true, a: null}
      - name: bad
        arguments: '{"path":'
      - name: none
  - fault: stall
    keepAlive: true
    usage: {input: 10, output: 2, cacheRead: 1}
fallback:
  status: 429
  headers: {Retry-After: "2"}
  echo: true
`
	jsonSrc := `{
  "replies": [
    {"match": "weather", "text": "sunny", "delay": "150ms", "chunkDelay": 20, "chunk": 3,
     "toolCalls": [
       {"id": "c1", "name": "read", "arguments": {"path": "a.go", "lines": [1, 2], "opts": {"z": true, "a": null}}},
       {"name": "bad", "arguments": "{\"path\":"},
       {"name": "none"}
     ]},
    {"fault": "stall", "keepAlive": true, "usage": {"input": 10, "output": 2, "cacheRead": 1}}
  ],
  "fallback": {"status": 429, "headers": {"Retry-After": "2"}, "echo": true}
}`
	want := &Script{
		Replies: []Reply{
			{Match: "weather", Text: "sunny", Delay: Duration(150 * time.Millisecond), ChunkDelay: Duration(20 * time.Millisecond), Chunk: 3,
				ToolCalls: []ToolCall{
					{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"a.go","lines":[1,2],"opts":{"z":true,"a":null}}`)},
					{Name: "bad", Arguments: json.RawMessage(`"{\"path\":"`)},
					{Name: "none"},
				}},
			{Fault: FaultStall, KeepAlive: true, Usage: &Usage{Input: 10, Output: 2, CacheRead: 1}},
		},
		Fallback: &Reply{Status: 429, Headers: map[string]string{"Retry-After": "2"}, Echo: true},
	}
	for name, src := range map[string]string{"yaml": yamlSrc, "json": jsonSrc} {
		t.Run(name, func(t *testing.T) {
			got, err := Parse([]byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("script (-want +got):\n%s", d)
			}
			wantArgs := []string{`{"path":"a.go","lines":[1,2],"opts":{"z":true,"a":null}}`, `{"path":`, `{}`}
			for i, c := range got.Replies[0].ToolCalls {
				if c.ArgumentsText() != wantArgs[i] {
					t.Errorf("call %d ArgumentsText %q, want %q", i, c.ArgumentsText(), wantArgs[i])
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"unknown top-level key yaml", "replies: []\nreplys: []\n", `"replys"`},
		{"unknown reply key yaml", "replies:\n  - text: a\n    txet: b\n", `"txet"`},
		{"unknown tool call key yaml", "replies:\n  - toolCalls:\n      - name: f\n        args: {}\n", `"args"`},
		{"unknown key json", `{"replies": [{"text": "a", "chunksize": 2}]}`, `"chunksize"`},
		{"unknown fault", "replies:\n  - fault: explode\n", `"explode"`},
		{"bad duration", "replies:\n  - delay: soon\n", `"soon"`},
		{"bad duration json", `{"replies": [{"delay": "soon"}]}`, `"soon"`},
		{"fault with status", "replies:\n  - fault: cut\n    status: 500\n", "fault excludes status"},
		{"bad status", "fallback:\n  status: 1000\n", "fallback: status 1000"},
		{"negative chunk", "replies:\n  - text: a\n  - chunk: -1\n", "replies[1]: chunk"},
		{"tool call without name", `{"replies": [{"toolCalls": [{"arguments": {}}]}]}`, "toolCalls[0]: name is required"},
		{"not a script", "- just\n- a list\n", "mock script"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestDurationForms(t *testing.T) {
	tests := []struct {
		src  string
		want time.Duration
	}{
		{"delay: 2s", 2 * time.Second},
		{"delay: 150", 150 * time.Millisecond},
		{`delay: "150"`, 150 * time.Millisecond},
		{"delay: 1.5", 1500 * time.Microsecond},
		{"delay: 1m30s", 90 * time.Second},
	}
	for _, tt := range tests {
		s, err := Parse([]byte("replies:\n  - " + tt.src + "\n"))
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		if got := time.Duration(s.Replies[0].Delay); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.src, got, tt.want)
		}
	}
	b, _ := json.Marshal(Reply{Delay: Duration(150 * time.Millisecond)})
	if !strings.Contains(string(b), `"delay":"150ms"`) {
		t.Errorf("marshal: %s", b)
	}
	var r Reply
	if err := json.Unmarshal(b, &r); err != nil || r.Delay != Duration(150*time.Millisecond) {
		t.Errorf("round trip: %v %v", r.Delay, err)
	}
}

func TestYAMLArgumentsBlockString(t *testing.T) {
	s, err := Parse([]byte("replies:\n  - toolCalls:\n      - name: f\n        arguments: |\n          {\"a\":\n           1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Replies[0].ToolCalls[0].ArgumentsText(); got != "{\"a\":\n 1}\n" {
		t.Errorf("block string arguments %q", got)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(p, []byte("replies:\n  - text: hi\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load(p)
	if err != nil || len(s.Replies) != 1 || s.Replies[0].Text != "hi" {
		t.Fatalf("Load: %+v, %v", s, err)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("missing file: no error")
	}
	bad := filepath.Join(dir, "bad.yaml")
	_ = os.WriteFile(bad, []byte("replies:\n  - wat: 1\n"), 0o600)
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), `"wat"`) {
		t.Errorf("bad file error %v: want the path and the key", err)
	}
}
