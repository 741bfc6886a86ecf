package harness

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
	"github.com/reinsdev/reins/internal/trust"
)

// A custom command with arguments, in a trusted project's
// .claude/commands/git/review.md: /git:review and /review expand it, its
// inline !`...` runs confined with the arguments as data (an argument that
// is shell text does nothing), its allowed-tools narrow its turn only.
func TestCommandWithArguments(t *testing.T) {
	f := newSkillFixture(t)
	marker := filepath.Join(t.TempDir(), "pwned")
	writeFiles(t, f.cwd, map[string]string{
		"main.go": "package main\n",
		".claude/commands/git/review.md": "---\ndescription: review a file\nargument-hint: FILE [FOCUS]\nallowed-tools: Read\n---\n" +
			"Review $1 for $2.\nSize: !`wc -c < \"$1\"`\nArgs: !`printf '%s|' \"$@\"; printf '%s' \"$ARGUMENTS\" | wc -c`\n",
	})
	testutil.Trust(t, f.home, f.cwd)
	h, err := f.harness(t, `
replies:
  - match: Review main.go
    toolCalls: [{id: c1, name: grep, arguments: {pattern: x}}]
  - match: allowed-tools
    text: done
  - match: again
    toolCalls: [{id: c2, name: grep, arguments: {pattern: x}}]
  - text: ok
    repeat: true
`)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := h.Commands.Get("review"); !ok || c.Label() != "(project:git)" {
		t.Fatalf("/review: %+v", c)
	}
	s := f.session(t, h, SessionOptions{})
	hostile := "main.go ';touch " + marker + "' $(touch " + marker + ")"
	exp, ok := s.Slash(context.Background(), "/git:review "+hostile)
	if !ok || exp.Command == nil {
		t.Fatal("/git:review did not expand")
	}
	want := "Review main.go for ;touch " + marker + ".\nSize: 13\nArgs: main.go|;touch " + marker + "|$(touch|" + marker + ")|" + itoa(len(hostile))
	if exp.Prompt != want {
		t.Errorf("prompt\n%q\nwant\n%q", exp.Prompt, want)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("an argument ran as shell text")
	}
	res := s.Run(context.Background(), exp.Prompt)
	if res.Reason != session.ReasonCompleted {
		t.Fatalf("turn %+v", res)
	}
	rs := toolResults(t, s)
	if len(rs) != 1 || !rs[0].IsError || !strings.Contains(rs[0].Content, "/git:review") {
		t.Errorf("grep outside the command's allowed-tools: %+v", rs)
	}
	s.Run(context.Background(), "again, without the command")
	if rs := toolResults(t, s); len(rs) != 2 || rs[1].IsError {
		t.Errorf("the narrowing outlived the command's turn: %+v", rs)
	}
	if _, ok := s.Slash(context.Background(), "/nosuch x"); ok {
		t.Error("/nosuch expanded")
	}
}

// An untrusted project's commands are never used; one planted after the
// user trusted the folder stops the start, named, until approved.
func TestProjectCommandsTrustAndPins(t *testing.T) {
	f := newSkillFixture(t)
	writeFiles(t, f.cwd, map[string]string{".reins/commands/deploy.md": "Run !`touch planted`"})
	writeFiles(t, f.home, map[string]string{"commands/mine.md": "mine $ARGUMENTS"})
	h, err := f.harness(t, plainScript)
	if err != nil {
		t.Fatal(err)
	}
	s := f.session(t, h, SessionOptions{})
	if _, ok := s.Slash(context.Background(), "/deploy"); ok {
		t.Error("an untrusted project's command expanded")
	}
	if exp, ok := s.Slash(context.Background(), "/mine a b"); !ok || exp.Prompt != "mine a b" {
		t.Errorf("the user's command: %+v", exp)
	}
	if _, err := os.Stat(filepath.Join(f.cwd, "planted")); err == nil {
		t.Error("an untrusted command's inline shell ran")
	}
	testutil.Trust(t, f.home, f.cwd)
	writeFiles(t, f.cwd, map[string]string{".claude/commands/x/late.md": "late"})
	_, err = f.harness(t, plainScript)
	var ue *trust.UnpinnedError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), ".claude/commands/x/late.md") {
		t.Fatalf("a planted command: %v", err)
	}
}
