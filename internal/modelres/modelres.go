// Package modelres resolves a model spec (PROVIDER/MODEL or an alias)
// against the config into a ready adapter: the wire's client with its
// endpoint and key, the retry policy, the effort and image knobs, and the
// in-process mock. It is the harness's model resolution as a piece of its
// own, so the composition root need not link every wire adapter itself.
package modelres

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/reinsdev/reins/internal/catalog"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/anthropic"
	"github.com/reinsdev/reins/internal/llm/gemini"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/llm/openai"
	"github.com/reinsdev/reins/internal/llm/responses"
	"github.com/reinsdev/reins/internal/llm/retry"
)

// Model is a resolved model: its adapter and what the loop records.
type Model struct {
	llm.Model
	Provider string
	Name     string
	Retry    retry.Policy
	// BaseURL is the --base-url the model was resolved with; a child
	// agent on the same provider inherits it.
	BaseURL string
	// Effort is the reasoning effort every request through the model
	// carries (llm.Request.Effort); "" for none.
	Effort llm.Effort

	noteMu sync.Mutex
	note   string
}

// ProviderMessage is the provider's own message of the last failed
// request made through this model (one line, escaped, capped: see
// llm.ProviderMessage), or "". It is for the user's terminal only: it
// never enters the model's context, a diagnostic or an event.
func (m *Model) ProviderMessage() string {
	m.noteMu.Lock()
	defer m.noteMu.Unlock()
	return m.note
}

// ResetProviderMessage forgets the last failed request's message: a
// caller running several turns on one model calls it before each, so a
// turn's failure is never shown with an earlier turn's provider text.
func (m *Model) ResetProviderMessage() {
	m.noteMu.Lock()
	defer m.noteMu.Unlock()
	m.note = ""
}

func (m *Model) providerError(status int, msg string) {
	m.noteMu.Lock()
	defer m.noteMu.Unlock()
	m.note = fmt.Sprintf("HTTP %d: %s", status, msg)
}

// providerCodes are the failure codes an HTTP error answer maps to
// (llm.StatusFinish): only a turn ending with one of them comes with the
// provider's own message. A turn that ended otherwise (steps exhausted, a
// stream cut) after a retried error answer does not.
var providerCodes = []llm.Code{
	llm.CodeAuth, llm.CodeInvalidRequest, llm.CodeRateLimit, llm.CodeServer,
	llm.CodeQuota, llm.CodeContextWindowExceeded,
}

// ProviderAnswered reports whether code is one an HTTP error answer maps
// to: only then does a turn's failure come with the provider's message.
func ProviderAnswered(code llm.Code) bool { return slices.Contains(providerCodes, code) }

// Options are what a spec is resolved with besides the config.
type Options struct {
	// BaseURL is the --base-url flag; a child on the same provider
	// inherits it.
	BaseURL string
	Effort  llm.Effort
	// Wire is --wire (config.WireFor); "" for the config's.
	Wire   string
	Getenv func(string) string
	// HTTP is the adapters' client; nil means a default one.
	HTTP *http.Client
	Logf func(format string, args ...any)
	// MockScript is the mock provider's script for a model name.
	MockScript func(name string) (*mock.Script, error)
}

// Resolve builds the adapter for spec (not empty: the caller picks the
// default). Every error is the config's (the caller's ConfigError).
func Resolve(cfg *config.Config, spec string, o Options) (*Model, error) {
	provider, name, err := cfg.ResolveModel(spec)
	if err == nil {
		err = available(provider)
	} else if aerr := available(strings.SplitN(spec, "/", 2)[0]); aerr != nil {
		err = aerr
	}
	if err != nil {
		return nil, err
	}
	effort := o.Effort
	name = effortModel(provider, name, effort)
	url, key, err := cfg.Endpoint(provider, o.Getenv, o.BaseURL)
	if err != nil {
		return nil, err
	}
	header, err := cfg.Headers(provider, o.Getenv)
	if err != nil {
		return nil, err
	}
	pc := cfg.Provider(provider)
	m := &Model{Provider: provider, Name: name, Retry: retry.Policy(cfg.Retry(provider)), BaseURL: o.BaseURL}
	client := llm.WithHeaders(o.HTTP, header)
	pc.Wire = cfg.WireFor(provider, url, o.Wire)
	switch pc.Wire {
	case config.WireChat:
		m.Model = &openai.Client{BaseURL: url, APIKey: key, HTTP: client, IdleTimeout: pc.IdleTimeout, ProgressTimeout: pc.ProgressTimeout, Provider: provider, Logf: o.Logf, ProviderError: m.providerError}
	case config.WireAnthropic:
		m.Model = &anthropic.Client{BaseURL: url, APIKey: key, HTTP: client, IdleTimeout: pc.IdleTimeout, ProgressTimeout: pc.ProgressTimeout, Logf: o.Logf, ProviderError: m.providerError}
	case config.WireResponses, config.WireGemini:
		m.Model = wireModel(pc, url, key, client, o.Logf, m.providerError)
	case config.WireMock:
		script, err := o.MockScript(name)
		if err != nil {
			return nil, err
		}
		// The in-process mock is the real OpenAI-wire adapter over an
		// in-memory transport to the scripted server: no port, and the same
		// classification path a real endpoint takes.
		srv := mock.NewServer(script)
		m.Model = &openai.Client{BaseURL: "http://mock.invalid", HTTP: &http.Client{Transport: srv.Transport()}, IdleTimeout: pc.IdleTimeout, ProgressTimeout: pc.ProgressTimeout, Provider: "mock", Logf: o.Logf, ProviderError: m.providerError}
	default:
		return nil, fmt.Errorf("unknown provider %q", provider)
	}
	m.Model, m.Effort = withEffort(m.Model, provider, effort), effort
	m.Model = withImages(m.Model, provider, name)
	return m, nil
}

