package mcp

import (
	"github.com/reinsdev/reins/internal/mcpspec"
	"testing"
)

// TestToolNamesOneToOne: server "a_" with tool "b" and server "a" with
// tool "_b" would share mcp__a___b; a server name ending in '_' is
// refused, so every tool name splits back into the server and tool it
// was made of.
func TestToolNamesOneToOne(t *testing.T) {
	if mcpspec.ValidName("a_") || mcpspec.ValidName("x__y") {
		t.Error("a server name ending in _ (or holding __) was accepted")
	}
	for _, tc := range []struct{ server, tool string }{{"a", "_b"}, {"a", "b"}, {"_a", "b"}, {"a-b", "__c"}, {"a_b", "c_"}} {
		if !mcpspec.ValidName(tc.server) {
			t.Fatalf("ValidName(%q) = false", tc.server)
		}
		full, ok := mcpspec.ToolName(tc.server, tc.tool)
		if !ok {
			t.Fatalf("ToolName(%q, %q) refused", tc.server, tc.tool)
		}
		s, n, ok := mcpspec.SplitToolName(full)
		if !ok || s != tc.server || n != tc.tool {
			t.Errorf("%s splits into %q, %q; want %q, %q", full, s, n, tc.server, tc.tool)
		}
	}
}
