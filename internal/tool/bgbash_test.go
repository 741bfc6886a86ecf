package tool

import (
	"fmt"
	"github.com/reinsdev/reins/internal/testutil"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/proc"
)

// pollOutput calls bash_output until its text holds want, gathering what
// it returned; the bound is generous and only ends a hung test.
func pollOutput(t *testing.T, env *Env, id, want string) string {
	t.Helper()
	var all strings.Builder
	deadline := time.Now().Add(180 * time.Second) // generous: python starts slowly on a loaded machine
	for time.Now().Before(deadline) {
		res := call(t, env, "bash_output", map[string]any{"id": id})
		if res.IsError {
			t.Fatalf("bash_output: %s", res.Content)
		}
		all.WriteString(res.Content)
		if strings.Contains(all.String(), want) {
			return all.String()
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("bash_output never showed %q; got:\n%s", want, all.String())
	return ""
}

// TestBackgroundDevServer: a dev server started with background: true
// answers while the model polls its output, bash_kill stops it (its whole
// group gone), and the session's Close stops what is left.
func TestBackgroundDevServer(t *testing.T) {
	testutil.Python(t) // fails, unless REINS_TEST_SKIP_PEERS=1, when python3 is missing
	env := newEnv(t, WorkspaceWrite)
	env.Shells = NewShells()
	defer env.Shells.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	writeFiles(t, env.Workspace, map[string]string{"index.html": "hello from the workspace\n"})

	res := call(t, env, "bash", map[string]any{"command": fmt.Sprintf("exec python3 -u -m http.server %d --bind 127.0.0.1", port), "background": true})
	wantResult(t, res, false, "started background command bash-1")
	pollOutput(t, env, "bash-1", "Serving HTTP")

	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/index.html", port))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET: %s", resp.Status)
	}
	out := pollOutput(t, env, "bash-1", "GET /index.html")
	if !strings.Contains(out, "[bash-1 running]") {
		t.Errorf("bash_output does not say it runs:\n%s", out)
	}
	j, _ := env.Shells.get("bash-1")
	wantResult(t, call(t, env, "bash_kill", map[string]any{"id": "bash-1"}), false, "bash-1 stopped")
	if !proc.GroupGone(j.p.Pgid) {
		t.Error("the server's process group outlived bash_kill")
	}
	if _, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port)); err == nil {
		t.Error("the server still answers after bash_kill")
	}
	wantResult(t, call(t, env, "bash_output", map[string]any{"id": "bash-1"}), false, "[bash-1 killed by")
	wantResult(t, call(t, env, "bash_output", map[string]any{"id": "bash-9"}), true, `no background command "bash-9" (have: bash-1)`)

	// One still running at the session's end is stopped by Close.
	wantResult(t, call(t, env, "bash", map[string]any{"command": "sleep 300 & sleep 300", "background": true}), false, "bash-2")
	j2, _ := env.Shells.get("bash-2")
	env.Shells.Close()
	if !proc.GroupGone(j2.p.Pgid) {
		t.Error("a background command outlived the session")
	}
	wantResult(t, call(t, env, "bash", map[string]any{"command": "true", "background": true}), true, "the session is ending")
}

// TestBackgroundExitAndBound: a background command's exit code is
// reported once it ends, with all it printed first; unread output past the
// bound is dropped and counted; without Shells the call is refused.
func TestBackgroundExitAndBound(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	wantResult(t, call(t, env, "bash", map[string]any{"command": "true", "background": true}), true, "not available")
	env.Shells = NewShells()
	defer env.Shells.Close()
	wantResult(t, call(t, env, "bash", map[string]any{"command": "head -c 600000 /dev/zero | tr '\\0' y; echo; echo END; exit 4", "background": true}), false)
	j, _ := env.Shells.get("bash-1")
	<-j.p.Done() // all of it printed and unread: one call sees the bound
	out := call(t, env, "bash_output", map[string]any{"id": "bash-1"}).Content
	if !strings.Contains(out, "337861 earlier bytes were dropped: more than 262144 unread]") || !strings.HasSuffix(out, "END\n[bash-1 exited with code 4]") || len(out) > DefaultOutputCap {
		t.Errorf("output: …%s", out[max(0, len(out)-300):])
	}
}
