package outcome_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// Every failure code reins spells is in the one closed list, so no surface
// turns a real code into "unknown" (on main, LOG_WRITE, MAX_WAKEUPS and
// NO_SUMMARY were missing from the in-process list, MAX_WAKEUPS and
// NO_SUMMARY from the ACP one): each llm.Code constant of llm.go is in
// llm.Codes, and each is its own category.
func TestFailureCodesClosedSet(t *testing.T) {
	path := filepath.Join(testutil.RepoRoot(t), "internal", "llm", "llm.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var written []llm.Code
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || vs.Type == nil || len(vs.Values) != 1 {
			return true
		}
		if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
			return true
		}
		lit, ok := vs.Values[0].(*ast.BasicLit)
		if !ok {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			t.Fatal(err)
		}
		written = append(written, llm.Code(s))
		return true
	})
	if len(written) < 16 {
		t.Fatalf("found %d llm.Code constants in llm.go, want at least 16", len(written))
	}
	for _, c := range written {
		if _, ok := llm.ParseCode(string(c)); !ok {
			t.Errorf("failure code %s is not in llm's closed list", c)
		}
		if got := outcome.CodeCategory(c); got != outcome.Category(c) {
			t.Errorf("CodeCategory(%s) = %s", c, got)
		}
		if _, ok := outcome.ParseCategory(string(c)); !ok {
			t.Errorf("ParseCategory(%s) refused a failure code", c)
		}
	}
	for _, c := range []llm.Code{"", "unknown", "FINISH_REASON_FROM_PROVIDER", "max_steps"} {
		if c.Known() || outcome.CodeCategory(c) != outcome.CategoryUnknown {
			t.Errorf("code %q must not be known", c)
		}
	}
	if got := llm.Codes(); len(got) != len(written) || len(slices.Compact(slices.Sorted(slices.Values(got)))) != len(got) {
		t.Errorf("closed list holds %d codes (some twice?), llm.go spells %d: %v", len(got), len(written), got)
	}
}

// Each closed set parses its own spellings and nothing else.
func TestClosedSetsParse(t *testing.T) {
	for _, r := range outcome.StopReasons {
		if got, ok := outcome.ParseStopReason(r.String()); !ok || got != r {
			t.Errorf("ParseStopReason(%s) = %s, %v", r, got, ok)
		}
	}
	for _, s := range outcome.Stages {
		if got, ok := outcome.ParseStage(s.String()); !ok || got != s {
			t.Errorf("ParseStage(%s) = %s, %v", s, got, ok)
		}
	}
	for _, c := range outcome.Categories {
		if got, ok := outcome.ParseCategory(c.String()); !ok || got != c {
			t.Errorf("ParseCategory(%s) = %s, %v", c, got, ok)
		}
	}
	for _, bad := range []string{"", "Completed", "end_turn", "stopped", "ERROR"} {
		if _, ok := outcome.ParseStopReason(bad); ok {
			t.Errorf("ParseStopReason(%q) accepted", bad)
		}
		if _, ok := outcome.ParseStage(bad); ok {
			t.Errorf("ParseStage(%q) accepted", bad)
		}
		if _, ok := outcome.ParseCategory(bad); ok {
			t.Errorf("ParseCategory(%q) accepted", bad)
		}
	}
}

// The one turn-end → stop-reason map: each turn-end reason of the closed
// set, and anything else an error (reinschild's settle used to keep a
// second copy of this switch).
func TestStopReasonOf(t *testing.T) {
	want := map[session.EndReason]outcome.StopReason{
		session.ReasonCompleted: outcome.StopCompleted, session.ReasonMaxTokens: outcome.StopMaxTokens,
		session.ReasonAborted: outcome.StopAborted, session.ReasonRefusal: outcome.StopRefusal,
		session.ReasonError: outcome.StopError, session.ReasonInterrupted: outcome.StopError,
		"disposed": outcome.StopError, "": outcome.StopError, "weird-reason": outcome.StopError,
	}
	for _, r := range session.EndReasons {
		if _, ok := want[r]; !ok {
			t.Errorf("turn-end reason %s has no expected stop reason here", r)
		}
	}
	for in, w := range want {
		if got := outcome.StopReasonOf(in); got != w {
			t.Errorf("StopReasonOf(%q) = %s, want %s", in, got, w)
		}
	}
	for _, r := range outcome.StopReasons {
		if back := outcome.StopReasonOf(r.TurnEnd()); back != r {
			t.Errorf("%s → turn end %s → %s", r, r.TurnEnd(), back)
		}
	}
}
