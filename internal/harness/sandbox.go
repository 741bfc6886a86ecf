package harness

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/sandbox"
)

// sandboxPolicy is the base policy of every process a session starts, from
// the config's `sandbox:` and the --network flag (docs/sandbox.md).
func sandboxPolicy(cfg *config.Config, home, network string) (sandbox.Policy, error) {
	net := cfg.Sandbox.Network
	switch network {
	case "":
	case "on", "off":
		net = config.Network(network)
	default:
		return sandbox.Policy{}, fmt.Errorf("--network: want on or off, got %q", network)
	}
	env := sandbox.EnvPolicy{Pass: cfg.Sandbox.Env.Pass, Set: cfg.Sandbox.Env.Set}
	// Every provider's key variable is a secret, whatever its name.
	for _, name := range config.Providers {
		if _, keyEnv, _, _ := config.ProviderDefaults(name); keyEnv != "" {
			env.Deny = append(env.Deny, keyEnv)
		}
	}
	return sandbox.Policy{
		Off:          !cfg.Sandbox.Enabled,
		DenyNetwork:  net != config.NetworkOn,
		Writable:     cfg.Sandbox.Writable,
		Home:         home,
		Protect:      cfg.Sandbox.Protect,
		Readable:     cfg.Sandbox.Readable,
		Env:          env,
		AllowDomains: cfg.Sandbox.AllowDomains,
	}, nil
}

var weakNotice sync.Once

// SandboxNotice writes, once per process, what the sandbox cannot enforce
// on this machine (no unprivileged user namespaces: Landlock only), so the
// user is told once and `reins doctor` says the rest.
func (h *Harness) SandboxNotice(w io.Writer) {
	if h.Sandbox.Off {
		return
	}
	if r := sandbox.Doctor(); !r.Namespaces {
		weakNotice.Do(func() {
			fmt.Fprintln(w, "reins: sandbox: "+r.Weaker()+" (reins doctor)")
		})
	}
}

// redactor knows the secrets of this process: the values of its secret
// environment variables (sandbox.Secret, and every provider's key
// variable) and the keys the config holds (providers.*.apiKey).
func (h *Harness) redactor() sandbox.Redactor {
	h.redactOnce.Do(func() {
		vals := sandbox.SecretValues(os.Environ(), h.Sandbox.Env.Deny)
		for _, name := range config.Providers {
			if k := h.Config.Provider(name).APIKey; k != "" {
				vals = append(vals, k)
			}
			if _, env, _, _ := config.ProviderDefaults(name); env != "" && h.Getenv != nil {
				vals = append(vals, h.Getenv(env))
			}
		}
		h.redact = sandbox.NewRedactor(vals)
	})
	return h.redact
}

// sessionSandbox is the policy of the processes s's tools start: the
// harness's, and, when o can ask the user (AskDomain) and the processes
// reach the network through the domain proxy (network off, allowDomains
// set), the question socket that lets the proxy ask "allow HOST for this
// session?" instead of refusing (issue 26 item 3). The answers live in the
// session's memory only; the socket closes with the session.
func (h *Harness) sessionSandbox(s *Session, o SessionOptions) sandbox.Policy {
	p := h.Sandbox
	if o.AskDomain == nil || p.Off || !p.DenyNetwork || len(p.AllowDomains) == 0 {
		return p
	}
	qs, err := sandbox.NewQuestions(o.AskDomain)
	if err != nil {
		// A socket that cannot be made (a TMPDIR too long for a socket
		// path) leaves the proxy refusing at once, as outside the
		// terminal: the question is a convenience, not a wall.
		h.Logf("sandbox: no domain questions this session (hosts outside allowDomains are refused): %v", err)
		return p
	}
	s.questions = qs
	p.AskSocket = qs.Socket
	return p
}
