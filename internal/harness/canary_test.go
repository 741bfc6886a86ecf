package harness

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// fakeRuntime is a scripted `reins sdk` runtime for the reins provider
// (internal/sdkserver/sdkfake cannot be used here: it imports this package
// through the real runtime). It writes the canary to stderr, answers
// initialize with it in its server version, and then, by $FAKE_SCENARIO,
// answers the prompt with an error carrying it in message and data
// (error-prompt), or accepts the prompt, sends it in a tool call's
// arguments and an unknown notification, and exits 3 (crash-exit).
const fakeRuntime = `#!/bin/bash
echo "fake runtime: secret $CANARY" >&2
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
  *'"method":"initialize"'*)
    printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1,"serverInfo":{"name":"reins","version":"fake %s"}}}\n' "$id" "$CANARY" ;;
  *'"method":"session/prompt"'*)
    if [ "$FAKE_SCENARIO" = error-prompt ]; then
      printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"prompt failed: %s","data":"%s"}}\n' "$id" "$CANARY" "$CANARY"
      continue
    fi
    printf '{"jsonrpc":"2.0","id":%s,"result":{"sessionId":"fake-session","messageId":"msg-1"}}\n' "$id"
    printf '{"jsonrpc":"2.0","method":"session/status","params":{"sessionId":"fake-session","status":"running","messageId":"msg-1"}}\n'
    printf '{"jsonrpc":"2.0","method":"session/event","params":{"sessionId":"fake-session","event":{"type":"tool_call","seq":0,"time":"1970-01-01T00:00:00Z","data":{"callId":"c1","name":"read","arguments":"{\\"path\\":\\"%s\\"}"}}}}\n' "$CANARY"
    printf '{"jsonrpc":"2.0","method":"fake/debug","params":{"secret":"%s"}}\n' "$CANARY"
    echo "fake runtime: crashing with $CANARY" >&2
    exit 3 ;;
  *'"method":"shutdown"'*)
    printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id"
    exit 0 ;;
  *)
    [ -n "$id" ] && printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}\n' "$id" ;;
  esac
done
`

// canaryParentScript: the parent delegates to the agent "leaky"; an
// in-process child's model request is answered with an HTTP error whose
// body carries the canary; the parent's next turn ends.
const canaryParentScript = `
replies:
  - match: delegate now
    toolCalls:
      - id: call_parent
        name: subagent
        arguments: {description: leaky task, prompt: "CHILD-TASK do the work", agent: leaky}
  - match: CHILD-TASK
    status: 400
    body: '{"error":{"message":"upstream rejected: $CANARY","type":"invalid_request_error","code":"$CANARY"}}'
fallback:
  text: parent done
`

