package sdk

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"
)

// ProtocolVersion is the protocol this package speaks (docs/sdk-protocol.md).
const ProtocolVersion = 1

// Methods of the runtime, requests first, then notifications.
const (
	MethodInitialize    = "initialize"
	MethodSessionPrompt = "session/prompt"
	MethodSessionCancel = "session/cancel"
	MethodShutdown      = "shutdown"

	NotifySessionEvent     = "session/event"
	NotifySessionStatus    = "session/status"
	NotifySubagentStarted  = "subagent/started"
	NotifySubagentFinished = "subagent/finished"
)

// Session statuses carried by session/status.
const (
	StatusRunning = "running"
	StatusIdle    = "idle"
)

// JSON-RPC 2.0 error codes the runtime answers with.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeNotInitialized answers a request sent before initialize.
	CodeNotInitialized = -32002
)

// Request is a JSON-RPC request or, without an ID, a notification.
type Request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// Response is a JSON-RPC response: exactly one of Result and Error is set.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// RPCError is the error object of a JSON-RPC response. Its Message is the
// runtime's text: a client must treat it as untrusted.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// InitializeParams are the parameters of initialize. ProtocolVersion, Cwd,
// Model and MaxTokens are docs/sdk-protocol.md's; the rest are optional extensions a
// reins parent uses so that its reins child gets what an in-process child
// would: the agent definition's system prompt, the tool allowlist (the
// intersection of the parent's tools and the agent definition's), the
// parent's base URL, permission mode and step limit, its place in the
// session tree. They apply to every session of the runtime and override
// the runtime's flags.
type InitializeParams struct {
	ProtocolVersion int    `json:"protocolVersion"`
	Cwd             string `json:"cwd"`
	Model           string `json:"model,omitempty"`
	MaxTokens       int    `json:"maxTokens,omitempty"`

	BaseURL      string `json:"baseURL,omitempty"`
	Permission   string `json:"permission,omitempty"`
	SystemPrompt string `json:"systemPrompt,omitempty"`
	// Tools is a tool allowlist; absent (nil) means every built-in tool,
	// an empty list none.
	Tools []string `json:"tools,omitzero"`
	// MaxSteps bounds the steps of a turn; 0 keeps the runtime's.
	MaxSteps        int    `json:"maxSteps,omitempty"`
	ParentSession   string `json:"parentSession,omitempty"`
	DelegationDepth int    `json:"delegationDepth,omitempty"`
	// Budget caps everything the runtime's sessions and their children
	// use, from initialize on (docs/sdk-protocol.md); absent: the config's
	// budget, if any. A reins parent passes its child what it has left.
	Budget *Budget `json:"budget,omitempty"`
}

// Budget is a spending cap, as config `budget:` (docs/config.md): tokens
// (input plus output), usd (at the runtime's price table) and time (a
// duration such as "90s"). A zero or absent field caps nothing.
type Budget struct {
	Tokens int     `json:"tokens,omitempty"`
	USD    float64 `json:"usd,omitempty"`
	Time   string  `json:"time,omitempty"`
}

// InitializeResult is the result of initialize.
type InitializeResult struct {
	ProtocolVersion int        `json:"protocolVersion"`
	ServerInfo      ServerInfo `json:"serverInfo"`
}

// ServerInfo names the runtime.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Block is one piece of message content, the wire form of a reins content
// block: only the fields of its Type are set.
type Block struct {
	Type      string `json:"type"` // text | reasoning | tool-call | tool-result
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	CallID    string `json:"callId,omitempty"`
	Content   string `json:"content,omitempty"`
	IsError   bool   `json:"isError,omitempty"`
}

// Message is an assistant or user message.
type Message struct {
	Role    string  `json:"role"`
	Content []Block `json:"content"`
}

// Text concatenates the text blocks of bs.
func Text(bs []Block) string {
	var s strings.Builder
	for _, b := range bs {
		if b.Type == "text" {
			s.WriteString(b.Text)
		}
	}
	return s.String()
}

// PromptParams are the parameters of session/prompt. An empty SessionID
// starts a new session.
type PromptParams struct {
	SessionID string  `json:"sessionId,omitempty"`
	Content   []Block `json:"content"`
}

// PromptResult is the enqueue receipt of session/prompt.
type PromptResult struct {
	SessionID string `json:"sessionId"`
	MessageID string `json:"messageId"`
}

