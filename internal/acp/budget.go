package acp

import (
	"bytes"
	"encoding/json"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/config"
)

// metaLimits are the session settings an editor may send in session/new's
// _meta: {"reins": {"budget": {"tokens": N, "usd": X, "time": "10m"}}}.
type metaLimits struct {
	Tokens int     `json:"tokens"`
	USD    float64 `json:"usd"`
	Time   string  `json:"time"`
}

// over is m over the config's budget, field by field.
func (m metaLimits) over(cfg config.Budget) budget.Limits {
	l := budget.Limits(cfg)
	if m.Tokens > 0 {
		l.Tokens = m.Tokens
	}
	if m.USD > 0 {
		l.USD = m.USD
	}
	if d, err := time.ParseDuration(m.Time); err == nil && d > 0 {
		l.Time = d
	}
	return l
}

// metaBudget reads _meta.reins.budget; a malformed one is an invalid
// request naming the field, never silently ignored.
func metaBudget(meta map[string]any) (metaLimits, error) {
	var m metaLimits
	reins, ok := meta["reins"].(map[string]any)
	if !ok {
		return m, nil
	}
	raw, ok := reins["budget"]
	if !ok {
		return m, nil
	}
	data, err := json.Marshal(raw)
	bad := sdk.NewInvalidParams(map[string]any{"error": `_meta.reins.budget: want {"tokens": N, "usd": X, "time": "10m"} with values > 0`})
	if err != nil {
		return m, bad
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if dec.Decode(&m) != nil || m.Tokens < 0 || m.USD < 0 {
		return metaLimits{}, bad
	}
	if m.Time != "" {
		if d, err := time.ParseDuration(m.Time); err != nil || d <= 0 {
			return metaLimits{}, bad
		}
	}
	return m, nil
}
