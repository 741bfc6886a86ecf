package outcome

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/reinsdev/reins/internal/llm"
)

// RenderText is the subagent tool result of docs/subagents.md: the selected
// output's text for a completed run; otherwise the headline, the diagnostic
// and the partial output, each line left out when absent, and isError set.
// The refusals the child's calls got follow, one line each; an isolated
// child's worktree line comes last.
func RenderText(r Result) (content string, isError bool) {
	content, isError = renderText(r)
	for i, why := range r.Refusals {
		if i == MaxRefusals {
			break
		}
		if content != "" {
			content += "\n"
		}
		content += "[refused in the child: " + why + "]"
	}
	if n := r.Refused - min(len(r.Refusals), MaxRefusals); n > 0 {
		content += fmt.Sprintf("\n[and %d more refused calls in the child]", n)
	}
	if r.Note != "" {
		if content != "" {
			content += "\n"
		}
		content += "[" + r.Note + "]"
	}
	if r.Worktree != "" {
		if content != "" {
			content += "\n"
		}
		content += r.Worktree
	}
	return content, isError
}

func renderText(r Result) (content string, isError bool) {
	text := llm.BlocksText(r.Output)
	if r.StopReason == StopCompleted {
		return text, false
	}
	var b strings.Builder
	b.WriteString("Error: " + Headline(r.StopReason))
	if r.Diagnostic != "" {
		b.WriteString("\nDiagnostic: " + r.Diagnostic)
	}
	if text != "" {
		b.WriteString("\nPartial output before the run ended:\n" + text)
	}
	return b.String(), true
}

// Headline is the first line of a non-completed tool result.
func Headline(stopReason StopReason) string {
	switch stopReason {
	case StopAborted:
		return "subagent run was cancelled"
	case StopError:
		return "subagent run failed"
	case StopMaxTokens:
		return "subagent run hit its token limit before finishing"
	case StopRefusal:
		return "subagent declined the task"
	}
	return "subagent run ended abnormally (" + string(stopReason) + ")"
}

// ChildLine is the last line of every result about a child.
func ChildLine(id string) string {
	if id == "" {
		return ""
	}
	return "\nchild: " + id
}

// Cut returns the end of the piece of s that starts at off and holds at
// most max bytes, moved back to a UTF-8 boundary so every piece is valid
// text and the pieces join byte-exact.
func Cut(s string, off, max int) int {
	end := off + max
	if end >= len(s) {
		return len(s)
	}
	for end > off && !utf8.RuneStart(s[end]) {
		end--
	}
	if end == off { // no boundary within max bytes: never return nothing
		end = off + max
	}
	return end
}

// Page renders the piece of content (whose full size is size) from off,
// at most max bytes of it, then — when more follows — the marker with the
// full size and the subagent_output call that reads on, and last the line
// naming the child. It is the one cap of a child's result: the page is
// already bounded, so nothing after it may cut it again (the tool registry
// leaves a result marked Paged alone), and the marker and the child line
// always survive.
func Page(id, content string, off, size, max int) string {
	return PageVia("subagent_output", id, content, off, size, max)
}

// PageVia is Page whose marker names tool as the call that reads on:
// `reins mcp serve` pages a child's result through its child_output tool.
func PageVia(tool, id, content string, off, size, max int) string {
	end := Cut(content, off, max)
	out := content[off:end]
	if end < size {
		out += Marker(tool, id, off, end, size)
	}
	return out + ChildLine(id)
}

// Marker is the line a cut result ends with: the bytes shown of size and
// the tool call that reads on from end.
func Marker(tool, id string, off, end, size int) string {
	call, _ := json.Marshal(map[string]any{"child": id, "offset": end})
	return fmt.Sprintf("\n[output truncated: bytes %d-%d of %d shown; read the rest with %s %s. The full output is in the child's session log.]", off, end, size, tool, call)
}
