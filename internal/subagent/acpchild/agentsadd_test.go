package acpchild

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/agenthome"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/testutil"
	"github.com/reinsdev/reins/proc"
)

// The agent file `reins agents add gemini` writes runs verbatim: Gemini CLI
// from testdata/peers, found on PATH by its command name, confined under
// workspace-write with $REINS_HOME masked, its key and endpoint inherited
// from reins's environment (the key let through because it is the agent's
// own), answers against the mock model. It keeps its state in
// $REINS_HOME/agents/gemini and writes nothing in the user's home.
func TestAgentsAddFileRuns(t *testing.T) {
	if pl := runtime.GOOS + "/" + runtime.GOARCH; pl != peerPlatform {
		t.Skipf("the peer agents' binaries in testdata/peers are the %s builds; this is %s", peerPlatform, pl)
	}
	f := newFixture(t)
	sc, err := mock.Parse([]byte("replies:\n  - {text: Paris, repeat: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	url, _, stop := mock.StartTest(sc)
	t.Cleanup(stop)

	a, _ := agenthome.ByName("gemini")
	reinsHome, userHome := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(reinsHome, "agents"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(reinsHome, "agents", "gemini.md"), []byte(a.File), 0o600); err != nil {
		t.Fatal(err)
	}
	agents, warnings, err := config.LoadAgents(config.LoadOptions{Home: reinsHome}, nil)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("LoadAgents: %v %v", err, warnings)
	}
	ag, ok := agents.Get("gemini")
	if !ok {
		t.Fatal("no gemini agent")
	}
	ag.Timeout = 5 * time.Minute // the file's 20m, within the suite's bounds

	nm := filepath.Join(testutil.Peers(t), ".bin")
	env := []string{
		"PATH=" + nm + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + userHome, "REINS_HOME=" + reinsHome,
		"GEMINI_API_KEY=test-key", "GOOGLE_GEMINI_BASE_URL=" + url,
		f.mark,
	}
	p := New(Options{
		Logf:         func(format string, args ...any) { t.Logf("host log: "+format, args...) },
		Ladder:       proc.Ladder{Grace: 15 * time.Second, Term: testLadder.Term, Reap: testLadder.Reap},
		ExitWait:     testExitWait,
		StartTimeout: 2 * time.Minute,
		Environ:      func() []string { return env },
	})
	req := f.request(ag, "Capital of France? One word.")
	req.Sandbox.Home = reinsHome
	r, err := p.Start(context.Background(), req)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res := outcome.Settle(r.Wait(ctx))
	if err := r.Dispose(); err != nil {
		t.Errorf("Dispose: %v", err)
	}
	if live := f.leftBehind(); len(live) > 0 {
		t.Errorf("processes left behind: %v", live)
	}
	if res.StopReason != outcome.StopCompleted || !strings.Contains(text(res), "Paris") {
		t.Errorf("got (%s, %q, %q), want completed with Paris", res.StopReason, text(res), res.Diagnostic)
	}
	if _, err := os.Stat(filepath.Join(reinsHome, "agents", "gemini", ".gemini")); err != nil {
		t.Errorf("no state in the agent's state home: %v", err)
	}
	if ents, _ := os.ReadDir(userHome); len(ents) > 0 {
		t.Errorf("the child wrote into the user's home: %v", ents)
	}
}
