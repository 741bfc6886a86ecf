package tool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestApplyPatch: the cases of Codex's format — add, delete, update with
// context and with an @@ anchor, move, end of file — each on a real
// workspace.
func TestApplyPatch(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	writeFiles(t, env.Workspace, map[string]string{
		"src/app.py": "import os\n\ndef one():\n    return 1\n\ndef two():\n    return 1\n",
		"old.txt":    "bye\n",
		"mv.txt":     "a\nb\nc\n",
		"tail.txt":   "x\ny\nz\n",
		"crlf.txt":   "p\r\nq\r\nr\r\n",
	})
	in := `*** Begin Patch
*** Add File: docs/new.md
+# New
+
+text
*** Delete File: old.txt
*** Update File: src/app.py
@@ def two():
-    return 1
+    return 2
*** Update File: mv.txt
*** Move to: moved/mv.txt
 a
-b
+B
 c
*** Update File: tail.txt
 y
-z
+zz
*** End of File
*** Update File: crlf.txt
 p
-q
+Q
*** End Patch`
	res := call(t, env, "apply_patch", map[string]any{"input": in})
	wantResult(t, res, false, "Success. Updated the following files:\nA docs/new.md\nD old.txt\nM src/app.py\nM mv.txt -> moved/mv.txt\nM tail.txt\nM crlf.txt\n")
	for name, want := range map[string]string{
		"docs/new.md":  "# New\n\ntext\n",
		"src/app.py":   "import os\n\ndef one():\n    return 1\n\ndef two():\n    return 2\n",
		"moved/mv.txt": "a\nB\nc\n",
		"tail.txt":     "x\ny\nzz\n",
		"crlf.txt":     "p\r\nQ\r\nr\r\n",
	} {
		if got := readFile(t, filepath.Join(env.Workspace, name)); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	for _, gone := range []string{"old.txt", "mv.txt"} {
		if _, err := os.Stat(filepath.Join(env.Workspace, gone)); err == nil {
			t.Errorf("%s still exists", gone)
		}
	}
	// Whitespace fuzz: the model's context lost its trailing spaces.
	writeFiles(t, env.Workspace, map[string]string{"ws.txt": "keep   \nold\n"})
	wantResult(t, call(t, env, "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: ws.txt\n keep\n-old\n+new\n*** End Patch\n"}), false, "M ws.txt")
	if got := readFile(t, filepath.Join(env.Workspace, "ws.txt")); got != "keep   \nnew\n" {
		t.Errorf("ws.txt = %q", got)
	}
}

// TestApplyPatchMalformed: a malformed or inapplicable patch is an error
// result that says what is wrong, and changes nothing — not even the
// operations before the bad one.
func TestApplyPatchMalformed(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	writeFiles(t, env.Workspace, map[string]string{"a.txt": "one\ntwo\n", ".git/config": "[core]\n"})
	first := "*** Update File: a.txt\n-one\n+ONE\n"
	tests := []struct {
		name, input, want string
	}{
		{"no begin", "*** Update File: a.txt\n-one\n+1\n*** End Patch", "the first line must be '*** Begin Patch'"},
		{"no end", "*** Begin Patch\n" + first, "the last line must be '*** End Patch'"},
		{"unknown op", "*** Begin Patch\n" + first + "*** Rename File: a.txt\n*** End Patch", "unexpected \"*** Rename File: a.txt\" inside an update"},
		{"stray line", "*** Begin Patch\nhello\n*** End Patch", "expected '*** Add File:'"},
		{"bad change line", "*** Begin Patch\n" + first + "*** Update File: b.txt\n*one\n*** End Patch", "a change line must start with"},
		{"no changes", "*** Begin Patch\n*** Update File: a.txt\n*** End Patch", "update of a.txt has no changes"},
		{"empty", "*** Begin Patch\n*** End Patch", "the patch changes no file"},
		{"context missing", "*** Begin Patch\n" + first + "*** Update File: a.txt\n-three\n+3\n*** End Patch", "a.txt is named by more than one operation"},
		{"lines not found", "*** Begin Patch\n" + first + "*** Add File: n.txt\n+x\n*** Update File: b.txt\n-x\n*** End Patch", "update b.txt: no such file"},
		{"anchor not found", "*** Begin Patch\n*** Update File: a.txt\n@@ nosuch\n-one\n+1\n*** End Patch", "the lines to change were not found: no line \"nosuch\""},
		{"old not found", "*** Begin Patch\n*** Add File: n.txt\n+x\n*** Update File: a.txt\n-three\n+3\n*** End Patch", "chunk 1: the lines to change were not found"},
		{"delete missing", "*** Begin Patch\n" + first + "*** Delete File: nosuch.txt\n*** End Patch", "delete nosuch.txt: no such file"},
		{"outside", "*** Begin Patch\n" + first + "*** Add File: ../x.txt\n+x\n*** End Patch", "outside the workspace"},
		{"protected", "*** Begin Patch\n" + first + "*** Update File: .git/config\n-[core]\n+[core] hooksPath=x\n*** End Patch", "is protected"},
		{"move to protected", "*** Begin Patch\n*** Update File: a.txt\n*** Move to: .reins/config.yaml\n-one\n+x\n*** End Patch", "is protected"},
	}
	before := snapshot(t, env.Workspace)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantResult(t, call(t, env, "apply_patch", map[string]any{"input": tt.input}), true, tt.want)
			if after := snapshot(t, env.Workspace); after != before {
				t.Errorf("a failed patch changed the workspace:\n%s", after)
			}
		})
	}
	wantResult(t, call(t, env, "apply_patch", map[string]any{}), true, `missing required parameter "input"`)
	wantResult(t, call(t, env, "apply_patch", map[string]any{"input": strings.Repeat("x", applyPatchMaxInput+1)}), true, "at most")
}
