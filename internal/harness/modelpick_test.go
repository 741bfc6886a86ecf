package harness

import (
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/catalog"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm"
)

func harnessWithEnv(t *testing.T, env map[string]string) *Harness {
	t.Helper()
	h, err := New(Options{Home: t.TempDir(), Cwd: t.TempDir(), Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// TestDefaultModelFromKeys: SPEC §12's order anthropic, openai, deepseek,
// gemini; no key leaves the old default.
func TestDefaultModelFromKeys(t *testing.T) {
	for _, tt := range []struct {
		env      map[string]string
		provider string
		why      string
	}{
		{map[string]string{}, "deepseek", ""},
		{map[string]string{"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}, "anthropic", "ANTHROPIC_API_KEY is set"},
		{map[string]string{"DEEPSEEK_API_KEY": "k", "OPENAI_API_KEY": "k"}, "openai", "OPENAI_API_KEY is set"},
		{map[string]string{"DEEPSEEK_API_KEY": "k", "GEMINI_API_KEY": "k"}, "deepseek", "DEEPSEEK_API_KEY is set"},
		{map[string]string{"GEMINI_API_KEY": "k"}, "gemini", "GEMINI_API_KEY is set"},
	} {
		spec, why := harnessWithEnv(t, tt.env).DefaultModel()
		if !strings.HasPrefix(spec, tt.provider+"/") || !strings.HasPrefix(why, tt.why) {
			t.Errorf("%v: %s (%s), want %s (%s...)", tt.env, spec, why, tt.provider, tt.why)
		}
	}
	if spec, _ := harnessWithEnv(t, map[string]string{"DEEPSEEK_API_KEY": "k"}).DefaultModel(); spec != config.DefaultModel {
		t.Errorf("deepseek key: %s, want %s", spec, config.DefaultModel)
	}
}

// TestGeminiShortName: -m gemini resolves in the catalogue to a gemini
// model, and the harness has the adapter for it (the gemini wire).
func TestGeminiShortName(t *testing.T) {
	h := harnessWithEnv(t, map[string]string{"GEMINI_API_KEY": "k"})
	p, id, err := h.Config.ResolveModel("gemini")
	if err != nil || p != "gemini" || !strings.HasPrefix(id, "gemini-") {
		t.Fatalf("gemini = %s/%s, %v", p, id, err)
	}
	for _, spec := range []string{"gemini", "gemini/gemini-2.5-pro"} {
		m, err := h.ResolveModel(spec, "")
		if err != nil || m.Provider != "gemini" {
			t.Errorf("%q: %+v, %v", spec, m, err)
		}
	}
}

// TestEffortModel: DeepSeek's effort is the reasoner; other providers keep
// their model and carry the effort on every request.
func TestEffortModel(t *testing.T) {
	h := harnessWithEnv(t, map[string]string{"DEEPSEEK_API_KEY": "k", "ANTHROPIC_API_KEY": "k"})
	h.Effort = llm.EffortHigh
	m, err := h.ResolveModel("deepseek/deepseek-chat", "")
	if err != nil || m.Name != "deepseek-reasoner" || m.Effort != llm.EffortHigh {
		t.Errorf("deepseek: %+v %v", m, err)
	}
	m, err = h.ResolveModel("sonnet", "")
	if err != nil || m.Provider != "anthropic" || m.Effort != llm.EffortHigh {
		t.Errorf("sonnet: %+v %v", m, err)
	}
	if _, ok := catalog.Current().Lookup(m.Provider, m.Name); !ok {
		t.Errorf("sonnet resolved to %s, not in the catalogue", m.Name)
	}
}

// TestAgentFileEffort: an agent file's `effort` reaches its child's
// requests on the parent's model; the parent's own requests carry none.
func TestAgentFileEffort(t *testing.T) {
	f := newFixture(t, `
replies:
  - match: delegate-thinking
    toolCalls: [{id: p1, name: subagent, arguments: {description: think, prompt: "CHILD-TASK think", agent: thinker}}]
  - {match: CHILD-TASK, text: CHILD-DONE}
  - {match: CHILD-DONE, text: parent done}
`, map[string]string{
		".reins/agents/thinker.md": "---\nname: thinker\ndescription: thinks\neffort: high\n---\nThink hard.\n",
	})
	// openai on its own wire at the mock's URL too (config.WireFor).
	f.h.Wire = config.WireResponses
	s := f.session(t)
	if res := s.Run(t.Context(), "delegate-thinking"); res.Reason != "completed" {
		t.Fatalf("parent turn %+v", res)
	}
	var child, parent int
	for _, r := range f.srv.Requests() {
		body := string(r.Body)
		isChild := strings.Contains(body, "Think hard.")
		// openai speaks the Responses wire: reasoning.effort.
		has := strings.Contains(body, `"reasoning":{"effort":"high"`)
		switch {
		case isChild && !has:
			t.Errorf("a child request without the agent's effort: %.200s", body)
		case !isChild && strings.Contains(body, `"reasoning":{"effort"`):
			t.Errorf("a parent request with an effort: %.200s", body)
		}
		if isChild {
			child++
		} else {
			parent++
		}
	}
	if child == 0 || parent == 0 {
		t.Errorf("%d child and %d parent requests", child, parent)
	}
}
