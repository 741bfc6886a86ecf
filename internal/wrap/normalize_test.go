package wrap

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinsdev/reins/internal/llm"
)

func TestNormalizeStopReason(t *testing.T) {
	tests := []struct {
		in, canonical, raw string
		terminal           bool
	}{
		{"stop", StopStop, "stop", true},
		{"STOP", StopStop, "STOP", true},
		{"end_turn", StopStop, "end_turn", true},
		{"End_Turn", StopStop, "End_Turn", true},
		{"endturn", StopStop, "endturn", true},
		{"endTurn", StopStop, "endTurn", true},
		{"  stop\n", StopStop, "stop", true},
		{"length", StopLength, "length", true},
		{"LENGTH", StopLength, "LENGTH", true},
		{"max_tokens", StopLength, "max_tokens", true},
		{"Max_Tokens", StopLength, "Max_Tokens", true},
		{"toolUse", StopToolUse, "toolUse", false},
		{"tooluse", StopToolUse, "tooluse", false},
		{"TOOLUSE", StopToolUse, "TOOLUSE", false},
		{"tool_use", StopToolUse, "tool_use", false},
		{"\ttool_use ", StopToolUse, "tool_use", false},
		{"aborted", StopAborted, "aborted", true},
		{"Aborted", StopAborted, "Aborted", true},
		{"error", StopError, "error", true},
		{" ERROR ", StopError, "ERROR", true},
		// Unknown spellings keep their raw value and never end a run.
		{"custom_reason", "", "custom_reason", false},
		{"tool-use", "", "tool-use", false},
		{"stop_sequence", "", "stop_sequence", false},
		{"end turn", "", "end turn", false},
		{"tool_calls", "", "tool_calls", false},
		{"  weird  ", "", "weird", false},
		{"", "", "", false},
		{"   ", "", "", false},
	}
	for _, tt := range tests {
		c, raw := NormalizeStopReason(tt.in)
		if c != tt.canonical || raw != tt.raw {
			t.Errorf("NormalizeStopReason(%q) = (%q, %q), want (%q, %q)", tt.in, c, raw, tt.canonical, tt.raw)
		}
		if got := IsTerminal(c); got != tt.terminal {
			t.Errorf("IsTerminal(%q) (from %q) = %v, want %v", c, tt.in, got, tt.terminal)
		}
	}
}

