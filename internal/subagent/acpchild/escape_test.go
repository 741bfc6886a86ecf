package acpchild

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/tool"
)

// TestEscapesUnderEachMode is the escape suite for an ACP child: the child
// runs shell commands itself (no permission request is involved, as when a
// real agent runs its own tools), and the sandbox decides, by the parent's
// permission mode, what reaches the disk.
func TestEscapesUnderEachMode(t *testing.T) {
	type want map[tool.Permission]bool // whether the attempt lands
	cases := []struct {
		name   string
		script string // $OUT: a directory outside the workspace; $WS: the workspace
		landed func(ws, out string) bool
		want   want
	}{
		{"write outside the workspace", `echo x > "$OUT/new"`,
			func(_, out string) bool { return exists(filepath.Join(out, "new")) },
			want{tool.ReadOnly: false, tool.WorkspaceWrite: false, tool.FullAccess: true}},
		{"write inside the workspace", `echo x > "$WS/new"`,
			func(ws, _ string) bool { return exists(filepath.Join(ws, "new")) },
			want{tool.ReadOnly: false, tool.WorkspaceWrite: true, tool.FullAccess: true}},
		{"setsid escape", `setsid -f bash -c 'echo x > "$OUT/setsid"'; sleep 0.3`,
			func(_, out string) bool { return exists(filepath.Join(out, "setsid")) },
			want{tool.ReadOnly: false, tool.WorkspaceWrite: false, tool.FullAccess: true}},
		{"symlink to outside", `ln -s "$OUT" "$WS/link"; echo x > "$WS/link/via-link"`,
			func(_, out string) bool { return exists(filepath.Join(out, "via-link")) },
			want{tool.ReadOnly: false, tool.WorkspaceWrite: false, tool.FullAccess: true}},
		{"/proc/self/root path", `echo x > "/proc/self/root$OUT/via-proc"`,
			func(_, out string) bool { return exists(filepath.Join(out, "via-proc")) },
			want{tool.ReadOnly: false, tool.WorkspaceWrite: false, tool.FullAccess: true}},
		{"hard link to a file outside", `ln "$OUT/secret" "$WS/hard" && echo pwned > "$WS/hard"`,
			func(_, out string) bool {
				b, _ := os.ReadFile(filepath.Join(out, "secret"))
				return strings.Contains(string(b), "pwned")
			},
			want{tool.ReadOnly: false, tool.WorkspaceWrite: false, tool.FullAccess: true}},
	}
	for _, mode := range []tool.Permission{tool.ReadOnly, tool.WorkspaceWrite, tool.FullAccess} {
		for _, c := range cases {
			t.Run(string(mode)+"/"+c.name, func(t *testing.T) {
				f := newFixture(t)
				out := t.TempDir()
				if err := os.WriteFile(filepath.Join(out, "secret"), []byte("secret\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				script := "export OUT='" + out + "' WS='" + f.cwd + "'\n" + c.script
				ag := f.agent("exec", "", map[string]string{"ACP_EXEC": script})
				req := f.request(ag, "run it")
				req.Permission = mode
				r, err := f.provider().Start(t.Context(), req)
				if err != nil {
					t.Fatalf("Start: %v", err)
				}
				res := r.Wait(t.Context())
				if err := r.Dispose(); err != nil {
					t.Errorf("Dispose: %v", err)
				}
				if text := llm.BlocksText(res.Output); !strings.HasPrefix(text, "exit:") {
					t.Fatalf("the child did not run the command: %+v", res)
				}
				if got := c.landed(f.cwd, out); got != c.want[mode] {
					t.Errorf("landed=%v, want %v (%s)", got, c.want[mode], llm.BlocksText(res.Output))
				}
			})
		}
	}
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }
