package acp

import (
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinsdev/reins/internal/mcpspec"
)

func TestEditorServerNames(t *testing.T) {
	for in, want := range map[string]string{
		"files":                  "files",
		"Everything (reference)": "Everything_reference",
		"GitHub / work":          "GitHub_work",
		"a__b":                   "a_b",
		"  ":                     "server",
		"\x1b[31mred":            "31mred",
		strings.Repeat("x", 80):  strings.Repeat("x", 32),
	} {
		got := serverName(in)
		if got != want || !mcpspec.ValidName(got) {
			t.Errorf("serverName(%q) = %q (valid %v), want %q", in, got, mcpspec.ValidName(got), want)
		}
	}
}

func TestEditorServers(t *testing.T) {
	got, err := editorServers([]sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "fs", Command: "node", Args: []string{"x"}, Env: []sdk.EnvVariable{{Name: "A", Value: "1"}}}},
		{Http: &sdk.McpServerHttpInline{Name: "fs", Url: "https://h/mcp", Headers: []sdk.HttpHeader{{Name: "Authorization", Value: "Bearer t"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "fs" || got[0].Env["A"] != "1" || got[0].Source != "editor" ||
		got[1].Name != "fs-2" || got[1].Transport() != mcpspec.HTTP || got[1].Headers["Authorization"] != "Bearer t" {
		t.Errorf("servers %+v", got)
	}
	for _, bad := range [][]sdk.McpServer{
		{{Sse: &sdk.McpServerSseInline{Name: "s", Url: "http://h/sse"}}},
		{{Stdio: &sdk.McpServerStdio{Name: "s"}}},
		{{Http: &sdk.McpServerHttpInline{Name: "h", Url: "file:///etc/passwd"}}},
	} {
		if _, err := editorServers(bad); err == nil {
			t.Errorf("accepted %+v", bad[0])
		}
	}
}
