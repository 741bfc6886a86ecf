package harness

import (
	"encoding/json"

	"github.com/reinsdev/reins/internal/llm/mock"
)

// DemoPrompt is the task `reins demo` gives the agent.
const DemoPrompt = "Read notes.txt, have a subagent summarize details.txt, and check the workspace in the background."

// DemoFiles are the files of the demo's throwaway workspace (a function:
// a map variable would be built at every reins start, internal/lazy).
func DemoFiles() map[string]string {
	return map[string]string{
		"notes.txt": "reins promises three things:\n" +
			"1. a subagent always comes back with an honest answer;\n" +
			"2. an empty or cut model response is a failure, never a success;\n" +
			"3. no child process is left behind.\n",
		"details.txt": "DETAILS: the output-selection rule picks the last non-empty assistant message,\n" +
			"else the streamed text; the stop reason is kept apart from the output.\n",
	}
}

// DemoScript is the scripted model of `reins demo` (and of the mock/demo
// model). In order:
//   - the parent's first answer is an empty completion — the provider defect
//     of docs/providers.md — which the retry executor retries;
//   - the parent then reads a file, delegates a summary to a subagent and
//     starts a background job, all in one message;
//   - the subagent writes a partial answer, reads a file, and is cut off by
//     max-tokens in a tool-only step: its partial answer still reaches the
//     parent, with the real stop reason;
//   - the parent continues that child by the id its result named
//     (continue: child-…); the child, its conversation intact, finishes;
//   - the background job finishes; its notice wakes the parent, which reads
//     the job's output and answers.
func DemoScript() *mock.Script {
	args := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	return &mock.Script{Replies: []mock.Reply{
		{Match: "Read notes.txt", Fault: mock.FaultEmpty, Usage: &mock.Usage{Input: 120}},
		{
			Match:     "Read notes.txt",
			Reasoning: "I will read notes.txt myself, delegate details.txt, and survey the workspace in the background.",
			ToolCalls: []mock.ToolCall{
				{ID: "call_read", Name: "read", Arguments: args(map[string]any{"path": "notes.txt"})},
				{ID: "call_survey", Name: "subagent", Arguments: args(map[string]any{
					"description": "survey the workspace", "prompt": "DEMO-BACKGROUND: list the files of the workspace.",
					"run_in_background": true})},
				// Last, so its result's child: line is the one mock.ChildRef names.
				{ID: "call_summary", Name: "subagent", Arguments: args(map[string]any{
					"description": "summarize details.txt", "prompt": "DEMO-CHILD: summarize details.txt in one sentence."})},
			},
			Usage: &mock.Usage{Input: 130, Output: 60},
		},
		// The delegated child: a partial answer plus a read, then a
		// tool-only step cut by max-tokens.
		{
			Match:     "DEMO-CHILD",
			Text:      "Partial summary: output selection prefers the last non-empty message",
			ToolCalls: []mock.ToolCall{{ID: "call_child_read", Name: "read", Arguments: args(map[string]any{"path": "details.txt"})}},
			Usage:     &mock.Usage{Input: 90, Output: 20},
		},
		{
			Match:     "DETAILS:",
			ToolCalls: []mock.ToolCall{{ID: "call_child_cut", Name: "grep", Arguments: args(map[string]any{"pattern": "stop reas"})}},
			Finish:    "length",
			Usage:     &mock.Usage{Input: 140, Output: 256},
		},
		// The background job.
		{
			Match: "DEMO-BACKGROUND", Delay: mock.Duration(400e6),
			Text:  "The workspace holds details.txt and notes.txt.",
			Usage: &mock.Usage{Input: 80, Output: 12},
		},
		// The parent continues the cut child by the id its result named:
		// the child answers with its whole earlier conversation.
		{
			Match: "token limit",
			ToolCalls: []mock.ToolCall{{ID: "call_continue", Name: "subagent", Arguments: args(map[string]any{
				"description": "finish the summary", "continue": mock.ChildRef,
				"prompt": "DEMO-CONTINUE: you were cut off; finish your summary in one sentence."})}},
			Usage: &mock.Usage{Input: 400, Output: 30, CacheRead: 256},
		},
		{
			Match: "DEMO-CONTINUE",
			Text:  "Summary: the last non-empty assistant message is the output, else the streamed text, and the stop reason is kept apart.",
			Usage: &mock.Usage{Input: 260, Output: 26, CacheRead: 128},
		},
		{
			Match: "Summary: the last non-empty",
			Text: "notes.txt lists three promises: honest subagent answers, empty or cut responses treated as failures, " +
				"and no orphaned processes. The summary subagent hit its token limit; its partial answer reached me, and " +
				"continued, it finished: the last non-empty assistant message is the output, and the stop reason is kept apart. " +
				"The workspace survey is still running.",
			Usage: &mock.Usage{Input: 460, Output: 58, CacheRead: 384},
		},
		{
			Match:     "finished [status: completed]",
			ToolCalls: []mock.ToolCall{{ID: "call_job", Name: "job_output", Arguments: args(map[string]any{"id": "job-1"})}},
			Usage:     &mock.Usage{Input: 480, Output: 15, CacheRead: 384},
		},
		{
			Match: "The workspace holds",
			Text:  "The background survey finished: the workspace holds details.txt and notes.txt.",
			Usage: &mock.Usage{Input: 520, Output: 18, CacheRead: 448},
		},
	}}
}
