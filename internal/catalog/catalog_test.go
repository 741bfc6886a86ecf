package catalog

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"charm.land/catwalk/pkg/catwalk"
	"github.com/google/go-cmp/cmp"
)

// testCat is a small catalogue of known shape, so these tests do not
// change when the embedded data does.
func testCat() *Catalogue {
	return FromProviders([]catwalk.Provider{
		{ID: "anthropic", DefaultLargeModelID: "claude-sonnet-4-6", Models: []catwalk.Model{
			{ID: "claude-opus-5", CostPer1MIn: 5, CostPer1MOut: 25, CostPer1MInCached: 6.25, CostPer1MOutCached: 0.5, ContextWindow: 1000000, DefaultMaxTokens: 128000},
			{ID: "claude-sonnet-4-6", CostPer1MIn: 3, CostPer1MOut: 15, CostPer1MInCached: 3.75, CostPer1MOutCached: 0.3},
			{ID: "claude-sonnet-4-5-20250929"},
			{ID: "claude-haiku-4-5-20251001"},
			{ID: "claude-opus-4-1-20250805"},
			{ID: "claude-opus-4-20250514"},
		}},
		{ID: "openai", DefaultLargeModelID: "gpt-5.6-sol", Models: []catwalk.Model{
			{ID: "gpt-5.6-terra"}, {ID: "gpt-5.6-sol"}, {ID: "gpt-5.5"}, {ID: "gpt-4.1", CostPer1MIn: 2, CostPer1MOut: 8, CostPer1MOutCached: 0.5},
			{ID: "shared-name"},
		}},
		{ID: "deepseek", DefaultLargeModelID: "deepseek-v4-pro", Models: []catwalk.Model{{ID: "deepseek-v4-flash"}, {ID: "deepseek-v4-pro"}}},
		{ID: "gemini", Models: []catwalk.Model{{ID: "gemini-2.5-pro"}, {ID: "gemini-3.7-flash"}, {ID: "shared-name"}}},
		{ID: "groq", Models: []catwalk.Model{{ID: "llama-x"}}},
	}, "test")
}

// TestShortNameIsTheDefault (issue 48): a short name whose family holds
// the provider's default names the default, though a newer one is listed
// (-m sonnet and no -m agree), in this catalogue and the embedded one.
func TestShortNameIsTheDefault(t *testing.T) {
	c := FromProviders([]catwalk.Provider{{ID: "anthropic", DefaultLargeModelID: "claude-sonnet-4-6", Models: []catwalk.Model{
		{ID: "claude-sonnet-5"}, {ID: "claude-sonnet-4-6"}, {ID: "claude-opus-5"}, {ID: "claude-opus-4-1"},
	}}}, "test")
	for name, want := range map[string]string{"sonnet": "claude-sonnet-4-6", "opus": "claude-opus-5"} {
		if _, id, err := c.Resolve(name); err != nil || id != want {
			t.Errorf("Resolve(%q) = %s, %v; want %s", name, id, err, want)
		}
	}
	cur := Current()
	for _, s := range shorts {
		def := cur.defaults[s.provider]
		if def == "" || !strings.HasPrefix(def, s.prefix) {
			continue
		}
		if _, id, err := cur.Resolve(s.name); err != nil || id != def {
			t.Errorf("embedded catalogue: -m %s is %s (%v), the default is %s", s.name, id, err, def)
		}
	}
}

func TestResolveShortNames(t *testing.T) {
	c := testCat()
	for name, want := range map[string]string{
		"sonnet":            "anthropic/claude-sonnet-4-6", // 4-6 beats 4-5
		"opus":              "anthropic/claude-opus-5",     // not 4-20250514: dates are no version
		"haiku":             "anthropic/claude-haiku-4-5-20251001",
		"gpt":               "openai/gpt-5.6-sol", // tie with terra: the provider's default
		"gemini":            "gemini/gemini-3.7-flash",
		"deepseek":          "deepseek/deepseek-v4-pro",
		"gpt-4.1":           "openai/gpt-4.1", // any unique id
		"claude-sonnet-4-5": "anthropic/claude-sonnet-4-5-20250929",
	} {
		p, id, err := c.Resolve(name)
		if err != nil || p+"/"+id != want {
			t.Errorf("Resolve(%q) = %s/%s, %v; want %s", name, p, id, err, want)
		}
	}
}