// Placeholder is spec's model (resolved as far as the config allows) with
// an adapter that fails every request.
func Placeholder(cfg *config.Config, spec string) *Model {
	provider, name, _ := cfg.ResolveModel(spec)
	fail := llm.ModelFunc(func(context.Context, *llm.Request) iter.Seq[llm.Chunk] {
		return func(yield func(llm.Chunk) bool) {
			yield(llm.StatusFinish(http.StatusUnauthorized, nil, nil))
		}
	})
	return &Model{Model: fail, Provider: provider, Name: name}
}

// available is a clear error for a provider the catalogue knows but this
// build has no adapter for (nil for any other name: the config's own
// error says what is wrong with it).
func available(provider string) error {
	if slices.Contains(catalog.Providers, provider) && !slices.Contains(config.Providers, provider) {
		return fmt.Errorf("provider %s is not available in this build", provider)
	}
	return nil
}

// effortModel is DeepSeek's effort knob: its reasoning is a model of its
// own, so any effort turns deepseek-chat into deepseek-reasoner.
func effortModel(provider, name string, effort llm.Effort) string {
	if provider == "deepseek" && name == "deepseek-chat" && effort != "" {
		return "deepseek-reasoner"
	}
	return name
}

// withEffort makes every request through m carry effort, which the wire's
// adapter maps to its own field. DeepSeek's effort is its model choice
// (effortModel), so its requests carry none.
func withEffort(m llm.Model, provider string, effort llm.Effort) llm.Model {
	if effort == "" || provider == "deepseek" || m == nil {
		return m
	}
	return llm.ModelFunc(func(ctx context.Context, req *llm.Request) iter.Seq[llm.Chunk] {
		r := *req
		r.Effort = effort
		return m.Stream(ctx, &r)
	})
}

// withImages makes every request through m say that the model takes
// images (llm.Request.Images) when the catalogue lists it with image
// input. A model the catalogue does not know (a local server's, a new
// name) is sent the text note instead: a text-only server rejects a
// request with an image in it, while a note costs one turn's eyesight.
func withImages(m llm.Model, provider, name string) llm.Model {
	if cm, ok := catalog.Current().Lookup(provider, name); !ok || !cm.Images || m == nil {
		return m
	}
	return llm.ModelFunc(func(ctx context.Context, req *llm.Request) iter.Seq[llm.Chunk] {
		r := *req
		r.Images = true
		return m.Stream(ctx, &r)
	})
}

// wireModel builds the adapter of the Responses and Gemini wires
// (providers.<name>.wire, docs/providers.md) for one resolved endpoint.
func wireModel(pc config.ProviderConfig, url, key string, client *http.Client, logf func(string, ...any), providerError func(int, string)) llm.Model {
	if pc.Wire == config.WireGemini {
		return &gemini.Client{BaseURL: url, APIKey: key, HTTP: client, IdleTimeout: pc.IdleTimeout, ProgressTimeout: pc.ProgressTimeout, Logf: logf, ProviderError: providerError}
	}
	return &responses.Client{BaseURL: url, APIKey: key, HTTP: client, IdleTimeout: pc.IdleTimeout, ProgressTimeout: pc.ProgressTimeout, Logf: logf, ProviderError: providerError}
}
