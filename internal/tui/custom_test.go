package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm/mock"
)

// A custom command's model: front matter runs its turn on that model (the
// status line says so while it runs); the next prompt is on the session's
// model again. A model reins cannot use is said and the session's used.
func TestCommandModelForOneTurn(t *testing.T) {
	sc, err := mock.Parse([]byte("replies:\n  - {text: answered, repeat: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	url, srv, stop := mock.StartTest(sc)
	defer stop()
	home := t.TempDir()
	for name, body := range map[string]string{
		"review.md": "---\ndescription: Review\nmodel: openai/small-reviewer\n---\nReview $1",
		"broken.md": "---\ndescription: Broken\nmodel: nosuchprovider/x\n---\nBroken $1",
	} {
		p := filepath.Join(home, "commands", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := newScreenHome(t, home, "", func(o *Options) {
		m, err := o.Harness.ResolveModel("openai/big", url)
		if err != nil {
			t.Fatal(err)
		}
		o.Session.Model = m
	})
	turns := 0
	prompt := func(text string) {
		t.Helper()
		turns++
		s.typeText(text)
		n := turns
		s.pump(func() bool { return !s.m.running && strings.Count(s.log(), "answered") == n })
	}
	prompt("plain before")
	s.typeText("/review main.go")
	if got := s.m.modelName(); got != "openai/small-reviewer" {
		t.Errorf("model during the command's turn %q", got)
	}
	turns++
	s.pump(func() bool { return !s.m.running && strings.Count(s.log(), "answered") == turns })
	if got := s.m.modelName(); got != "openai/big" {
		t.Errorf("model after the command's turn %q, want the session's", got)
	}
	prompt("plain after")
	prompt("/broken x")
	var models []string
	for _, req := range srv.Requests() {
		var body struct{ Model string }
		json.Unmarshal(req.Body, &body)
		models = append(models, body.Model)
	}
	if want := []string{"big", "small-reviewer", "big", "big"}; !slices.Equal(models, want) {
		t.Errorf("the requests' models %q, want %q", models, want)
	}
	log := s.log()
	if !strings.Contains(log, "/review runs on openai/small-reviewer") || !strings.Contains(log, `/broken: its model nosuchprovider/x is not one reins can use; running on openai/big`) {
		t.Errorf("committed:\n%s", log)
	}
}
