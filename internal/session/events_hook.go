package session

import "encoding/json"

// TypeHookRun is the event of one hook's run (internal/hooks, docs/hooks.md).
const TypeHookRun = "hook/run"

// HookRun is the data of hook/run: one command a hook event ran, how it
// ended and what it gave the model or the user. Command and the texts are
// the hook's author's and the hook's output: a reader escapes them where
// it shows them.
type HookRun struct {
	// Event is the hook event (PreToolUse, Stop, ...); Tool the tool name
	// the hook saw (Claude Code's vocabulary), for the tool events.
	Event string `json:"event"`
	Tool  string `json:"tool,omitempty"`
	// CallID is the tool call the hook ran for, for the tool events.
	CallID  string `json:"callId,omitempty"`
	Command string `json:"command"`
	// Source is the settings or config file the hook came from.
	Source string `json:"source"`
	// Confined says the hook ran in the tool sandbox.
	Confined bool `json:"confined"`
	// Exit is the command's exit code (-1 when it did not exit by itself:
	// killed, timed out, or never started).
	Exit       int   `json:"exit"`
	DurationMs int64 `json:"durationMs"`
	// Problem says what went wrong with the hook itself (timed out, could
	// not start, printed output that is not valid JSON), "" when nothing.
	Problem string `json:"problem,omitempty"`
	// Decision is what the hook decided: allow, deny, ask, block, or ""
	// for none.
	Decision string `json:"decision,omitempty"`
	// ToModel is the text the hook gave the model (a reason, context);
	// ToUser the text shown to the user only; Input the tool input it
	// rewrote the call to (Claude Code's vocabulary).
	ToModel string          `json:"toModel,omitempty"`
	ToUser  string          `json:"toUser,omitempty"`
	Input   json.RawMessage `json:"input,omitempty"`
}

// NoticeHook is the Notice of a message that carries a hook's words to
// the model (UserPromptSubmit and SessionStart context, a Stop hook's
// reason to go on).
const NoticeHook = "hook"
