package sdkserver_test

import (
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/sdkserver"
	"github.com/reinsdev/reins/sdk"
)

// TestPromptSessionInUse: a session/prompt for a session another reins
// holds is answered "in use", not "unknown session".
func TestPromptSessionInUse(t *testing.T) {
	url, _ := mockServer(t, "fallback: {text: fine}\n")
	cwd, home := workspace(t)
	cfg := sdkserver.Config{Home: home, Cwd: cwd, Model: "openai/test", BaseURL: url, Getenv: func(string) string { return "" }}
	a := serve(t, cfg)
	a.initialize()
	sid, msg := a.prompt("", "hello")
	a.until(isIdle(msg))
	b := serve(t, cfg)
	b.initialize()
	id := b.request(sdk.MethodSessionPrompt, sdk.PromptParams{SessionID: sid, Content: []sdk.Block{{Type: "text", Text: "x"}}})
	f := last(b.until(isResponse(id)))
	e, _ := f["error"].(map[string]any)
	if m, _ := e["message"].(string); errCode(f) != sdk.CodeInvalidParams || !strings.Contains(m, "in use") {
		t.Errorf("answer %v, want invalid params: in use", f)
	}
}
