package config

import (
	"math"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// Network is config and agent-file `sandbox.network` (SPEC §12).
type Network string

const (
	// NetworkOff: confined processes have no network (the default in
	// read-only and workspace-write).
	NetworkOff Network = "off"
	// NetworkOn: confined processes share the host's network.
	NetworkOn Network = "on"
)

// GitAccess is config `sandbox.git` (SPEC §13): whether confined
// processes may write repository control folders.
type GitAccess string

const (
	// GitReadOnly: every .git is read-only to confined processes (the
	// default).
	GitReadOnly GitAccess = "read-only"
	// GitWritable: .git is writable (only hooks and config stay
	// protected): a confined process can plant a commondir or config that
	// the user's next git runs (docs/sandbox.md).
	GitWritable GitAccess = "writable"
)

// SandboxEnv is config `sandbox.env`: the variables let through the
// scrubbing on purpose, and the ones set for every confined process.
type SandboxEnv struct {
	Pass []string
	Set  map[string]string
}

// network decodes off|on, and the older true|false (true is on).
func (d *decoder) network(n ast.Node, key string) (*Network, error) {
	n = d.resolve(n)
	if isNull(n) {
		return nil, nil
	}
	if b, ok := n.(*ast.BoolNode); ok {
		v := NetworkOff
		if b.Value {
			v = NetworkOn
		}
		return &v, nil
	}
	s, ok := d.scalarText(n)
	if !ok || (s != string(NetworkOff) && s != string(NetworkOn)) {
		return nil, d.valueErr(n, key, "off or on")
	}
	v := Network(s)
	return &v, nil
}

// sandboxLayer is what one layer says under `sandbox:` besides enabled and
// writable (config.go keeps those).
type sandboxLayer struct {
	network      *Network
	allowDomains []string
	envPass      []string
	envSet       map[string]string
	protect      []string
	readable     []string
	git          *GitAccess
	limits       Limits
	limitsUser   bool // limits come from the user's own config or --config
}

// Limits is config `sandbox.limits` (SPEC §13): the size of the private
// tmpfs in bytes, the process cap, the memory cap in bytes; 0 is unset
// (internal/sandbox holds the defaults: 512 MiB, 512 processes, memory
// unbounded).
type Limits struct {
	Tmp    int64
	Pids   int
	Memory int64
}

// tighter is l with each field of o that is set and lower than l's (or
// l's unset) taken.
func (l Limits) tighter(o Limits) Limits {
	low := func(a, b int64) int64 {
		if b > 0 && (a == 0 || b < a) {
			return b
		}
		return a
	}
	l.Tmp, l.Memory = low(l.Tmp, o.Tmp), low(l.Memory, o.Memory)
	l.Pids = int(low(int64(l.Pids), int64(o.Pids)))
	return l
}

// ParseSize reads a size as config writes it: bytes (1048576), or a
// number with a binary unit K, M, G, T (also KiB, MiB, GiB, TiB) or a
// decimal one KB, MB, GB, TB. ok is false for anything else, a size
// below one byte, or one beyond int64.
func ParseSize(s string) (n int64, ok bool) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := s, ""
	if i >= 0 {
		num, unit = s[:i], strings.TrimSpace(s[i:])
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return 0, false
	}
	mult := map[string]float64{"": 1, "B": 1,
		"K": 1 << 10, "KiB": 1 << 10, "M": 1 << 20, "MiB": 1 << 20, "G": 1 << 30, "GiB": 1 << 30, "T": 1 << 40, "TiB": 1 << 40,
		"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}[unit]
	if mult == 0 {
		return 0, false
	}
	v := f * mult
	if v < 1 || v >= math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// size decodes a SIZE (ParseSize).
func (d *decoder) size(n ast.Node, key string) (int64, error) {
	n = d.resolve(n)
	if isNull(n) {
		return 0, nil
	}
	s, ok := d.scalarText(n)
	if !ok {
		return 0, d.valueErr(n, key, "a size such as 512MiB")
	}
	v, ok := ParseSize(s)
	if !ok {
		return 0, d.valueErr(n, key, "a size such as 512MiB or 2G")
	}
	return v, nil
}

// sandboxKey decodes one of the sandbox keys this file owns; widen reports
// a key that only the user's own config may set (a repository may tighten
// the sandbox, never loosen it). handled is false for a key it does not own.
func (d *decoder) sandboxKey(s *sandboxLayer, k string, v ast.Node, kp string, userLayer bool) (handled bool, err error) {
	widen := func(what string) error {
		if userLayer {
			return nil
		}
		return d.valueErr(d.resolve(v), kp, what+" (only your own config or --config may widen the sandbox)")
	}
	switch k {
	case "network":
		s.network, err = d.network(v, kp)
		if err == nil && s.network != nil && *s.network == NetworkOn {
			err = widen("off")
		}
	case "allowDomains":
		var l *[]string
		if l, err = d.strList(v, kp); err == nil && l != nil && len(*l) > 0 {
			if err = widen("nothing here"); err == nil {
				s.allowDomains = *l
			}
		}
	case "env":
		err = d.fields(v, kp, []string{"pass", "set"}, func(k string, v ast.Node, kp string) error {
			switch k {
			case "pass":
				l, err := d.strList(v, kp)
				if err == nil && l != nil && len(*l) > 0 {
					if err = widen("nothing here"); err == nil {
						s.envPass = *l
					}
				}
				return err
			case "set":
				m, err := d.strMap(v, kp)
				if err == nil && len(m) > 0 {
					if err = widen("nothing here"); err == nil {
						s.envSet = m
					}
				}
				return err
			}
			return nil
		})
	case "protect":
		var l *[]string
		if l, err = d.strList(v, kp); err == nil && l != nil {
			s.protect = *l
		}
	case "git":
		var t *string
		if t, err = d.str(v, kp); err == nil && t != nil {
			switch GitAccess(*t) {
			case GitReadOnly, GitWritable:
				g := GitAccess(*t)
				s.git = &g
				if g == GitWritable {
					err = widen(string(GitReadOnly))
				}
			default:
				err = d.valueErr(d.resolve(v), kp, "read-only or writable")
			}
		}
	case "readable":
		if s.readable, err = d.writable(v, kp); err == nil && len(s.readable) > 0 {
			err = widen("nothing here")
		}
	case "limits":
		// Any layer may set them; a project's only lower them (apply).
		s.limitsUser = userLayer
		err = d.fields(v, kp, []string{"tmp", "pids", "memory"}, func(k string, v ast.Node, kp string) error {
			var err error
			switch k {
			case "tmp":
				s.limits.Tmp, err = d.size(v, kp)
			case "memory":
				s.limits.Memory, err = d.size(v, kp)
			case "pids":
				var i *int
				if i, err = positive(d, v, kp); err == nil && i != nil {
					s.limits.Pids = *i
				}
			}
			return err
		})
	default:
		return false, nil
	}
	return true, err
}

// apply merges the layer into c (later layers win for network; lists add).
func (s *sandboxLayer) apply(c *Sandbox) {
	if s.network != nil {
		c.Network = *s.network
	}
	c.AllowDomains = append(c.AllowDomains, s.allowDomains...)
	c.Env.Pass = append(c.Env.Pass, s.envPass...)
	for k, v := range s.envSet {
		if c.Env.Set == nil {
			c.Env.Set = map[string]string{}
		}
		c.Env.Set[k] = v
	}
	c.Protect = append(c.Protect, s.protect...)
	if s.git != nil {
		c.Git = *s.git
	}
	c.Readable = append(c.Readable, s.readable...)
	// The user's limits are the limits; a repository's only tighten them
	// (never above the user's, nor above the defaults where the user set
	// none: LimitsCap).
	if s.limitsUser {
		c.Limits = c.Limits.over(s.limits)
	} else {
		c.LimitsCap = c.LimitsCap.tighter(s.limits)
	}
}

// over is l with the fields o sets.
func (l Limits) over(o Limits) Limits {
	if o.Tmp > 0 {
		l.Tmp = o.Tmp
	}
	if o.Pids > 0 {
		l.Pids = o.Pids
	}
	if o.Memory > 0 {
		l.Memory = o.Memory
	}
	return l
}
