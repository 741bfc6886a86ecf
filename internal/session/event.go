// Package session is the append-only, event-sourced record of a run: the
// JSONL log format of docs/events.md, its writer, its loader with crash repair, and
// the derivation of model history from it. The log is the source of truth:
// what the model saw is in it, and history is computed from it.
package session

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/reinsdev/reins/internal/llm"
)

// Event types (docs/events.md).
const (
	TypeTurnStart         = "turn/start"
	TypeTurnEnd           = "turn/end"
	TypeStepStart         = "step/start"
	TypeStepEnd           = "step/end"
	TypeUserMessage       = "user/message"
	TypeAssistantChunk    = "assistant/chunk"
	TypeAssistantMessage  = "assistant/message"
	TypeToolCall          = "tool/call"
	TypeToolResult        = "tool/result"
	TypeLLMRetry          = "llm/retry"
	TypeLLMRetryStarted   = "llm/retry-started"
	TypeSubagentStart     = "subagent/start"
	TypeSubagentEnd       = "subagent/end"
	TypeJobNotice         = "job/notice"
	TypeContextCompacted  = "context/compacted"
	headerType            = "session"
	FormatVersion         = 1
	OriginSubagent        = "subagent"
	maxLineBytes          = 64 << 20
	defaultSessionLogName = "session.jsonl"
)

// OriginBatch is the origin of a `reins batch` session: its tasks are its
// children, and `reins run --continue` never picks it.
const OriginBatch = "batch"

// Header is the first line of a session log.
type Header struct {
	Type            string    `json:"type"`
	Version         int       `json:"version"`
	ID              string    `json:"id"`
	CreatedAt       time.Time `json:"createdAt"`
	Cwd             string    `json:"cwd"`
	ParentSession   string    `json:"parentSession,omitempty"`
	Origin          string    `json:"origin,omitempty"`
	DelegationDepth int       `json:"delegationDepth"`
	// What the session was started with, for `reins log` (absent in logs
	// written before reins recorded them): the model as the provider
	// names it, the provider, the agent definition (empty: the built-in
	// agent) and the reins version.
	Model        string `json:"model,omitempty"`
	Provider     string `json:"provider,omitempty"`
	Agent        string `json:"agent,omitempty"`
	ReinsVersion string `json:"reinsVersion,omitempty"`
	// ForkOf is the session this one continues a copy of (the interactive
	// /rewind): its turn 0 is that session's conversation up to the
	// point it was forked at.
	ForkOf string `json:"forkOf,omitempty"`
}

// Event is one log line after the header.
type Event struct {
	Type string          `json:"type"`
	Seq  int64           `json:"seq"`
	Time time.Time       `json:"time"`
	Data json.RawMessage `json:"data"`
	// Payload is what Data says, decoded once where the event entered
	// reins (payload.go): a TurnStart for turn/start, a ToolCall for
	// tool/call, …, always a struct value; nil for a type this reins does
	// not know, whose Data is passed through as it is. On the events
	// Log.Append returns and hands to Options.Observe it is the writer's
	// own value when that says what Data says, so a live observer costs no
	// decoding: it is shared with the writer, so read it during the call
	// and never change it.
	Payload any `json:"-"`
}

// Decode unmarshals e.Data into v: for an unknown type's data, or a reader
// that wants its own view of it. A known type's data is in e.Payload.
func (e Event) Decode(v any) error { return json.Unmarshal(e.Data, v) }

// EndReason is how a turn ended: turn/end's reason (docs/events.md). The
// closed set is the six below; a reason outside it (a newer writer, a
// foreign runtime) is kept as it was read and means an error to every
// reader that maps it (outcome.StopReasonOf).
type EndReason string

// Turn end reasons.
const (
	ReasonCompleted   EndReason = "completed"
	ReasonAborted     EndReason = "aborted"
	ReasonMaxTokens   EndReason = "max-tokens"
	ReasonRefusal     EndReason = "refusal"
	ReasonError       EndReason = "error"
	ReasonInterrupted EndReason = "interrupted"
)

// EndReasons is the closed set, in docs/events.md's order.
var EndReasons = []EndReason{ReasonCompleted, ReasonAborted, ReasonMaxTokens, ReasonRefusal, ReasonError, ReasonInterrupted}

// ParseEndReason returns s as an EndReason when it is in the closed set.
func ParseEndReason(s string) (EndReason, bool) {
	r := EndReason(s)
	return r, slices.Contains(EndReasons, r)
}

func (r EndReason) String() string { return string(r) }

// Who ended an aborted turn.
const (
	AbortedByUser    = "user"
	AbortedByParent  = "parent"
	AbortedByTimeout = "timeout"
	// AbortedByBudget is a turn stopped because the delegation tree's
	// budget (tokens, dollars or time) ran out.
	AbortedByBudget = "budget"
)

// Failure is a coded failure. Message is a fixed text chosen by reins for the
// code, never text received from a provider or a child.
type Failure struct {
	Code    llm.Code `json:"code"`
	Message string   `json:"message"`
}

// TurnStart is the data of turn/start.
type TurnStart struct {
	Turn int `json:"turn"`
	// TraceID is the OpenTelemetry trace the turn's spans belong to (32
	// hex digits), when the run is traced (docs/telemetry.md).
	TraceID string `json:"traceId,omitempty"`
}

// TurnEnd is the data of turn/end.
type TurnEnd struct {
	Turn    int        `json:"turn"`
	Reason  EndReason  `json:"reason"`
	By      string     `json:"by,omitempty"`
	Failure *Failure   `json:"failure,omitempty"`
	Usage   *llm.Usage `json:"usage,omitempty"`
}