func TestNormalizeEvent(t *testing.T) {
	tests := []struct {
		name string
		line string
		ok   bool
		// want is the events.jsonl line; ignored when !ok.
		want    string
		content []llm.Block
	}{
		{
			name: "tool start",
			line: `{"type":"tool_execution_start","toolCallId":"c1","toolName":"read","args":{"path":"src/app.ts","offset":1,"limit":20}}`,
			ok:   true,
			want: `{"type":"tool_call","toolName":"read","args":{"path":"src/app.ts","offset":1,"limit":20}}`,
		},
		{
			name: "tool start without args",
			line: `{"type":"tool_execution_start","toolName":"ls"}`,
			ok:   true,
			want: `{"type":"tool_call","toolName":"ls","args":{}}`,
		},
		{
			name: "tool end error",
			line: `{"type":"tool_execution_end","toolCallId":"c1","toolName":"bash","result":{"content":[]},"isError":true}`,
			ok:   true,
			want: `{"type":"tool_result","toolName":"bash","isError":true}`,
		},
		{
			name: "tool end ok",
			line: `{"type":"tool_execution_end","toolName":"read","result":{},"isError":false}`,
			ok:   true,
			want: `{"type":"tool_result","toolName":"read","isError":false}`,
		},
		{
			name: "assistant end_turn is stop with raw kept",
			line: `{"type":"message_end","message":{"role":"assistant","model":"anthropic/claude-sonnet-4-5","stopReason":"end_turn",` +
				`"content":[{"type":"text","text":"Final answer"}],"usage":{"input":10,"output":5,"totalTokens":15,"cost":{"total":0.001}}}}`,
			ok: true,
			want: `{"type":"assistant_text","text":"Final answer","model":"anthropic/claude-sonnet-4-5","stopReason":"stop",` +
				`"rawStopReason":"end_turn","usage":{"input":10,"output":5,"totalTokens":15,"cost":{"total":0.001}}}`,
			content: []llm.Block{{Type: llm.BlockText, Text: "Final answer"}},
		},
		{
			name: "assistant tool use with text, thinking and a tool call",
			line: `{"type":"message_end","message":{"role":"assistant","model":"m","stopReason":"toolUse","content":[` +
				`{"type":"thinking","thinking":"hmm"},{"type":"text","text":" first "},{"type":"text","text":"second\n"},` +
				`{"type":"toolCall","id":"call_1","name":"read","arguments":{"path":"a"}}]}}`,
			ok:   true,
			want: `{"type":"assistant_text","text":"first \nsecond","model":"m","stopReason":"toolUse","rawStopReason":"toolUse"}`,
			content: []llm.Block{
				{Type: llm.BlockReasoning, Text: "hmm"},
				{Type: llm.BlockText, Text: " first "},
				{Type: llm.BlockText, Text: "second\n"},
				{Type: llm.BlockToolCall, ID: "call_1", Name: "read", Arguments: `{"path":"a"}`},
			},
		},
		{
			name: "assistant unknown stop reason kept raw",
			line: `{"type":"message_end","message":{"role":"assistant","stopReason":" Custom_Reason ","content":[]}}`,
			ok:   true,
			want: `{"type":"assistant_text","text":"","rawStopReason":"Custom_Reason"}`,
		},
		{
			name: "assistant stop reason that is not a string",
			line: `{"type":"message_end","message":{"role":"assistant","stopReason":7,"content":"plain text"}}`,
			ok:   true,
			want: `{"type":"assistant_text","text":"plain text"}`,
			content: []llm.Block{
				{Type: llm.BlockText, Text: "plain text"},
			},
		},
		{
			name: "user message end is not recorded",
			line: `{"type":"message_end","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}`,
		},
		{
			name: "tool result message end is not recorded",
			line: `{"type":"message_end","message":{"role":"toolResult","toolName":"read","content":[]}}`,
		},
		{name: "session header", line: `{"type":"session","version":3,"id":"x","cwd":"/"}`},
		{name: "agent end", line: `{"type":"agent_end","messages":[]}`},
		{name: "auto retry", line: `{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"500"}`},
		{name: "unknown type", line: `{"type":"something_new","stopReason":"stop"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, ok, err := NormalizeEvent([]byte(tt.line))
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v (event %+v)", ok, tt.ok, ev)
			}
			if !ok {
				return
			}
			got, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(canon(t, tt.want), canon(t, string(got))); d != "" {
				t.Errorf("events.jsonl line (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.content, ev.Content); d != "" {
				t.Errorf("content (-want +got):\n%s", d)
			}
		})
	}
}

func TestNormalizeEventRejectsNonJSON(t *testing.T) {
	for _, line := range []string{"hello", "[1,2]", `{"type":`, "Warning: something\n", `"stop"`} {
		if _, _, err := NormalizeEvent([]byte(line)); !errors.Is(err, ErrNotJSON) {
			t.Errorf("NormalizeEvent(%q) error = %v, want ErrNotJSON", line, err)
		}
	}
}

func TestParseLineRetrySignals(t *testing.T) {
	tests := []struct {
		line string
		want retry
	}{
		{`{"type":"auto_retry_start","attempt":1}`, retryPending},
		{`{"type":"agent_end","messages":[],"willRetry":true}`, retryPending},
		{`{"type":"agent_end","messages":[],"willRetry":false}`, retryUnchanged},
		{`{"type":"agent_end","messages":[]}`, retryUnchanged},
		{`{"type":"auto_retry_end","success":false,"attempt":3}`, retryResolved},
		{`{"type":"turn_end","message":{"role":"assistant","stopReason":"error"}}`, retryUnchanged},
	}
	for _, tt := range tests {
		p, err := parseLine([]byte(tt.line))
		if err != nil {
			t.Fatal(err)
		}
		if p.retry != tt.want {
			t.Errorf("%s: retry = %v, want %v", tt.line, p.retry, tt.want)
		}
	}
	p, _ := parseLine([]byte(`{"type":"message_update","message":{"role":"assistant"},"assistantMessageEvent":{"type":"text_delta","delta":"Hel"}}`))
	if p.delta != "Hel" {
		t.Errorf("text_delta: delta = %q, want Hel", p.delta)
	}
	p, _ = parseLine([]byte(`{"type":"message_update","message":{"role":"assistant"},"assistantMessageEvent":{"type":"thinking_delta","delta":"x"}}`))
	if p.delta != "" {
		t.Errorf("thinking_delta counted as text: %q", p.delta)
	}
}

func canon(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

func TestCommandLine(t *testing.T) {
	dir := t.TempDir()
	sp := dir + "/system-prompt.md"
	if err := writeFile(sp, "be brief"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		meta      Meta
		args      []string
		stdinText string
	}{
		{
			name: "everything",
			meta: Meta{Task: "inspect auth", ResolvedModel: "openai/gpt-5", RequestedModel: "gpt", Tools: []string{"read", "find"},
				SystemPromptPath: sp, Args: []string{"--thinking", "low"}},
			args: []string{"--mode", "json", "-p", "--no-session", "--model", "openai/gpt-5", "--tools", "read,find",
				"--append-system-prompt", sp, "--thinking", "low", "inspect auth"},
		},
		{
			name: "defaults",
			meta: Meta{Task: "do it"},
			args: []string{"--mode", "json", "-p", "--no-session", "do it"},
		},
		{
			name: "requested model, no tools, missing prompt file",
			meta: Meta{Task: "x", RequestedModel: "sonnet", Tools: []string{}, SystemPromptPath: dir + "/absent.md"},
			args: []string{"--mode", "json", "-p", "--no-session", "--model", "sonnet", "--no-tools", "x"},
		},
		{
			name:      "task that looks like a flag goes to stdin",
			meta:      Meta{Task: "--help me"},
			args:      []string{"--mode", "json", "-p", "--no-session"},
			stdinText: "--help me",
		},
		{
			name:      "task that looks like a file goes to stdin",
			meta:      Meta{Task: "@secrets.txt summarize"},
			args:      []string{"--mode", "json", "-p", "--no-session"},
			stdinText: "@secrets.txt summarize",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, stdin := tt.meta.CommandLine()
			if d := cmp.Diff(tt.args, args); d != "" {
				t.Errorf("args (-want +got):\n%s", d)
			}
			if stdin != tt.stdinText {
				t.Errorf("stdin = %q, want %q", stdin, tt.stdinText)
			}
		})
	}
	big := make([]byte, maxArgTask+1)
	for i := range big {
		big[i] = 'a'
	}
	if args, stdin := (Meta{Task: string(big)}).CommandLine(); len(args) != 4 || stdin != string(big) {
		t.Errorf("a task over the argument limit: %d args, %d stdin bytes", len(args), len(stdin))
	}
}
