package harness

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/testutil"
)

// recordQuestions is a ChildQuestions that records what it is asked and
// answers git questions with git.
type recordQuestions struct {
	mu  sync.Mutex
	git bool
	got []string // "label|command"
}

func (q *recordQuestions) Domain(_ context.Context, label, host string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.got = append(q.got, label+"|domain "+host)
	return false
}

func (q *recordQuestions) GitWritable(_ context.Context, label, command string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.got = append(q.got, label+"|"+command)
	return q.git
}

// TestChildQuestions: a session's ChildQuestions gets the .git question of
// its in-process child and of that child's own child, each naming the
// label of the session's direct child it came through; yes lets the
// command write .git, no keeps it read-only; a session without it asks
// nobody (the headless refusal, as before).
func TestChildQuestions(t *testing.T) {
	const cmd = "echo probe > .git/probe && echo wrote"
	script := `
replies:
  - match: OUTER-NEST
    toolCalls: [{id: n1, name: subagent, arguments: {description: inner one, prompt: DO-GIT}}]
  - match: DO-GIT
    toolCalls: [{id: g1, name: bash, arguments: {command: "` + cmd + `"}}]
  - {match: "the first run failed because .git is read-only", text: git written}
  - {match: ".git is read-only", text: git refused}
  - {match: "git written", text: relayed written}
  - {match: "git refused", text: relayed refused}
`
	t.Run("domain", func(t *testing.T) {
		// A host outside sandbox.allowDomains: the child's proxy asks
		// through the same route, naming the host.
		if !sandbox.Doctor().Namespaces {
			t.Fatal("this test needs unprivileged user namespaces (the domain proxy runs only in the container; README, \"Run the tests\")")
		}
		f := newFixture(t, `
replies:
  - match: DO-CURL
    toolCalls: [{id: c1, name: bash, arguments: {command: "curl -sS --max-time 60 --noproxy '' http://asked.invalid/"}}]
  - {match: "is not in sandbox.allowDomains", text: domain refused}
`, map[string]string{})
		// Only the user's own config may list domains.
		home := t.TempDir()
		os.WriteFile(filepath.Join(home, "config.yaml"), []byte("sandbox:\n  allowDomains: [listed.invalid]\n"), 0o600)
		testutil.Trust(t, home, f.h.Cwd)
		h, err := New(Options{Home: home, Cwd: f.h.Cwd, Getenv: func(string) string { return "" }})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		m, err := h.ResolveModel("openai/test", f.url)
		if err != nil {
			t.Fatal(err)
		}
		q := &recordQuestions{}
		s, err := h.NewSession(SessionOptions{Model: m, ChildQuestions: q})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		res, err := s.Subagents.Run(t.Context(), subagent.Params{Prompt: "DO-CURL", Description: "call-8"})
		if err != nil {
			t.Fatal(err)
		}
		if got := llm.BlocksText(res.Output); got != "domain refused" {
			t.Errorf("answer %q, want the proxy's refusal", got)
		}
		if len(q.got) != 1 || q.got[0] != "call-8|domain asked.invalid" {
			t.Errorf("asked %q", q.got)
		}
	})
	for _, tc := range []struct {
		name, prompt string
		ask, yes     bool
		want         string
	}{
		{"child yes", "DO-GIT", true, true, "git written"},
		{"child no", "DO-GIT", true, false, "git refused"},
		{"grandchild yes", "OUTER-NEST", true, true, "relayed written"},
		{"nobody to ask", "DO-GIT", false, false, "git refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, script, map[string]string{})
			testutil.Git(t, f.h.Cwd, "init", "-q")
			m, err := f.h.ResolveModel("openai/test", f.url)
			if err != nil {
				t.Fatal(err)
			}
			q := &recordQuestions{git: tc.yes}
			o := SessionOptions{Model: m}
			if tc.ask {
				o.ChildQuestions = q
			}
			s, err := f.h.NewSession(o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			res, err := s.Subagents.Run(t.Context(), subagent.Params{Prompt: tc.prompt, Description: "call-7"})
			if err != nil {
				t.Fatal(err)
			}
			if got := llm.BlocksText(res.Output); got != tc.want {
				t.Errorf("answer %q, want %q", got, tc.want)
			}
			want := []string(nil)
			if tc.ask {
				want = []string{"call-7|" + cmd}
			}
			if len(q.got) != len(want) || (len(want) > 0 && q.got[0] != want[0]) {
				t.Errorf("asked %q, want %q", q.got, want)
			}
			_, err = os.Stat(filepath.Join(f.h.Cwd, ".git", "probe"))
			if written := err == nil; written != tc.yes {
				t.Errorf(".git/probe written: %v, want %v", written, tc.yes)
			}
		})
	}
}
