package config

import (
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
}
