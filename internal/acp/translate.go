package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
)

// toolKinds maps reins's tool names to ACP tool kinds: the editor picks
// icons and follow-along behaviour by kind.
var toolKinds = lazy.Value[map[string]sdk.ToolKind]{New: func() map[string]sdk.ToolKind {
	return map[string]sdk.ToolKind{
		"read":            sdk.ToolKindRead,
		"ls":              sdk.ToolKindRead,
		"write":           sdk.ToolKindEdit,
		"edit":            sdk.ToolKindEdit,
		"multi_edit":      sdk.ToolKindEdit,
		"apply_patch":     sdk.ToolKindEdit,
		"bash_output":     sdk.ToolKindOther,
		"bash_kill":       sdk.ToolKindOther,
		"bash":            sdk.ToolKindExecute,
		"grep":            sdk.ToolKindSearch,
		"glob":            sdk.ToolKindSearch,
		"subagent":        sdk.ToolKindOther,
		"job_output":      sdk.ToolKindOther,
		"subagent_output": sdk.ToolKindOther,
		"job_list":        sdk.ToolKindOther,
		"job_kill":        sdk.ToolKindOther,
	}
}}

// KindOf is the ACP tool kind of a reins tool.
func KindOf(name string) sdk.ToolKind {
	if k, ok := toolKinds.Get()[name]; ok {
		return k
	}
	return sdk.ToolKindOther
}

// toolArgs are the arguments of reins's built-in tools that a tool call's
// title, locations and diff are built from.
type toolArgs struct {
	Path        string `json:"path"`
	Content     string `json:"content"`
	OldString   string `json:"old_string"`
	NewString   string `json:"new_string"`
	Command     string `json:"command"`
	Pattern     string `json:"pattern"`
	Description string `json:"description"`
	Agent       string `json:"agent"`
	ID          string `json:"id"`
	Child       string `json:"child"`
	Continue    string `json:"continue"`
	Offset      int    `json:"offset"`
	// Edits are multi_edit's replacements; Input is apply_patch's patch.
	Edits []struct {
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
	} `json:"edits"`
	Input string `json:"input"`
}

// toolCall is what the editor is shown for one reins tool call.
type toolCall struct {
	id        string
	name      string
	args      string
	kind      sdk.ToolKind
	title     string
	rawInput  any
	locations []sdk.ToolCallLocation
	diff      []sdk.ToolCallContent
}

// describe builds the editor's view of a tool call. workspace resolves
// relative paths; live reads a file a write will replace, for its diff
// (a replay shows the file as it is now, so it leaves oldText out).
func describe(workspace, id, name, args string, live bool) *toolCall {
	c := &toolCall{id: id, name: name, args: args, kind: KindOf(name), title: name}
	var a toolArgs
	if json.Unmarshal([]byte(args), &a) != nil {
		// Arguments the tool will refuse: show them as the model sent them.
		if args != "" {
			c.rawInput = args
		}
		return c
	}
	var raw any
	_ = json.Unmarshal([]byte(args), &raw)
	c.rawInput = raw
	abs := ""
	if a.Path != "" {
		abs = a.Path
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(workspace, abs)
		}
		abs = filepath.Clean(abs)
	}
	switch name {
	case "read":
		c.title = "Read " + orDot(a.Path)
		if abs != "" {
			loc := sdk.ToolCallLocation{Path: abs}
			if a.Offset > 0 {
				loc.Line = sdk.Ptr(a.Offset)
			}
			c.locations = []sdk.ToolCallLocation{loc}
		}
	case "ls":
		c.title = "List " + orDot(a.Path)
		if abs != "" {
			c.locations = []sdk.ToolCallLocation{{Path: abs}}
		}
	case "write":
		c.title = "Write " + orDot(a.Path)
		if abs != "" {
			c.locations = []sdk.ToolCallLocation{{Path: abs}}
			var old []string
			if live {
				if b, err := readSmall(abs); err == nil {
					old = []string{b}
				}
			}
			c.diff = []sdk.ToolCallContent{sdk.ToolDiffContent(abs, a.Content, old...)}
		}
	case "edit":
		c.title = "Edit " + orDot(a.Path)
		if abs != "" {
			c.locations = []sdk.ToolCallLocation{{Path: abs}}
			c.diff = []sdk.ToolCallContent{sdk.ToolDiffContent(abs, a.NewString, a.OldString)}
		}
	case "multi_edit":
		c.title = "Edit " + orDot(a.Path)
		if abs != "" {
			c.locations = []sdk.ToolCallLocation{{Path: abs}}
			// One diff item per replacement, as edit's one.
			for _, e := range a.Edits {
				c.diff = append(c.diff, sdk.ToolDiffContent(abs, e.NewString, e.OldString))
			}
		}
	case "apply_patch":
		describePatch(c, workspace, a.Input, live)
	case "bash":
		c.title = "Run " + oneLine(a.Command, 80)
	case "grep":
		c.title = "Search for " + oneLine(a.Pattern, 60)
		if a.Path != "" {
			c.title += " in " + a.Path
		}
	case "glob":
		c.title = "Find " + oneLine(a.Pattern, 60)
	case "subagent":
		c.title = "Delegate: " + oneLine(a.Description, 60)
		if a.Continue != "" {
			c.title = "Continue " + oneLine(a.Continue, 40) + ": " + oneLine(a.Description, 60)
		}
		if a.Agent != "" {
			c.title += " (" + a.Agent + ")"
		}
	case "job_output":
		c.title = "Read output of " + a.ID
	case "subagent_output":
		c.title = "Read more output of " + oneLine(a.Child, 40)
	case "job_list":
		c.title = "List background jobs"
	case "job_kill":
		c.title = "Stop " + a.ID
	}
	return c
}