func TestResolveUnknownAndAmbiguous(t *testing.T) {
	c := testCat()
	_, _, err := c.Resolve("sonet")
	ne, ok := err.(*NameError)
	if !ok || ne.Ambiguous || len(ne.Closest) == 0 || ne.Closest[0] != "sonnet" {
		t.Fatalf("sonet: %#v", err)
	}
	if !strings.Contains(err.Error(), "did you mean sonnet") {
		t.Errorf("message: %s", err)
	}
	_, _, err = c.Resolve("gpt-5.7")
	if ne, ok := err.(*NameError); !ok || !slices.Contains(ne.Closest, "openai/gpt-5.5") {
		t.Errorf("gpt-5.7: %v", err)
	}
	_, _, err = c.Resolve("shared-name")
	if ne, ok := err.(*NameError); !ok || !ne.Ambiguous || !cmp.Equal(ne.Closest, []string{"openai/shared-name", "gemini/shared-name"}) {
		t.Errorf("shared-name: %#v", err)
	}
	if _, _, err := c.Resolve("llama-x"); err == nil {
		t.Errorf("a provider reins does not speak resolved")
	}
	if _, _, err := c.Resolve("zzzzzzzzzzzzzzzzzzz"); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("far name: %v", err)
	}
}

func TestPrices(t *testing.T) {
	c := testCat()
	m, _ := c.Lookup("anthropic", "claude-sonnet-4-6")
	if *m.Input != 3 || *m.Output != 15 || *m.CacheWrite != 3.75 || *m.CacheRead != 0.3 {
		t.Errorf("anthropic: %+v", m)
	}
	m, _ = c.Lookup("openai", "gpt-4.1")
	if *m.CacheRead != 0.5 || m.CacheWrite != nil {
		t.Errorf("openai: %+v", m)
	}
	m, _ = c.Lookup("openai", "gpt-5.5")
	if m.Input != nil || m.Output != nil {
		t.Errorf("unpriced model priced as free: %+v", m)
	}
}

// TestEmbedded: the real embedded data has the four providers and the
// short names resolve in it.
func TestEmbedded(t *testing.T) {
	c := Embedded()
	for _, p := range Providers {
		if c.Default(p) == "" {
			t.Errorf("no %s models embedded", p)
		}
	}
	for _, name := range ShortNames() {
		if _, _, err := c.Resolve(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestRefresh fetches from a local server standing in for catwalk's, writes
// the cache file, and Current then reads it; a bad answer leaves the old
// file alone.
func TestRefresh(t *testing.T) {
	body := `[{"id":"anthropic","models":[{"id":"claude-sonnet-9","context_window":5,"cost_per_1m_in":1,"cost_per_1m_out":2}]}]`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/providers" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(body))
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "home", "models.json")
	t.Cleanup(func() { UseCacheFile("") })
	UseCacheFile(path)
	if _, ok := Current().Lookup("anthropic", "claude-sonnet-9"); ok {
		t.Fatal("found before the refresh")
	}
	c, err := Refresh(t.Context(), srv.URL, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Models) != 1 {
		t.Errorf("refreshed: %+v", c.Models)
	}
	if m, ok := Current().Lookup("anthropic", "claude-sonnet-9"); !ok || m.ContextWindow != 5 {
		t.Errorf("Current after refresh: %+v %v", m, ok)
	}
	before, _ := os.ReadFile(path)
	body = `[{"id":"groq","models":[{"id":"x"}]}]`
	if _, err := Refresh(t.Context(), srv.URL, path); err == nil {
		t.Error("a catalogue without our providers was accepted")
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("a failed refresh changed the file")
	}
}
