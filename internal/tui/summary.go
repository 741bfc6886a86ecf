package tui

import (
	"encoding/json"
	"sort"
	"strings"
)

// Tool call summaries: one line of a call's arguments, shared by the
// interactive screen and `reins run`'s progress lines.
const (
	MaxSummaryValue = 60  // bytes of one argument's value
	MaxSummary      = 120 // bytes of the whole summary
)

// summaryKeys come first in a summary, in this order: what a reader
// looks for in a call; other keys follow sorted.
var summaryKeys = []string{"path", "command", "pattern", "description", "agent", "url", "query", "prompt"}

// ToolSummary is a short one-line view of a tool call's arguments:
// `key=value` pairs of a JSON object, strings unquoted, each value cut at
// MaxSummaryValue bytes and the whole at MaxSummary (with "…"). Arguments
// that are not an object are cut as they are. The caller escapes it.
func ToolSummary(args string) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil {
		return Cut(oneLine(args), MaxSummary)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	rank := func(k string) int {
		for i, s := range summaryKeys {
			if s == k {
				return i
			}
		}
		return len(summaryKeys)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := rank(keys[i]), rank(keys[j])
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	var b strings.Builder
	for _, k := range keys {
		v := string(obj[k])
		var s string
		if json.Unmarshal(obj[k], &s) == nil {
			v = s
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k + "=" + Cut(oneLine(v), MaxSummaryValue))
	}
	return Cut(b.String(), MaxSummary)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Cut shortens s to at most n bytes (on a rune boundary) ending in "…".
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}
