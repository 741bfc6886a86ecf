package config

import (
	"time"

	"github.com/goccy/go-yaml/ast"
)

// DefaultStallTimeout is how long a running child may send nothing before
// it is stopped as stalled, when subagents.stallTimeout is unset.
const DefaultStallTimeout = 5 * time.Minute

// Budget is a spending limit over a delegation tree (`budget: {tokens,
// usd, time}`, in config and in agent files; internal/budget enforces
// it). A zero field is no cap.
type Budget struct {
	Tokens int
	USD    float64
	Time   time.Duration
}

// budget decodes `budget: {tokens, usd, time}` over b: the fields the
// node sets replace b's. One decoder for config and agent files.
func (d *decoder) budget(n ast.Node, path string, b *Budget) error {
	return d.fields(n, path, []string{"tokens", "usd", "time"}, func(k string, v ast.Node, kp string) error {
		switch k {
		case "tokens":
			i, err := positive(d, v, kp)
			if i != nil {
				b.Tokens = *i
			}
			return err
		case "usd":
			f, err := d.number(v, kp)
			if err == nil && f != nil && *f <= 0 {
				return d.valueErr(d.resolve(v), kp, "a number of dollars > 0 such as 0.50")
			}
			if f != nil {
				b.USD = *f
			}
			return err
		case "time":
			t, err := d.duration(v, kp)
			if err == nil && t != nil && *t <= 0 {
				return d.valueErr(d.resolve(v), kp, "a duration > 0 such as 30m")
			}
			if t != nil {
				b.Time = *t
			}
			return err
		}
		return nil
	})
}
