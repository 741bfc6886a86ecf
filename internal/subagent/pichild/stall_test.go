package pichild_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// TestStalledPiChild is issue 17's acceptance 3 for pi: the real pi from
// npm, whose model answers with headers and keep-alives and then nothing
// (keep-alives are not progress); with subagents.stallTimeout 3s it is
// stopped, its result is aborted with category stalled within the stall
// timeout plus 2 s of its last message, and no process is left.
//
// The stall watch counts from the spawn, and how long pi (node) takes to
// make its first request is the machine's business: when the child was
// stopped before it made its request, the run is tried again with twice
// the stall timeout. The bound on its end is counted from the request,
// with the time pi took to start it as the margin's scale.
func TestStalledPiChild(t *testing.T) {
	nm := testutil.Peers(t)
	for stall := 3 * time.Second; ; stall *= 2 {
		ld, since := stalledPiRun(t, nm, stall)
		var began, ended time.Time
		for _, e := range ld.Events {
			switch e.Type {
			case session.TypeSubagentStart:
				began = e.Time
			case session.TypeSubagentEnd:
				ended = e.Time
			}
		}
		end := subagentEnd(t, ld.Events)
		if since.IsZero() || since.After(ended) {
			if stall > time.Minute {
				t.Fatal("pi never made its request")
			}
			t.Logf("stallTimeout %s: pi was stopped before it made its request on this machine; again with %s", stall, 2*stall)
			continue
		}
		want := "Subagent failure (provider: pi; stage: run; category: stalled; stop reason: aborted)"
		if end.StopReason != "aborted" || end.Diagnostic != want {
			t.Errorf("subagent/end %s %q, want aborted %q", end.StopReason, end.Diagnostic, want)
		}
		took, startup := ended.Sub(since), since.Sub(began)
		t.Logf("stalled pi child: %s %q %s after its start, %s after its stalling request (stallTimeout %s)",
			end.StopReason, end.Diagnostic, ended.Sub(began).Round(time.Millisecond), took.Round(time.Millisecond), stall)
		if bound := stall + 2*time.Second + startup; took > bound {
			t.Errorf("the stalled child ended %s after its last message, more than stallTimeout + 2s + its start-up (%s)", took, startup)
		}
		return
	}
}

// stalledPiRun is one parent session of TestStalledPiChild, with its own
// model endpoint and subagents.stallTimeout stall; it returns the parent's
// log and when pi's stalling request arrived (zero: it never did).
func stalledPiRun(t *testing.T, nm string, stall time.Duration) (*session.Loaded, time.Time) {
	t.Helper()
	sc, err := mock.Parse([]byte(`
replies:
  - match: delegate-stall
    toolCalls:
      - {id: p1, name: subagent, arguments: {description: a stuck pi, prompt: PI-CHILD stall-now, agent: piscout}}
  - match: stall-now
    fault: stall
    keepAlive: true
    chunkDelay: 100ms
    repeat: true
  - match: Diagnostic
    text: parent done
`))
	if err != nil {
		t.Fatal(err)
	}
	backend, _, stop := mock.StartTest(sc)
	defer stop()
	// A proxy in front of the model notes when pi's stalling request
	// arrived: pi's last message came after it, so the time from there to
	// the child's end bounds the time from its last message.
	target, _ := neturl.Parse(backend)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	var mu sync.Mutex
	var stalledAt time.Time // the latest stalling request
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "stall-now") && strings.Contains(string(body), `"model":"mock-model"`) {
			mu.Lock()
			stalledAt = time.Now()
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, r)
	}))
	defer front.Close()
	url := front.URL
	home, cwd, piDir := t.TempDir(), t.TempDir(), t.TempDir()
	models := map[string]any{"providers": map[string]any{"reins-mock": map[string]any{
		"baseUrl": url + "/v1", "api": "openai-completions", "apiKey": "mock-key",
		"compat": map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
		"models": []any{map[string]any{"id": "mock-model"}},
	}}}
	data, _ := json.Marshal(models)
	write(t, filepath.Join(piDir, "models.json"), string(data))
	mark := fmt.Sprintf("REINS_STALL_PI_MARK=%d", os.Getpid())
	markKey, markVal, _ := strings.Cut(mark, "=")
	write(t, filepath.Join(cwd, ".reins", "agents", "piscout.md"), fmt.Sprintf(`---
name: piscout
description: a pi scout
provider: pi
model: reins-mock/mock-model
env:
  PI_CODING_AGENT_DIR: %q
  PI_OFFLINE: "1"
  HOME: %q
  PATH: %q
  %s: %q
---
You are a scout.
`, piDir, piDir, filepath.Join(nm, ".bin")+":"+os.Getenv("PATH"), markKey, markVal))
	write(t, filepath.Join(cwd, ".reins", "config.yaml"), "subagents: {stallTimeout: "+stall.String()+"}\nproviders:\n  openai:\n    retry: {maxRetries: 0}\n")
	testutil.Trust(t, home, cwd)
	h, err := harness.New(harness.Options{Home: home, Cwd: cwd, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	defer noLeftovers(t, mark)
	m, err := h.ResolveModel("openai/parent", url)
	if err != nil {
		t.Fatal(err)
	}
	s, err := h.NewSession(harness.SessionOptions{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res := s.Run(ctx, "delegate-stall")
	s.Close()
	if res.Reason != session.ReasonCompleted {
		t.Fatalf("parent ended %s", res.Reason)
	}
	ld, err := session.Load(s.Log.Path())
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return ld, stalledAt
}