// TestCanaryNeverLeaks drives, for every provider, a parent session that
// delegates to a child failing with a secret planted in every channel the
// child controls (stderr, error messages and bodies, protocol payloads,
// permission titles, raw input and option names). The secret must reach no
// tool result, diagnostic, session event or request of the parent's model;
// and, so the test can fail, it must reach the places where raw causes are
// allowed (the host log or the child's stderr artifact).
func TestCanaryNeverLeaks(t *testing.T) {
	tests := []struct {
		name, provider string
		// agent returns the definition's extra frontmatter lines; env is
		// its environment (with the process mark), as YAML.
		agent func(t *testing.T, canary, env string) string
	}{
		{"inprocess provider error body", "inprocess", func(t *testing.T, canary, env string) string {
			return ""
		}},
		{"reins error prompt", "reins", reinsAgent("error-prompt")},
		{"reins crash exit", "reins", reinsAgent("crash-exit")},
		{"acp leaky", "acp", acpAgent("leaky", "permission: allow\n")},
		{"acp permission rejected then crash", "acp", acpAgent("permission_crash", "permission: reject\n")},
		{"acp unknown stop reason", "acp", acpAgent("unknown_stop", "")},
		{"pi stderr and error answer", "pi", func(t *testing.T, canary, env string) string {
			script := filepath.Join(t.TempDir(), "pi")
			body := "#!/bin/bash\n" +
				"echo \"secret=" + canary + "\" >&2\n" +
				`echo '{"type":"tool_execution_start","toolCallId":"c-` + canary + `","toolName":"read","args":{"path":"/secret/` + canary + `"}}'` + "\n" +
				`echo '{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"upstream said ` + canary + `"}}'` + "\n" +
				"exit 1\n"
			if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("command: %q\nenv: {%s}\n", script, env)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			canary := "CANARY" + randomHex(t)
			k, v, _ := strings.Cut(testutil.MarkChildren(t), "=")
			env := fmt.Sprintf("%s: %q", k, v)
			def := "---\nname: leaky\ndescription: fails with secrets\nprovider: " + tc.provider + "\n" +
				tc.agent(t, canary, env) + "---\nYou leak.\n"
			f := newFixture(t, strings.ReplaceAll(canaryParentScript, "$CANARY", canary),
				map[string]string{".reins/agents/leaky.md": def})
			var mu sync.Mutex
			var observed bytes.Buffer
			f.h.Observe = func(_ session.Header, e session.Event) {
				b, _ := json.Marshal(e)
				mu.Lock()
				observed.Write(b)
				mu.Unlock()
			}
			s := f.session(t)
			res := s.Run(context.Background(), "delegate now")
			if res.Reason != session.ReasonCompleted {
				t.Fatalf("parent turn %+v", res)
			}
			results := toolResults(t, s)
			if len(results) != 1 || !results[0].IsError ||
				!strings.Contains(results[0].Content, "Subagent failure (provider: "+tc.provider) {
				t.Fatalf("the child did not fail through its provider: %+v", results)
			}
			t.Logf("parent tool result: %q", results[0].Content)
			s.Close()
			f.h.Close()

			// Nowhere the model or the session log sees.
			for _, r := range results {
				if strings.Contains(r.Content, canary) {
					t.Errorf("canary in the parent's tool result %q", r.Content)
				}
			}
			mu.Lock()
			if bytes.Contains(observed.Bytes(), []byte(canary)) {
				t.Errorf("canary in an observed session event")
			}
			mu.Unlock()
			logs := 0
			filepath.WalkDir(f.h.Home, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() || d.Name() != session.FileName {
					return err
				}
				logs++
				if data, _ := os.ReadFile(path); bytes.Contains(data, []byte(canary)) {
					t.Errorf("canary in session log %s", path)
				}
				return nil
			})
			if logs == 0 {
				t.Error("no session log under the harness home")
			}
			for i, r := range f.srv.Requests() {
				if bytes.Contains(r.Body, []byte(canary)) {
					t.Errorf("canary in model request %d", i)
				}
			}

			// The positive control: the raw cause is kept where it may be.
			allowed := readFile(filepath.Join(f.h.Home, "logs", "reins.log"))
			filepath.WalkDir(f.h.SessionsDir(), func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && d.Name() == "stderr.log" {
					allowed += readFile(path)
				}
				return err
			})
			if !strings.Contains(allowed, canary) {
				t.Errorf("canary in neither the host log nor a stderr artifact: the test cannot see a leak\n%s", allowed)
			}
		})
	}
}

// reinsAgent is a reins child running fakeRuntime in scenario.
func reinsAgent(scenario string) func(t *testing.T, canary, env string) string {
	return func(t *testing.T, canary, env string) string {
		script := filepath.Join(t.TempDir(), "reins-fake")
		if err := os.WriteFile(script, []byte(fakeRuntime), 0o755); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("command: %q\nenv: {%s, FAKE_SCENARIO: %s, CANARY: %s}\n", script, env, scenario, canary)
	}
}

// acpAgent is an ACP child running the acpchild package's scripted
// TypeScript-SDK child in scenario.
func acpAgent(scenario, extra string) func(t *testing.T, canary, env string) string {
	return func(t *testing.T, canary, env string) string {
		nm := testutil.Peers(t)
		sdkPath := filepath.Join(nm, "@agentclientprotocol", "sdk", "dist", "v1", "stable", "acp.js")
		script := filepath.Join(testutil.RepoRoot(t), "internal", "subagent", "acpchild", "testdata", "child.mjs")
		return fmt.Sprintf("command: node\nargs: [%q]\nenv: {%s, ACP_SDK_PATH: %q, ACP_SCENARIO: %s, ACP_CANARY: %s}\n%s",
			script, env, sdkPath, scenario, canary, extra)
	}
}

func randomHex(t *testing.T) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
