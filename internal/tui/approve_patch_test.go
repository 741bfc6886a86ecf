package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/tui/callpreview"
)

// TestApprovalPatchPreview: a multi_edit's and an apply_patch's questions
// show the diff of what they will write against the files as they are
// (removed lines and folded context included), not their raw arguments;
// a call that will fail says why, like edit's.
func TestApprovalPatchPreview(t *testing.T) {
	s := newScreen(t, "", nil)
	body := "package a\n\nfunc one() int { return 1 }\n\nfunc two() int { return 2 }\n" + strings.Repeat("// filler\n", 20) + "func three() int { return 3 }\n"
	for name, text := range map[string]string{"a.go": body, "gone.txt": "bye\n", "crlf.txt": "\ufeffx\r\ny\r\n"} {
		if err := os.WriteFile(filepath.Join(s.cwd, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ask := func(name, args string) (*approval, string) {
		t.Helper()
		a := &approval{name: name, args: json.RawMessage(args), reply: make(chan bool, 1)}
		a.preview = makePreview(s.cwd, name, a.args)
		s.feedItems(item{approve: a})
		s.armHead()
		// The whole question, as the scrollback would take it.
		q := strings.Join(s.m.question(a, 80), "\n")
		s.send(tea.KeyPressMsg{Code: tea.KeyEscape}) // the one-key reject (n asks for an instruction)
		select {
		case ok := <-a.reply:
			if ok {
				t.Fatal("Esc allowed")
			}
		case <-time.After(time.Minute):
			t.Fatal("Esc did not answer the question")
		}
		return a, q
	}
	has := func(what, q string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(q, w) {
				t.Errorf("%s question lacks %q:\n%s", what, w, q)
			}
		}
	}
	hasNot := func(what, q string, bad ...string) {
		t.Helper()
		for _, w := range bad {
			if strings.Contains(q, w) {
				t.Errorf("%s question has %q:\n%s", what, w, q)
			}
		}
	}

	// multi_edit: one diff of both edits, the second applied to the
	// first's result; the filler between them folded.
	_, q := ask("multi_edit", `{"path":"a.go","edits":[{"old_string":"return 1","new_string":"return 10"},{"old_string":"return 10 }","new_string":"return 11 }"},{"old_string":"return 3","new_string":"return 33"}]}`)
	has("multi_edit", q, "? allow multi_edit a.go (3 edits, 3 replacements)",
		"    - func one() int { return 1 }", "    + func one() int { return 11 }",
		"    - func three() int { return 3 }", "    + func three() int { return 33 }",
		"unchanged lines", "      func two() int { return 2 }")
	hasNot("multi_edit", q, "edits:", `"old_string"`)

	// A multi_edit that will fail: which edit and why, and what each asked.
	_, q = ask("multi_edit", `{"path":"a.go","edits":[{"old_string":"return 1","new_string":"return 10"},{"old_string":"return 99","new_string":"return 0"}]}`)
	has("failing multi_edit", q, "edit 2: old_string not found in a.go", "; multi_edit will fail)", "edit 2 of 2", "    - return 99", "    + return 0")
	hasNot("failing multi_edit", q, "the closest") // the hint's file lines stay out of the head

	// multi_edit keeps the tool's rules: CRLF and a BOM.
	_, q = ask("multi_edit", `{"path":"crlf.txt","edits":[{"old_string":"x\ny","new_string":"x\nz"}]}`)
	has("CRLF multi_edit", q, "(1 edit, 1 replacement)", `    - y\r`, `    + z\r`)

	// Too large to preview (the tool still edits it): said, not called a failure.
	if err := os.WriteFile(filepath.Join(s.cwd, "big.txt"), []byte(strings.Repeat("x\n", callpreview.MaxFile)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, q = ask("multi_edit", `{"path":"big.txt","edits":[{"old_string":"x\ny","new_string":"z"}]}`)
	has("large multi_edit", q, "the file is not previewed: 2048.0 KiB, too large", "edit 1 of 1", "    - x", "    + z")
	hasNot("large multi_edit", q, "will fail")
	p := "*** Begin Patch\n*** Update File: big.txt\n@@\n-x\n+y\n*** End Patch\n"
	_, q = ask("apply_patch", `{"input":`+jsonString(p)+`}`)
	has("large apply_patch", q, "big.txt is not previewed: 2048.0 KiB, too large", "    - x", "    + y")
	hasNot("large apply_patch", q, "will fail")

	// apply_patch over three files: a header per file, each one's diff.
	p = "*** Begin Patch\n*** Update File: a.go\n@@\n func two() int { return 2 }\n-// filler\n+// fill\n*** Add File: new.txt\n+hello\n+world\n*** Delete File: gone.txt\n*** End Patch\n"
	_, q = ask("apply_patch", `{"input":`+jsonString(p)+`}`)
	has("apply_patch", q, "? allow apply_patch (3 files)",
		"  a.go: update", "    - // filler", "    + // fill", "      func two() int { return 2 }",
		"  new.txt: add", "    + hello", "    + world",
		"  gone.txt: delete", "    - bye")
	hasNot("apply_patch", q, "input:", "*** Begin Patch")

	// One file, moved.
	p = "*** Begin Patch\n*** Update File: gone.txt\n*** Move to: kept.txt\n@@\n-bye\n+hi\n*** End Patch\n"
	_, q = ask("apply_patch", `{"input":`+jsonString(p)+`}`)
	has("moving apply_patch", q, "? allow apply_patch gone.txt (update, moving it to kept.txt)", "    - bye", "    + hi")

	// A chunk not in the file: the note says so; the chunk is shown.
	p = "*** Begin Patch\n*** Update File: a.go\n@@\n-func four() int { return 4 }\n+func four() int { return 44 }\n*** End Patch\n"
	_, q = ask("apply_patch", `{"input":`+jsonString(p)+`}`)
	has("failing apply_patch", q, "update a.go: ", "; apply_patch will fail", "    - func four() int { return 4 }", "    + func four() int { return 44 }")

	// A patch that does not parse: the error, and the text whole.
	_, q = ask("apply_patch", `{"input":"*** Begin Patch\n*** Frobnicate File: a.go\n*** End Patch"}`)
	has("unparsable apply_patch", q, "invalid patch, line 2", "apply_patch will fail", "  input:", "*** Frobnicate File: a.go")

	// Model-written text in a header or the note is escaped.
	p = "*** Begin Patch\n*** Add File: x\x1b[2Jy.txt\n+a\n*** Add File: b.txt\n+b\n*** End Patch\n"
	_, q = ask("apply_patch", `{"input":`+jsonString(p)+`}`)
	if strings.Contains(q, "\x1b[2J") || !strings.Contains(q, `x\x1b[2Jy.txt: add`) {
		t.Errorf("escape sequence in a file header not escaped:\n%q", q)
	}
	p = "*** Begin Patch\n*** Delete File: no\x1b[2Jne.txt\n*** End Patch\n"
	_, q = ask("apply_patch", `{"input":`+jsonString(p)+`}`)
	if strings.Contains(q, "\x1b[2J") || !strings.Contains(q, `(delete no\x1b[2Jne.txt: no such file;`) {
		t.Errorf("escape sequence in the note not escaped:\n%q", q)
	}
	for name, want := range map[string]string{"a.go": body, "gone.txt": "bye\n"} {
		if b, _ := os.ReadFile(filepath.Join(s.cwd, name)); string(b) != want {
			t.Errorf("%s changed by a preview: %q", name, b)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