// maxDiffFile bounds the file a write's diff shows as its old text.
const maxDiffFile = 1 << 20

func readSmall(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxDiffFile {
		return "", os.ErrNotExist
	}
	b, err := os.ReadFile(path)
	if err != nil || !utf8.Valid(b) {
		return "", os.ErrNotExist
	}
	return string(b), nil
}

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// oneLine is s's first line, cut to n runes.
func oneLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if utf8.RuneCountInString(s) > n {
		r := []rune(s)
		s = string(r[:n]) + "…"
	}
	return s
}

// start is the tool_call notification announcing c, pending.
func (c *toolCall) start() sdk.SessionUpdate {
	return sdk.SessionUpdate{ToolCall: &sdk.SessionUpdateToolCall{
		ToolCallId: sdk.ToolCallId(c.id), Title: c.title, Kind: c.kind, Status: sdk.ToolCallStatusPending,
		RawInput: c.rawInput, Locations: c.locations, Content: c.diff,
	}}
}

// permissionView is the tool call as a permission request shows it.
func (c *toolCall) permissionView() sdk.ToolCallUpdate {
	return sdk.ToolCallUpdate{
		ToolCallId: sdk.ToolCallId(c.id), Title: sdk.Ptr(c.title), Kind: sdk.Ptr(c.kind),
		Status: sdk.Ptr(sdk.ToolCallStatusPending), RawInput: c.rawInput, Locations: c.locations, Content: c.diff,
	}
}

func inProgress(id string) sdk.SessionUpdate {
	return sdk.UpdateToolCall(sdk.ToolCallId(id), sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress))
}

// finish is the tool_call_update that ends c with its result; an edit keeps
// its diff beside the result text.
func finish(c *toolCall, content string, isError bool) sdk.SessionUpdate {
	status := sdk.ToolCallStatusCompleted
	if isError {
		status = sdk.ToolCallStatusFailed
	}
	var out []sdk.ToolCallContent
	if c != nil && !isError {
		out = append(out, c.diff...)
	}
	if content != "" {
		out = append(out, sdk.ToolContent(sdk.TextBlock(content)))
	}
	return sdk.UpdateToolCall(sdk.ToolCallId(callID(c)), sdk.WithUpdateStatus(status), sdk.WithUpdateContent(out))
}

func callID(c *toolCall) string {
	if c == nil {
		return ""
	}
	return c.id
}

// runCallID is the tool call id that shows subagent run runID.
func runCallID(runID string) string { return "subagent-" + runID }

// translator turns session events into session/update notifications. Live
// it streams chunks; replaying a log (session/load) it shows whole
// messages instead, since chunks of failed attempts never were an answer.
type translator struct {
	// parent is the translated session's id: with a run id it names the
	// child (subagent.ChildID) a subagent tool call shows.
	parent    string
	workspace string
	live      bool
	calls     map[string]*toolCall
}

func newTranslator(workspace string, live bool) *translator {
	return &translator{workspace: workspace, live: live, calls: map[string]*toolCall{}}
}

// compactedNotice is shown where the log compacted the context.
const compactedNotice = "[Context compacted: the model now sees a summary of the earlier conversation; every message stays in the session log.]"

