// Package toolsummary is the one-line view of a tool call's arguments,
// shared by the interactive screen (the calls in flight, the settled
// calls, a child's latest call) and `reins run`'s progress lines. It cuts
// by bytes (termtext/plain), so reins run links no terminal library.
package toolsummary

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/reinsdev/reins/internal/textcut"
)

// Bounds of a summary.
const (
	MaxValue = 60  // bytes of one argument's value
	Max      = 120 // bytes of the whole summary
)

// Keys come first in a summary, in this order: what a reader looks for
// in a call; other keys follow sorted.
var Keys = []string{"path", "command", "pattern", "description", "agent", "url", "query", "prompt"}

// Of is a short one-line view of a tool call's arguments: `key=value`
// pairs of a JSON object, strings unquoted, each value cut at MaxValue
// bytes and the whole at Max (with "…"). Arguments that are not an object
// are cut as they are. The caller escapes it.
func Of(args string) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil {
		return textcut.Cut(textcut.OneLine(args), Max)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := Rank(keys[i]), Rank(keys[j])
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
		b.WriteString(k + "=" + textcut.Cut(textcut.OneLine(v), MaxValue))
	}
	return textcut.Cut(b.String(), Max)
}

// Rank is where key k comes in a summary: its place in Keys, the others
// after them.
func Rank(k string) int {
	for i, s := range Keys {
		if s == k {
			return i
		}
	}
	return len(Keys)
}
