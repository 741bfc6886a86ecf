// Package catalog is the model catalogue reins reads windows, output
// limits and prices from, and resolves short model names against: Charm's
// catwalk data (charm.land/catwalk, the catalogue crush ships), embedded
// in the binary so it works offline, or the copy `reins models --refresh`
// last fetched into $REINS_HOME/models.json. Only the providers reins
// speaks are kept: anthropic, openai, deepseek and gemini.
//
// Nothing is parsed at init: the embedded JSON is decoded the first time
// a model is looked up, so a command that never names a model (reins
// version, reins log) pays nothing for it.
package catalog

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"charm.land/catwalk/pkg/catwalk"

	"github.com/reinsdev/reins/internal/lazy"
)

// Providers are the catalogue's providers reins keeps, in the order
// SPEC §12 picks a provider from the keys that are set.
var Providers = []string{"anthropic", "openai", "deepseek", "gemini"}

// Model is one catalogue entry. A nil price is unknown (never 0).
type Model struct {
	Provider      string
	ID            string
	Name          string // the display name
	ContextWindow int
	MaxOutput     int
	Input         *float64 // USD per million tokens
	Output        *float64
	CacheRead     *float64
	CacheWrite    *float64 // nil on the wires that bill no cache writes
	CanReason     bool
	// Images says the model takes image input (catwalk's
	// supports_attachments): a tool result's image is sent to it.
	Images bool
}

// Spec is "provider/id".
func (m Model) Spec() string { return m.Provider + "/" + m.ID }

// Catalogue is a parsed catalogue: its models in the catalogue's own
// order (each provider's newest first, as catwalk keeps them) and each
// provider's recommended model.
type Catalogue struct {
	Models   []Model
	defaults map[string]string // provider → its default (large) model id
	// Source says where the data came from: "embedded (catwalk vX)" or the
	// cached file's path.
	Source string
}

// EmbeddedVersion is the catwalk release whose data is embedded.
const EmbeddedVersion = "v0.52.1"

// EmbeddedSource is the embedded catalogue's Source.
const EmbeddedSource = "embedded (catwalk " + EmbeddedVersion + ")"

//go:generate go run gen.go

// FromProviders keeps the providers reins speaks out of catwalk's list.
func FromProviders(ps []catwalk.Provider, source string) *Catalogue {
	c := &Catalogue{defaults: map[string]string{}, Source: source}
	for _, p := range ps {
		prov := string(p.ID)
		if !slices.Contains(Providers, prov) {
			continue
		}
		c.defaults[prov] = p.DefaultLargeModelID
		for _, m := range p.Models {
			if m.ID == "" {
				continue
			}
			c.Models = append(c.Models, convert(prov, m))
		}
	}
	return c
}

// convert reads catwalk's prices. catwalk's two cached prices are cache
// write ("in cached") and cache read ("out cached") for Anthropic; for the
// other providers, which bill no cache writes, entries disagree on which
// field holds the read price, so the read price is the smaller non-zero of
// the two (a cache read is never dearer than an uncached input token).
func convert(prov string, m catwalk.Model) Model {
	out := Model{Provider: prov, ID: m.ID, Name: m.Name, ContextWindow: int(m.ContextWindow), MaxOutput: int(m.DefaultMaxTokens), CanReason: m.CanReason, Images: m.SupportsImages}
	pos := func(f float64) *float64 {
		if f <= 0 {
			return nil
		}
		return &f
	}
	out.Input, out.Output = pos(m.CostPer1MIn), pos(m.CostPer1MOut)
	if m.CostPer1MIn == 0 && m.CostPer1MOut == 0 {
		out.Input, out.Output = nil, nil // unpriced, not free
	}
	if prov == "anthropic" {
		out.CacheWrite, out.CacheRead = pos(m.CostPer1MInCached), pos(m.CostPer1MOutCached)
		return out
	}
	in, o := m.CostPer1MInCached, m.CostPer1MOutCached
	switch {
	case in > 0 && (o <= 0 || in < o):
		out.CacheRead = pos(in)
	case o > 0:
		out.CacheRead = pos(o)
	}
	return out
}