// updates translates one event.
func (t *translator) updates(e session.Event) []sdk.SessionUpdate {
	switch d := e.Payload.(type) {
	case session.AssistantChunk:
		if !t.live {
			return nil
		}
		if d.Chunk.Delta == "" {
			return nil
		}
		switch d.Chunk.Type {
		case llm.ChunkTextDelta:
			return []sdk.SessionUpdate{sdk.UpdateAgentMessageText(d.Chunk.Delta)}
		case llm.ChunkReasoningDelta:
			return []sdk.SessionUpdate{sdk.UpdateAgentThoughtText(d.Chunk.Delta)}
		}
	case session.AssistantMessage:
		if t.live {
			return nil
		}
		var out []sdk.SessionUpdate
		for _, b := range d.Message.Content {
			switch {
			case b.Type == llm.BlockText && b.Text != "":
				out = append(out, sdk.UpdateAgentMessageText(b.Text))
			case b.Type == llm.BlockReasoning && b.Text != "":
				out = append(out, sdk.UpdateAgentThoughtText(b.Text))
			}
		}
		return out
	case session.UserMessage:
		if t.live { // the editor shows its own prompt
			return nil
		}
		if s := d.Message.Text(); s != "" {
			return []sdk.SessionUpdate{sdk.UpdateUserMessageText(s)}
		}
	case session.ToolCall:
		c := describe(t.workspace, d.CallID, d.Name, d.Arguments, t.live)
		t.calls[d.CallID] = c
		return []sdk.SessionUpdate{c.start()}
	case session.ToolResult:
		c := t.calls[d.CallID]
		if c == nil { // a dangling call answered after a crash
			c = &toolCall{id: d.CallID}
		}
		delete(t.calls, d.CallID)
		return []sdk.SessionUpdate{finish(c, d.Content, d.IsError)}
	case session.ContextCompacted:
		// The editor shows the whole conversation, replayed or live; the
		// notice says that the model sees a summary of its older part
		// from here on.
		return []sdk.SessionUpdate{sdk.UpdateAgentThoughtText(compactedNotice)}
	case session.SubagentStart:
		title := "Subagent " + d.Agent
		if d.Label != "" {
			title += ": " + oneLine(d.Label, 60)
		}
		if d.Background {
			title += " (background)"
		}
		child := d.Continues
		if child == "" && t.parent != "" {
			child = subagent.ChildID(t.parent, d.RunID)
		}
		raw := map[string]any{"agent": d.Agent, "provider": d.Provider, "background": d.Background}
		if child != "" {
			// The id the model continues the child by (child: <id>).
			title += " [" + child + "]"
			raw["child"] = child
		}
		if d.Continues != "" {
			title = "Continue " + title
			raw["continues"] = d.Continues
		}
		return []sdk.SessionUpdate{{ToolCall: &sdk.SessionUpdateToolCall{
			ToolCallId: sdk.ToolCallId(runCallID(d.RunID)), Title: title, Kind: sdk.ToolKindThink,
			Status: sdk.ToolCallStatusInProgress, RawInput: raw,
		}}}
	case session.SubagentEnd:
		res := outcome.Result{StopReason: outcome.StopReason(d.StopReason), Diagnostic: d.Diagnostic}
		if d.LastAssistantMessage != nil {
			res.Output = d.LastAssistantMessage.Content
		}
		r := subagent.Render(res)
		return []sdk.SessionUpdate{finish(&toolCall{id: runCallID(d.RunID)}, r.Content, r.IsError)}
	case session.LLMRetry:
		if !t.live {
			return nil
		}
		return []sdk.SessionUpdate{sdk.UpdateAgentThoughtText("\n[model request failed (" + failureCode(d.Failure.Code) +
			"); retrying, attempt " + itoa(d.Retry) + " of " + itoa(d.MaxRetries) + "]\n")}
	}
	return nil
}

// coalesce merges runs of adjacent text chunks of one kind, so a burst of
// small deltas is one notification.
func coalesce(us []sdk.SessionUpdate) []sdk.SessionUpdate {
	var out []sdk.SessionUpdate
	for _, u := range us {
		if n := len(out); n > 0 {
			prev := &out[n-1]
			switch {
			case u.AgentMessageChunk != nil && prev.AgentMessageChunk != nil && textOf(u.AgentMessageChunk.Content) != nil && textOf(prev.AgentMessageChunk.Content) != nil:
				*prev = sdk.UpdateAgentMessageText(textOf(prev.AgentMessageChunk.Content).Text + textOf(u.AgentMessageChunk.Content).Text)
				continue
			case u.AgentThoughtChunk != nil && prev.AgentThoughtChunk != nil && textOf(u.AgentThoughtChunk.Content) != nil && textOf(prev.AgentThoughtChunk.Content) != nil:
				*prev = sdk.UpdateAgentThoughtText(textOf(prev.AgentThoughtChunk.Content).Text + textOf(u.AgentThoughtChunk.Content).Text)
				continue
			}
		}
		out = append(out, u)
	}
	return out
}

func textOf(b sdk.ContentBlock) *sdk.ContentBlockText { return b.Text }
