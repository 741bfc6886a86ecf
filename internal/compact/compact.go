// Package compact keeps a long conversation inside its model's context
// window. It estimates the tokens of each history message (a byte count
// calibrated by the input tokens the provider reports), chooses the part of
// the history to summarize — never the first user message, never the recent
// steps, never a tool call apart from its result — builds the request that
// asks the model for the summary, and cuts oversized tool results.
//
// The agent loop decides when to compact (before a request that would pass
// Settings.CompactAt of the window, and once after a provider's
// CONTEXT_WINDOW_EXCEEDED); the session log records each compaction as a
// context/compacted event, from which history is derived on resume.
package compact

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
)

// Settings are config `context:` with defaults applied.
type Settings struct {
	// CompactAt is the fraction of the window a request may fill before
	// the history is compacted first.
	CompactAt float64
	// MaxToolResultBytes bounds a tool result in the history.
	MaxToolResultBytes int
}

// The defaults of config `context:` (config.Default uses them): compact
// before a request would fill 85% of the window, and keep tool results in
// the history up to 64 KiB.
const (
	DefaultCompactAt          = 0.85
	DefaultMaxToolResultBytes = 64 << 10
)

// Defaults returns the settings of a config that sets none.
func Defaults() Settings {
	return Settings{CompactAt: DefaultCompactAt, MaxToolResultBytes: DefaultMaxToolResultBytes}
}

// bytesPerToken is the uncalibrated estimate: about four bytes of English
// or code per token, the rule of thumb every tokenizer roughly follows.
const bytesPerToken = 4

// blockOverhead is the raw estimate's cost of a block or message beyond
// its text: role markers, ids, the JSON around a tool call.
const blockOverhead = 4

// Raw is the uncalibrated token estimate of m: its bytes over four plus a
// small overhead per block. It is computed once per message; the
// Estimator scales the sums.
func Raw(m llm.Message) int {
	n := blockOverhead
	for _, b := range m.Content {
		n += blockOverhead + (len(b.Text)+len(b.Signature)+len(b.ID)+len(b.Name)+len(b.Arguments)+len(b.CallID)+len(b.Content)+bytesPerToken-1)/bytesPerToken
	}
	return n
}

// RawText is the uncalibrated token estimate of a text (a system prompt,
// a tool's schema).
func RawText(s string) int { return (len(s) + bytesPerToken - 1) / bytesPerToken }

// RawTools is the uncalibrated estimate of a request's tool definitions.
func RawTools(specs []llm.ToolSpec) int {
	n := 0
	for _, s := range specs {
		n += blockOverhead + RawText(s.Name) + RawText(s.Description) + (len(s.Parameters)+bytesPerToken-1)/bytesPerToken
	}
	return n
}

// Estimator turns raw estimates into tokens, calibrated by what the
// provider reported for earlier requests. Its zero value is uncalibrated.
// It is not safe for concurrent use.
type Estimator struct {
	ratio float64 // reported tokens per raw token; 0: not yet calibrated
}

// Ratio bounds: a report outside them (a proxy that reports nothing
// useful, a cached-only count) does not move the estimate.
const (
	minRatio = 0.25
	maxRatio = 4
)

// Tokens is the calibrated estimate of raw.
func (e *Estimator) Tokens(raw int) int {
	if e.ratio == 0 {
		return raw
	}
	return int(float64(raw)*e.ratio + 0.5)
}

// Calibrate records that a request whose raw estimate was raw was billed
// reported input tokens. The latest report wins: the estimate follows the
// model in use and the kind of content the conversation holds now.
func (e *Estimator) Calibrate(raw, reported int) {
	if raw <= 0 || reported <= 0 {
		return
	}
	r := float64(reported) / float64(raw)
	if r < minRatio || r > maxRatio {
		return
	}
	e.ratio = r
}

// Ratio is the calibration factor (0: uncalibrated).
func (e *Estimator) Ratio() float64 { return e.ratio }

// Range is a half-open range [From, To) of history indexes: the part a
// summary replaces.
type Range struct{ From, To int }

// Len is the number of messages in r.
func (r Range) Len() int { return r.To - r.From }

// Choose picks the range of history to summarize. It keeps whole every
// message up to and including the first user message, and the most recent
// messages whose calibrated tokens fit keep (at least the last step: the
// latest assistant message and what follows it), and it never separates a
// tool call from its result: the range ends before a message that is not a
// tool result. raw[i] is Raw(history[i]). ok is false when nothing can be
// summarized (a history of one step).
func Choose(history []llm.Message, raw []int, e *Estimator, keep int) (r Range, ok bool) {
	first := -1
	for i, m := range history {
		if m.Role == llm.RoleUser {
			first = i
			break
		}
	}
	if first < 0 {
		return Range{}, false
	}
	from := first + 1
	// The latest boundary: the last message that starts a step or a user
	// turn, so the tail kept is at least one whole step.
	last := -1
	for i := len(history) - 1; i >= from; i-- {
		if session.Boundary(history, i) {
			last = i
			break
		}
	}
	if last <= from {
		return Range{}, false
	}
	to := last
	kept := 0
	for i := len(history) - 1; i >= from; i-- {
		kept += e.Tokens(raw[i])
		if kept > keep {
			break
		}
		if i < to && session.Boundary(history, i) {
			to = i
		}
	}
	if to <= from {
		return Range{}, false
	}
	// Replacing only an earlier summary with a new one gains nothing.
	if to-from == 1 && session.IsSummary(history[from]) {
		return Range{}, false
	}
	return Range{From: from, To: to}, true
}