// embeddedOnce builds the embedded catalogue once. It is Go code generated
// from catwalk's embedded JSON (gen.go), not the JSON parsed at run time:
// parsing catwalk's 660 KB of providers cost every `reins run` and every
// child about 2 MiB of peak RSS and 1.1 MB of allocation for the 54 models
// reins keeps (BENCHMARKS.md, "Start-up").
var embeddedOnce = lazy.Value[*Catalogue]{New: embeddedData}

// Embedded is the catalogue built into reins, made on first use.
func Embedded() *Catalogue { return embeddedOnce.Get() }

var (
	currentMu   sync.Mutex
	currentFile string
	current     *Catalogue
)

// UseCacheFile makes the catalogue Current returns the one in path (the
// copy `reins models --refresh` keeps) when it exists and parses, else the
// embedded one. The file is read lazily, on the first Current after it.
func UseCacheFile(path string) {
	currentMu.Lock()
	defer currentMu.Unlock()
	if path != currentFile {
		currentFile, current = path, nil
	}
}

// Current is the catalogue in use: the cached copy (UseCacheFile) when
// there is a good one, else the embedded one.
func Current() *Catalogue {
	currentMu.Lock()
	defer currentMu.Unlock()
	if current == nil {
		current = Embedded()
		if currentFile != "" {
			if c, err := ReadFile(currentFile); err == nil {
				current = c
			}
		}
	}
	return current
}

// ReadFile parses a catalogue file (catwalk's /v2/providers JSON).
func ReadFile(path string) (*Catalogue, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ps []catwalk.Provider
	if err := json.Unmarshal(b, &ps); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c := FromProviders(ps, path)
	if len(c.Models) == 0 {
		return nil, fmt.Errorf("%s: no models of %s", path, strings.Join(Providers, ", "))
	}
	return c, nil
}

// DefaultURL is catwalk's public service, which `reins models --refresh`
// fetches from (REINS_CATALOG_URL overrides it).
const DefaultURL = "https://catwalk.charm.sh"

// Refresh fetches the catalogue from baseURL (its /v2/providers) and, when
// it holds models reins can use, writes it to path atomically. It returns
// the new catalogue; on any error the old file stays as it was.
func Refresh(ctx context.Context, baseURL, path string) (*Catalogue, error) {
	ps, err := catwalk.NewWithURL(strings.TrimRight(cmp.Or(baseURL, DefaultURL), "/")).GetProviders(ctx, "")
	if err != nil {
		return nil, err
	}
	c := FromProviders(ps, path)
	if len(c.Models) == 0 {
		return nil, errors.New("the catalogue fetched has no models of " + strings.Join(Providers, ", "))
	}
	b, err := json.Marshal(ps)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".models-*.json")
	if err != nil {
		return nil, err
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return nil, werr
	}
	UseCacheFile("") // the next Current reads the new file
	UseCacheFile(path)
	return c, nil
}

// Lookup finds provider's model id: exactly, or as the dated release an
// undated id names (claude-sonnet-4-5 → claude-sonnet-4-5-20250929, as the
// Anthropic API itself accepts).
func (c *Catalogue) Lookup(provider, id string) (Model, bool) {
	var dated []Model
	for _, m := range c.Models {
		if m.Provider != provider {
			continue
		}
		if m.ID == id {
			return m, true
		}
		if rest, ok := strings.CutPrefix(m.ID, id+"-"); ok && isDate(rest) {
			dated = append(dated, m)
		}
	}
	if len(dated) == 1 {
		return dated[0], true
	}
	return Model{}, false
}

func isDate(s string) bool {
	if len(s) != 8 {
		return false
	}
	_, err := strconv.Atoi(s)
	return err == nil
}

// Default is provider's recommended model id ("" when the catalogue has
// none for it).
func (c *Catalogue) Default(provider string) string {
	if id := c.defaults[provider]; id != "" {
		if _, ok := c.Lookup(provider, id); ok {
			return id
		}
	}
	for _, m := range c.Models {
		if m.Provider == provider {
			return m.ID
		}
	}
	return ""
}
