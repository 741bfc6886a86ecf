package tool

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMultiEditAllOrNothing: multi_edit applies its edits in order, each to
// the text the previous left; when one fails the file is left untouched.
func TestMultiEditAllOrNothing(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	p := filepath.Join(env.Workspace, "a.go")
	writeFiles(t, env.Workspace, map[string]string{"a.go": "func a() {}\nfunc b() {}\nx x x\n"})

	res := call(t, env, "multi_edit", map[string]any{"path": "a.go", "edits": []map[string]any{
		{"old_string": "func a()", "new_string": "func A()"},
		{"old_string": "func A() {}", "new_string": "func A() { b() }"}, // sees edit 1's result
		{"old_string": "x", "new_string": "y", "replace_all": true},
	}})
	wantResult(t, res, false, "applied 3 edits (5 replacements) to a.go")
	if got := readFile(t, p); got != "func A() { b() }\nfunc b() {}\ny y y\n" {
		t.Fatalf("file = %q", got)
	}

	before := readFile(t, p)
	for _, tt := range []struct {
		name  string
		edits []map[string]any
		want  string
	}{
		{"second missing", []map[string]any{{"old_string": "func b", "new_string": "func B"}, {"old_string": "nosuch", "new_string": "z"}}, "edit 2: old_string not found in a.go"},
		{"ambiguous", []map[string]any{{"old_string": "func b", "new_string": "func B"}, {"old_string": "y", "new_string": "z"}}, "edit 2: old_string occurs 3 times"},
		{"identical", []map[string]any{{"old_string": "y", "new_string": "y"}}, "edit 1: old_string and new_string are identical"},
		{"empty old", []map[string]any{{"old_string": "func b", "new_string": "q"}, {"old_string": "", "new_string": "q"}}, "edit 2: old_string is empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantResult(t, call(t, env, "multi_edit", map[string]any{"path": "a.go", "edits": tt.edits}), true, tt.want)
			if got := readFile(t, p); got != before {
				t.Errorf("file changed by a failed multi_edit: %q", got)
			}
		})
	}
	wantResult(t, call(t, env, "multi_edit", map[string]any{"path": "a.go", "edits": []any{}}), true, "edits is empty")
	wantResult(t, call(t, env, "multi_edit", map[string]any{"path": ".git/hooks/pre-commit", "edits": []map[string]any{{"old_string": "a", "new_string": "b"}}}), true, "is protected")
}

// TestEditKeepsCRLFAndBOM: a CRLF file stays CRLF (the model's LF text
// matches its lines) and a BOM stays first.
func TestEditKeepsCRLFAndBOM(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	p := filepath.Join(env.Workspace, "w.txt")
	if err := os.WriteFile(p, []byte("\ufeffone\r\ntwo\r\nthree\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantResult(t, call(t, env, "edit", map[string]any{"path": "w.txt", "old_string": "one\ntwo", "new_string": "uno\ndos\nmore"}), false, "replaced 1 occurrence")
	if got := readFile(t, p); got != "\ufeffuno\r\ndos\r\nmore\r\nthree\r\n" {
		t.Errorf("file = %q", got)
	}
	// A match at the very start is not blocked by the BOM.
	wantResult(t, call(t, env, "edit", map[string]any{"path": "w.txt", "old_string": "uno", "new_string": "eins"}), false)
	if got := readFile(t, p); got != "\ufeffeins\r\ndos\r\nmore\r\nthree\r\n" {
		t.Errorf("file = %q", got)
	}
}

// TestEditSaysClosestMatch: when old_string is not in the file, the result
// names the line it most likely meant, with the file's text there.
func TestEditSaysClosestMatch(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	writeFiles(t, env.Workspace, map[string]string{"a.go": "package a\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n"})
	wantResult(t, call(t, env, "edit", map[string]any{"path": "a.go", "old_string": "func main() {\n    fmt.Println(\"hello\")", "new_string": "x"}),
		true, "old_string not found in a.go; closest match at line 3 (the same text with other whitespace):\n     3\tfunc main() {\n     4\t\tfmt.Println(\"hello\")")
	wantResult(t, call(t, env, "edit", map[string]any{"path": "a.go", "old_string": "fmt.Printf(\"hallo\")", "new_string": "x"}),
		true, "closest match at line 4 (the most similar line)")
	wantResult(t, call(t, env, "edit", map[string]any{"path": "a.go", "old_string": "zzzzqqqq", "new_string": "x"}),
		true, "no similar line either")
}