// summarySystem is the system prompt of the summary request.
const summarySystem = "You compact the context of a coding agent. You are given the earlier part of a conversation between a user and the agent, with the agent's tool calls and their results. Write a summary the agent will continue from instead of those messages. Keep: the user's requests and constraints; decisions made and why; files read, created or changed (paths) and what was learned from them; commands run and their outcomes; errors met and how they were resolved; the current state of the work and what remains to be done. Be factual and specific, use short lines, and do not address the user. Answer with the summary only."

// Budget is what a summary request may use, in calibrated tokens.
type Budget struct {
	// Input bounds the transcript sent to be summarized.
	Input int
	// Output is the summary's max_tokens.
	Output int
}

// BudgetFor returns the summary request's budget for a window of window
// tokens and a model that writes at most maxOutput (0: unknown): the
// summary gets an eighth of the window (256 to 8,192 tokens), the
// transcript what is left of three quarters.
func BudgetFor(window, maxOutput int) Budget {
	out := min(max(window/8, 256), 8192)
	if maxOutput > 0 {
		out = min(out, maxOutput)
	}
	in := window*3/4 - out
	return Budget{Input: max(in, 256), Output: out}
}

// messageCap bounds one message in the transcript sent to be summarized:
// a long tool result is shown by its head and tail.
const messageCap = 8 << 10

// Request builds the summary request for the replaced messages. The
// transcript is plain text, so its tool calls need no results and no
// provider rejects its shape; it is cut to b.Input calibrated tokens,
// dropping the oldest messages first (an earlier summary, which comes
// first, is kept whole as long as it fits alone).
func Request(model string, replaced []llm.Message, e *Estimator, b Budget) *llm.Request {
	parts := make([]string, len(replaced))
	for i, m := range replaced {
		parts[i] = render(m)
	}
	total := 0
	for _, p := range parts {
		total += e.Tokens(RawText(p))
	}
	start := 0
	keepFirst := len(replaced) > 0 && session.IsSummary(replaced[0]) && e.Tokens(RawText(parts[0])) < b.Input/2
	if keepFirst {
		start = 1
	}
	dropped := 0
	for total > b.Input && start < len(parts)-1 {
		total -= e.Tokens(RawText(parts[start]))
		parts[start] = ""
		start++
		dropped++
	}
	var sb strings.Builder
	sb.WriteString("Summarize this earlier part of the conversation.\n\n<conversation>\n")
	for i, p := range parts {
		if p == "" {
			if i == start-1 && dropped > 0 {
				sb.WriteString("[" + strconv.Itoa(dropped) + " earlier messages omitted]\n\n")
			}
			continue
		}
		sb.WriteString(p)
	}
	sb.WriteString("</conversation>")
	return &llm.Request{
		Model:     model,
		System:    summarySystem,
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: sb.String()}}}},
		MaxTokens: b.Output,
	}
}

// render writes m as transcript text.
func render(m llm.Message) string {
	var sb strings.Builder
	if summary, ok := session.SummaryOf(m); ok {
		sb.WriteString("## summary of what came before\n")
		sb.WriteString(summary)
		sb.WriteString("\n\n")
		return sb.String()
	}
	sb.WriteString("## " + string(m.Role) + "\n")
	for _, b := range m.Content {
		switch b.Type {
		case llm.BlockText:
			sb.WriteString(Cut(b.Text, messageCap))
		case llm.BlockReasoning:
			continue
		case llm.BlockToolCall:
			sb.WriteString("[tool call " + b.Name + " " + Cut(b.Arguments, messageCap/4) + "]")
		case llm.BlockToolResult:
			label := "[tool result]\n"
			if b.IsError {
				label = "[tool result, error]\n"
			}
			sb.WriteString(label + Cut(b.Content, messageCap))
		}
		sb.WriteString("\n")
	}
	sb.WriteString("\n")
	return sb.String()
}

// cutMarker joins the head and tail of a cut text; CutToolResults adds
// how much was left out.
const cutMarker = "\n[... %d bytes cut from the middle; the whole result is in the session log ...]\n"

// Cut returns s when it fits max bytes, else its head and tail around a
// marker saying how many bytes were cut, at most max bytes plus the
// marker's, never splitting a UTF-8 sequence.
func Cut(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	head := max * 2 / 3
	tail := max - head
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	t := len(s) - tail
	for t < len(s) && !utf8.RuneStart(s[t]) {
		t++
	}
	return s[:head] + strings.Replace(cutMarker, "%d", strconv.Itoa(t-head), 1) + s[t:]
}

// CutToolResults returns m with every tool result above max bytes cut
// (Cut); m itself when none is, so an unchanged message keeps its identity.
func CutToolResults(m llm.Message, max int) llm.Message {
	if max <= 0 {
		return m
	}
	var out []llm.Block
	for i, b := range m.Content {
		if b.Type != llm.BlockToolResult || len(b.Content) <= max {
			continue
		}
		if out == nil {
			out = append([]llm.Block(nil), m.Content...)
		}
		out[i].Content = Cut(b.Content, max)
	}
	if out == nil {
		return m
	}
	return llm.Message{Role: m.Role, Content: out}
}

// ToolResultLimit is the effective bound of a tool result in the history
// of a model with a window of window tokens (0: unknown): max, and never
// more than a quarter of the window, so that no single result can fill
// the context by itself.
func ToolResultLimit(max, window int) int {
	if window > 0 {
		w := window * bytesPerToken / 4
		if max <= 0 || w < max {
			return w
		}
	}
	return max
}