// StepStart is the data of step/start.
type StepStart struct {
	Turn int `json:"turn"`
	Step int `json:"step"`
}

// StepEnd is the data of step/end: a type of its own, so a payload says
// which of the two it is.
type StepEnd StepStart

// UserMessage is the data of user/message.
type UserMessage struct {
	Message llm.Message `json:"message"`
	// Notice, when set, marks a message reins wrote itself to tell the
	// model the session's state (NoticeMode: the permission and question
	// mode and the network, at the session's start and when they change),
	// not a prompt: the model sees it like any user message; screens and
	// listings that show prompts leave it out.
	Notice string `json:"notice,omitempty"`
}

// NoticeMode is the Notice of a message telling the model the session's
// permission mode, question mode and network state.
const NoticeMode = "mode"

// AssistantChunk is the data of assistant/chunk.
type AssistantChunk struct {
	Turn  int       `json:"turn"`
	Step  int       `json:"step"`
	Chunk llm.Chunk `json:"chunk"`
}

// AssistantMessage is the data of assistant/message.
type AssistantMessage struct {
	Turn        int         `json:"turn"`
	Step        int         `json:"step"`
	Message     llm.Message `json:"message"`
	Usage       *llm.Usage  `json:"usage,omitempty"`
	Interrupted bool        `json:"interrupted,omitempty"`
}

// ToolCall is the data of tool/call.
type ToolCall struct {
	Turn      int    `json:"turn"`
	Step      int    `json:"step"`
	CallID    string `json:"callId"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolResult is the data of tool/result.
type ToolResult struct {
	Turn    int    `json:"turn"`
	Step    int    `json:"step"`
	CallID  string `json:"callId"`
	Content string `json:"content"`
	IsError bool   `json:"isError"`
	// Image is the image the result carried (base64), so a resumed
	// session shows the model what it was shown.
	Image *llm.Image `json:"image,omitempty"`
}

// LLMRetry is the data of llm/retry, appended before a retry sleep.
type LLMRetry struct {
	RetryID    string  `json:"retryId"`
	Turn       int     `json:"turn"`
	Step       int     `json:"step"`
	Provider   string  `json:"provider"`
	Retry      int     `json:"retry"`
	MaxRetries int     `json:"maxRetries"`
	DelayMs    int64   `json:"delayMs"`
	Failure    Failure `json:"failure"`
}

// LLMRetryStarted is the data of llm/retry-started, appended after the sleep.
type LLMRetryStarted struct {
	RetryID string `json:"retryId"`
	Turn    int    `json:"turn"`
	Step    int    `json:"step"`
	Retry   int    `json:"retry"`
}

// SubagentStart is the data of subagent/start.
type SubagentStart struct {
	RunID        string `json:"runId"`
	ChildSession string `json:"childSession"`
	Agent        string `json:"agent"`
	Provider     string `json:"provider"`
	Label        string `json:"label"`
	Background   bool   `json:"background"`
	// Continues is the child id this run continues (its earlier runs'
	// subagent/start and subagent/end name the same child).
	Continues string `json:"continues,omitempty"`
	// Branch is an isolated child's branch, reins/<child-id>
	// (`isolation: worktree`, docs/subagents.md).
	Branch string `json:"branch,omitempty"`
}

// SubagentEnd is the data of subagent/end. LastAssistantMessage is nil (and
// absent from the JSON) when the child produced no output.
type SubagentEnd struct {
	RunID                string       `json:"runId"`
	StopReason           string       `json:"stopReason"`
	LastAssistantMessage *llm.Message `json:"lastAssistantMessage,omitempty"`
	Diagnostic           string       `json:"diagnostic,omitempty"`
	Usage                *llm.Usage   `json:"usage,omitempty"`
	DurationMs           int64        `json:"durationMs,omitempty"`
	Continues            string       `json:"continues,omitempty"`
	// Branch is an isolated child's branch (reins/<child-id>) and
	// Worktree its result's worktree line (docs/subagents.md).
	Branch   string `json:"branch,omitempty"`
	Worktree string `json:"worktree,omitempty"`
}

// JobNotice is the data of job/notice.
type JobNotice struct {
	JobID  string `json:"jobId"`
	Status string `json:"status"`
}

// ContextCompacted is the data of context/compacted: from here on, the
// history messages of the events FromSeq..ToSeq (inclusive; an earlier
// summary among them included) are replaced by one user message holding
// Summary, in their place. Usage is what the summary request cost.
type ContextCompacted struct {
	Turn     int        `json:"turn"`
	Summary  string     `json:"summary"`
	Replaces SeqRange   `json:"replaces"`
	Usage    *llm.Usage `json:"usage,omitempty"`
	// Reason says what triggered the compaction.
	Reason CompactReason `json:"reason,omitempty"`
}

// SeqRange is an inclusive range of event sequence numbers.
type SeqRange struct {
	FromSeq int64 `json:"fromSeq"`
	ToSeq   int64 `json:"toSeq"`
}

// CompactReason says why the context was compacted.
type CompactReason string

const (
	// CompactThreshold: the next request would have passed
	// context.compactAt of the model's window.
	CompactThreshold CompactReason = "threshold"
	// CompactOverflow: the provider answered CONTEXT_WINDOW_EXCEEDED.
	CompactOverflow CompactReason = "overflow"
	// CompactForced: the user asked (`reins compact`, /compact).
	CompactForced CompactReason = "forced"
)
