package subagent

import (
	"encoding/json"
	"strings"
	"testing"
)

// subagentSchema is the subagent tool's schema as a map: what
// subagentSpec writes by hand must be json.Marshal's bytes for it.
func subagentSchema(names, lines []string) map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"description":       map[string]any{"type": "string", "description": descriptionDescription},
			"prompt":            map[string]any{"type": "string", "description": promptDescription},
			"agent":             map[string]any{"type": "string", "enum": names, "description": agentDescription + strings.Join(lines, "\n")},
			"run_in_background": map[string]any{"type": "boolean", "description": backgroundDescription},
			"continue":          map[string]any{"type": "string", "description": continueDescription},
			"fork":              map[string]any{"type": "boolean", "description": forkDescription},
			"isolation":         map[string]any{"type": "string", "enum": []string{"worktree"}, "description": isolationDescription},
		},
		"required":             []string{"description", "prompt"},
		"additionalProperties": false,
	}
}

func TestSubagentSchemaMatchesMarshal(t *testing.T) {
	for _, c := range []struct{ names, lines []string }{
		{nil, nil},
		{[]string{}, []string{}},
		{[]string{"general"}, []string{"- general: the default"}},
		{[]string{"a<b>", "c&d", "é\u2028"}, []string{"- a<b>: x & y", "- \"q\": \\ \t"}},
	} {
		want, err := json.Marshal(subagentSchema(c.names, c.lines))
		if err != nil {
			t.Fatal(err)
		}
		if got := subagentSpec(c.names, c.lines).Parameters; string(got) != string(want) {
			t.Errorf("subagentSpec(%q, %q) schema:\n got %s\nwant %s", c.names, c.lines, got, want)
		}
	}
}
