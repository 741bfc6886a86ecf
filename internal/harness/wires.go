package harness

import (
	"net/http"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/gemini"
	"github.com/reinsdev/reins/internal/llm/responses"
)

// wireModel builds the adapter of the Responses and Gemini wires
// (providers.<name>.wire, docs/providers.md) for one resolved endpoint.
func wireModel(pc config.ProviderConfig, url, key string, client *http.Client, logf func(string, ...any), providerError func(int, string)) llm.Model {
	if pc.Wire == config.WireGemini {
		return &gemini.Client{BaseURL: url, APIKey: key, HTTP: client, IdleTimeout: pc.IdleTimeout, ProgressTimeout: pc.ProgressTimeout, Logf: logf, ProviderError: providerError}
	}
	return &responses.Client{BaseURL: url, APIKey: key, HTTP: client, IdleTimeout: pc.IdleTimeout, ProgressTimeout: pc.ProgressTimeout, Logf: logf, ProviderError: providerError}
}
