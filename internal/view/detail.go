package view

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
)

// SpanKind is what a bar of the timeline stands for.
type SpanKind string

const (
	SpanStep    SpanKind = "step"
	SpanRequest SpanKind = "request" // one model request; a failed attempt ends with its code
	SpanWait    SpanKind = "retry-wait"
	SpanTool    SpanKind = "tool"
	SpanChild   SpanKind = "child"
	SpanHook    SpanKind = "hook" // one hook command's run (docs/hooks.md)
)

// Span is one bar of the timeline. End is nil while it is still open.
type Span struct {
	Kind   SpanKind   `json:"kind"`
	Label  string     `json:"label"`
	Start  time.Time  `json:"start"`
	End    *time.Time `json:"end,omitempty"`
	Status string     `json:"status,omitempty"` // ok, a failure code, a stop reason
	Child  string     `json:"child,omitempty"`  // the child's session, for a child bar
}

// ItemKind is what an entry of the conversation is.
type ItemKind string

const (
	ItemTurn       ItemKind = "turn"
	ItemTurnEnd    ItemKind = "turn-end"
	ItemUser       ItemKind = "user"
	ItemAssistant  ItemKind = "assistant"
	ItemReasoning  ItemKind = "reasoning"
	ItemToolCall   ItemKind = "tool-call"
	ItemToolResult ItemKind = "tool-result"
	ItemRetry      ItemKind = "retry"
	ItemChildStart ItemKind = "subagent-start"
	ItemChildEnd   ItemKind = "subagent-end"
	ItemJob        ItemKind = "job"
	ItemCompaction ItemKind = "compaction"
	ItemHook       ItemKind = "hook"  // a hook's run: Name its event and tool, Text its command and what it said
	ItemEvent      ItemKind = "event" // an event type this view does not know, shown raw
)

// Item is one entry of a session's conversation.
type Item struct {
	Kind      ItemKind  `json:"kind"`
	Seq       int64     `json:"seq"`
	Time      time.Time `json:"time"`
	Text      string    `json:"text,omitempty"`
	Name      string    `json:"name,omitempty"` // tool, agent or event type
	CallID    string    `json:"callId,omitempty"`
	IsError   bool      `json:"isError,omitempty"`
	Note      string    `json:"note,omitempty"` // a short fixed-form line: reason, usage, status
	Child     string    `json:"child,omitempty"`
	Truncated bool      `json:"truncated,omitempty"`
}

// Detail is one session's timeline and conversation.
type Detail struct {
	Session string `json:"session"`
	Version int64  `json:"version"`
	Spans   []Span `json:"spans"`
	Items   []Item `json:"items"`
	// Omitted counts the oldest items left out to stay within bounds.
	Omitted int `json:"omitted,omitempty"`
	// Problem is a fixed text when the log could not be read whole.
	Problem string `json:"problem,omitempty"`
}

// Detail reads one session's timeline and conversation.
func (r *Reader) Detail(id string) (*Detail, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, err := r.tail(id)
	if err != nil {
		return nil, err
	}
	d := buildDetail(id, t.Tail)
	d.Problem = t.problem
	return d, nil
}

