package harness

import (
	"encoding/json"

	"github.com/reinsdev/reins/internal/llm/mock"
)

// DemoPrompt is the task `reins demo` gives the agent.
const DemoPrompt = "Read notes.txt and tell me what reins promises."

// DemoFiles are the files of the demo's throwaway workspace.
var DemoFiles = map[string]string{
	"notes.txt": "reins promises three things:\n" +
		"1. a subagent always comes back with an honest answer;\n" +
		"2. an empty or cut model response is a failure, never a success;\n" +
		"3. no child process is left behind.\n",
}

// DemoScript is the scripted model of `reins demo` (and of the mock/demo
// model). Its first answer is an empty completion — the provider defect of
// SPEC §5 — which the retry executor retries; then the model reads a file
// with a tool and answers.
func DemoScript() *mock.Script {
	return &mock.Script{Replies: []mock.Reply{
		{Fault: mock.FaultEmpty, Usage: &mock.Usage{Input: 120, Output: 0}},
		{
			Reasoning: "The user wants the promises listed in notes.txt. I will read it first.",
			ToolCalls: []mock.ToolCall{{Name: "read", Arguments: json.RawMessage(`{"path":"notes.txt"}`)}},
			Usage:     &mock.Usage{Input: 130, Output: 24},
		},
		{
			Match: "honest answer",
			Text: "notes.txt lists three promises: subagents always return an honest answer, " +
				"empty or cut model responses count as failures rather than successes, " +
				"and no child process is ever left running.",
			Usage: &mock.Usage{Input: 210, Output: 38, CacheRead: 128},
		},
	}}
}