// CancelParams are the parameters of session/cancel.
type CancelParams struct {
	SessionID string `json:"sessionId"`
}

// Event is one session event, as in the session log (docs/events.md).
type Event struct {
	Type string          `json:"type"`
	Seq  int64           `json:"seq"`
	Time time.Time       `json:"time"`
	Data json.RawMessage `json:"data"`
}

// SessionEventParams are the parameters of session/event: every event of
// every session of the runtime, child sessions included.
type SessionEventParams struct {
	SessionID string `json:"sessionId"`
	Event     Event  `json:"event"`
}

// SessionStatusParams are the parameters of session/status. The runtime
// reports running when it starts a prompt and idle when that prompt's run
// is over; MessageID names the prompt. An idle status also carries the
// run's last turn-end reason and its selected output (docs/subagents.md's one rule,
// applied by the runtime; absent when the run produced nothing).
type SessionStatusParams struct {
	SessionID  string  `json:"sessionId"`
	Status     string  `json:"status"`
	MessageID  string  `json:"messageId,omitempty"`
	StopReason string  `json:"stopReason,omitempty"`
	Output     []Block `json:"output,omitempty"`
	// Error is set on an idle status whose stop reason is "error".
	Error *TurnError `json:"error,omitempty"`
}

// TurnError is why a run's last turn ended with stop reason "error". Code
// is its failure code (docs/providers.md), Message the fixed text "turn
// ended with CODE". Data, present when the turn ended with a provider's
// error answer, is the human message reins run prints on stderr: the code,
// the provider's own text (one line, escaped, at most 300 bytes) and the
// host log's path. Data is for a human to read; a program must not hand it
// to a model.
type TurnError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data,omitempty"`
}

// SubagentStartedParams are the parameters of subagent/started.
type SubagentStartedParams struct {
	ParentSessionID string `json:"parentSessionId"`
	ChildSessionID  string `json:"childSessionId"`
}

// SubagentFinishedParams are the parameters of subagent/finished.
// LastAssistantMessage is absent when the child produced nothing.
type SubagentFinishedParams struct {
	ParentSessionID      string   `json:"parentSessionId"`
	ChildSessionID       string   `json:"childSessionId"`
	StopReason           string   `json:"stopReason"`
	LastAssistantMessage *Message `json:"lastAssistantMessage,omitempty"`
}

// MaxFrameBytes bounds one frame, without its line end
// (docs/sdk-protocol.md): 10 MiB with its "\n". It is the one inbound
// limit of both runtimes, `reins sdk` and `reins acp`: the ACP SDK reins
// uses (coder/acp-go-sdk) cannot read a longer line, and the two runtimes
// answer an over-long line alike (a parse error, id null) and keep serving.
const MaxFrameBytes = 10<<20 - 1

// ErrFrameTooLong is a line longer than the reader's limit. The line has
// been consumed; the reader stays usable.
var ErrFrameTooLong = errors.New("sdk: frame longer than the line limit")

// FrameReader splits an NDJSON stream into frames with explicit line
// handling: lines of any length up to its limit, an over-long line skipped
// to its end (bufio.Scanner would stop for good), and an unterminated tail
// at EOF dropped, because a frame is a whole "\n"-terminated line.
type FrameReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// NewFrameReader reads frames of up to MaxFrameBytes from r.
func NewFrameReader(r io.Reader) *FrameReader { return NewFrameReaderSize(r, MaxFrameBytes) }

// NewFrameReaderSize reads frames of up to max bytes from r.
func NewFrameReaderSize(r io.Reader, max int) *FrameReader {
	return &FrameReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next line without its "\n" (or "\r\n"). The slice is
// valid until the next call. It returns ErrFrameTooLong for an over-long
// line and the reader's error (io.EOF) at the end.
func (fr *FrameReader) Next() ([]byte, error) {
	fr.buf = fr.buf[:0]
	tooLong := false
	for {
		chunk, err := fr.r.ReadSlice('\n')
		if !tooLong {
			if len(fr.buf)+len(chunk) > fr.max+2 { // room for "\r\n"
				tooLong = true
				fr.buf = fr.buf[:0]
			} else {
				fr.buf = append(fr.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, ErrFrameTooLong
			}
			line := fr.buf[:len(fr.buf)-1]
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			if len(line) > fr.max {
				return nil, ErrFrameTooLong
			}
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}