func buildDetail(id string, t *session.Tail) *Detail {
	d := &Detail{Session: id, Version: t.Offset(), Spans: []Span{}, Items: []Item{}}
	open := map[string]int{} // open span by key → index in d.Spans
	begin := func(key string, s Span) {
		if len(d.Spans) >= maxSpans {
			return
		}
		open[key] = len(d.Spans)
		d.Spans = append(d.Spans, s)
	}
	finish := func(key string, at time.Time, status string) {
		i, ok := open[key]
		if !ok {
			return
		}
		delete(open, key)
		end := at
		d.Spans[i].End = &end
		if status != "" {
			d.Spans[i].Status = status
		}
	}
	item := func(it Item) {
		var cut bool
		it.Text, cut = clip(it.Text, maxText)
		it.Truncated = it.Truncated || cut
		d.Items = append(d.Items, it)
		if len(d.Items) > maxItems {
			n := len(d.Items) - maxItems
			d.Items = append(d.Items[:0], d.Items[n:]...)
			d.Omitted += n
		}
	}
	stepKey := func(turn, step int) string { return fmt.Sprintf("step %d/%d", turn, step) }
	reqKey := func(turn, step int) string { return fmt.Sprintf("req %d/%d", turn, step) }
	for _, e := range session.PictureOf(t.Header, t.Events).Entries {
		base := Item{Seq: e.Seq, Time: e.Time}
		switch x := e.Payload.(type) {
		case session.TurnStart:
			base.Kind, base.Note = ItemTurn, fmt.Sprintf("turn %d", x.Turn)
			if x.TraceID != "" { // the turn's OpenTelemetry trace (docs/telemetry.md)
				base.Note += " · trace " + x.TraceID
			}
			item(base)
		case session.TurnEnd:
			note := x.EndText()
			code := ""
			if x.Failure != nil {
				code = string(x.Failure.Code)
				note += ": " + code
			}
			if x.Usage != nil {
				note += "  " + usageText(*x.Usage)
			}
			// A turn's end closes whatever it left open.
			for k := range open {
				status := code
				if status == "" {
					status = string(x.Reason)
				}
				finish(k, e.Time, status)
			}
			base.Kind, base.Note = ItemTurnEnd, note
			item(base)
		case session.StepStart:
			begin(stepKey(x.Turn, x.Step), Span{Kind: SpanStep, Label: fmt.Sprintf("turn %d step %d", x.Turn, x.Step+1), Start: e.Time})
			begin(reqKey(x.Turn, x.Step), Span{Kind: SpanRequest, Label: "model request", Start: e.Time})
		case session.StepEnd:
			finish(reqKey(x.Turn, x.Step), e.Time, "")
			finish(stepKey(x.Turn, x.Step), e.Time, "ok")
		case session.LLMRetry:
			finish(reqKey(x.Turn, x.Step), e.Time, string(x.Failure.Code))
			begin("wait "+x.RetryID, Span{Kind: SpanWait, Label: fmt.Sprintf("retry %d/%d after %s", x.Retry, x.MaxRetries, x.Failure.Code), Start: e.Time, Status: string(x.Failure.Code)})
			base.Kind, base.Name = ItemRetry, x.Provider
			base.Note = fmt.Sprintf("retry %d/%d after %s, waiting %d ms", x.Retry, x.MaxRetries, x.Failure.Code, x.DelayMs)
			item(base)
		case session.LLMRetryStarted:
			finish("wait "+x.RetryID, e.Time, "")
			begin(reqKey(x.Turn, x.Step), Span{Kind: SpanRequest, Label: fmt.Sprintf("model request (retry %d)", x.Retry), Start: e.Time})
		case session.UserMessage:
			base.Kind, base.Text = ItemUser, x.Message.Text()
			item(base)
		case session.AssistantMessage:
			status := "ok"
			if x.Interrupted {
				status = "interrupted"
			}
			finish(reqKey(x.Turn, x.Step), e.Time, status)
			note := ""
			if x.Usage != nil {
				note = usageText(*x.Usage)
			}
			if x.Interrupted {
				note = "interrupted  " + note
			}
			if len(x.Message.Content) == 0 {
				base.Kind, base.Note = ItemAssistant, strings.TrimSpace("(no content)  "+note)
				item(base)
				continue
			}
			added := 0
			for _, b := range x.Message.Content {
				it := base
				switch b.Type {
				case llm.BlockReasoning:
					it.Kind, it.Text = ItemReasoning, b.Text
				case llm.BlockText:
					it.Kind, it.Text = ItemAssistant, b.Text
				case llm.BlockToolCall:
					it.Kind, it.Name, it.CallID, it.Text = ItemToolCall, b.Name, b.ID, b.Arguments
				default:
					continue
				}
				item(it)
				added++
			}
			if note != "" && added > 0 {
				d.Items[len(d.Items)-1].Note = note
			}
		case session.ToolCall:
			begin("tool "+x.CallID, Span{Kind: SpanTool, Label: x.Name, Start: e.Time})
		case session.ToolResult:
			status := "ok"
			if x.IsError {
				status = "error"
			}
			finish("tool "+x.CallID, e.Time, status)
			base.Kind, base.Text, base.CallID, base.IsError, base.Name = ItemToolResult, x.Content, x.CallID, x.IsError, e.Tool
			item(base)
		case session.SubagentStart:
			label := x.Agent
			if x.Label != "" {
				label += ": " + x.Label
			}
			begin("child "+x.RunID, Span{Kind: SpanChild, Label: label, Start: e.Time, Child: x.ChildSession})
			note := "provider " + x.Provider
			if x.Background {
				note += ", background"
			}
			if x.Continues != "" {
				note += ", continues " + x.Continues
			}
			base.Kind, base.Name, base.Text, base.Child, base.Note = ItemChildStart, x.Agent, x.Label, x.ChildSession, note
			item(base)
		case session.SubagentEnd:
			finish("child "+x.RunID, e.Time, x.StopReason)
			base.Kind, base.Note, base.Name = ItemChildEnd, x.EndText(usageText), x.RunID
			if x.LastAssistantMessage != nil {
				base.Text = x.LastAssistantMessage.Text()
			}
			item(base)
		case session.JobNotice:
			base.Kind, base.Note = ItemJob, "job "+x.JobID+" "+x.Status
			item(base)
		case session.ContextCompacted:
			base.Kind, base.Text = ItemCompaction, x.Summary
			base.Note = fmt.Sprintf("compacted: replaces events %d–%d", x.Replaces.FromSeq, x.Replaces.ToSeq)
			item(base)
		case session.HookRun:
			label := strings.TrimSpace(x.Event + " " + x.Tool)
			note := hookNote(x)
			if len(d.Spans) < maxSpans {
				// The event comes when the hook has ended: its bar ends
				// there and began its duration before.
				end := e.Time
				d.Spans = append(d.Spans, Span{Kind: SpanHook, Label: label, Start: e.Time.Add(-time.Duration(x.DurationMs) * time.Millisecond), End: &end, Status: cmp.Or(x.Decision, note)})
			}
			// The command and the texts are the hook's (or the hook
			// file's) own: they go into Text, which the page shows as
			// text, never into the fixed-form Note.
			lines := []string{"$ " + x.Command}
			for _, t := range []struct{ label, text string }{{"problem", x.Problem}, {"to the model", x.ToModel}, {"to the user", x.ToUser}} {
				if t.text != "" {
					lines = append(lines, t.label+": "+t.text)
				}
			}
			if len(x.Input) > 0 {
				in, _ := rawText(x.Input)
				lines = append(lines, "input: "+in)
			}
			base.Kind, base.Name, base.CallID, base.Note = ItemHook, label, x.CallID, note
			base.Text, base.IsError = strings.Join(lines, "\n"), x.Problem != "" || (x.Exit != 0 && x.Exit != 2)
			item(base)
		case session.AssistantChunk:
		default: // a type this reins does not know: shown as its data
			base.Kind, base.Name = ItemEvent, e.Type
			base.Text, base.Truncated = rawText(e.Data)
			item(base)
		}
	}
	return d
}

// hookNote is a hook run's fixed-form line: its decision, exit code,
// duration and whether it ran outside the sandbox.
func hookNote(x session.HookRun) string {
	note := fmt.Sprintf("exit %d, %d ms", x.Exit, x.DurationMs)
	if x.Exit < 0 {
		note = fmt.Sprintf("no exit, %d ms", x.DurationMs)
	}
	if x.Decision != "" {
		note = x.Decision + ", " + note
	}
	if !x.Confined {
		note += ", unconfined"
	}
	return note
}

// usageText is the short usage line of the page.
func usageText(u llm.Usage) string {
	s := u.TokensText()
	if u.CostUSD != nil {
		s += fmt.Sprintf(" $%.4f", *u.CostUSD)
	}
	return s
}
