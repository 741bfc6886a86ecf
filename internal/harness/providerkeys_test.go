package harness

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/reinsdev/reins/internal/config"
)

// TestOwnProviderKeyIsSecret (issue 48): the variable a provider of the
// user's own names in apiKeyEnv, whatever its name, and every preset's key
// variable reach no tool, as the built-ins' do not.
func TestOwnProviderKeyIsSecret(t *testing.T) {
	extra := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(extra, []byte("providers:\n  gw: {wire: chat, baseURL: 'https://gw.example/v1', apiKeyEnv: GW_PASSPHRASE_X}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{Extra: extra})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := sandboxPolicy(cfg, t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"GW_PASSPHRASE_X", "OPENROUTER_API_KEY", "GROQ_API_KEY", "DEEPSEEK_API_KEY"} {
		if !slices.Contains(pol.Env.Deny, v) {
			t.Errorf("%s is not denied to tools: %v", v, pol.Env.Deny)
		}
	}
}
