package harness

import (
	"fmt"
	"io"
	"os"

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
	// Every provider's key variable is a secret, whatever its name (a
	// preset's, or the one a provider of the user's own names in
	// apiKeyEnv), and so is every variable a provider's headers send.
	env.Deny = append(env.Deny, cfg.SecretVars()...)
	return sandbox.Policy{
		Off:          !cfg.Sandbox.Enabled,
		DenyNetwork:  net != config.NetworkOn,
		Writable:     cfg.Sandbox.Writable,
		Home:         home,
		Protect:      cfg.Sandbox.Protect,
		GitWritable:  cfg.Sandbox.Git == config.GitWritable,
		Readable:     cfg.Sandbox.Readable,
		Env:          env,
		AllowDomains: cfg.Sandbox.AllowDomains,
		Limits:       limits(cfg.Sandbox.Limits).Within(limits(cfg.Sandbox.LimitsCap)),
	}, nil
}

// limits is config's sandbox.limits as the sandbox's.
func limits(l config.Limits) sandbox.Limits {
	return sandbox.Limits{Tmp: l.Tmp, Pids: l.Pids, Memory: l.Memory}
}

// SandboxNotice sends to w what the sandbox cannot enforce on this machine
// (no unprivileged user namespaces: Landlock only), once, before the first
// confined process starts, so the user is told once and `reins doctor` says
// the rest. Knowing costs a process start (sandbox.Doctor's probe), which a
// run that starts no process does not pay: the two-step task's wall time
// fell by a quarter (BENCHMARKS.md).
func (h *Harness) SandboxNotice(w io.Writer) {
	h.noticeMu.Lock()
	h.noticeTo = w
	h.noticeMu.Unlock()
}

// SandboxNoticeNow is SandboxNotice said at once, unless the sandbox is
// off: the interactive screen's, whose terminal a line written later
// would break. It costs the probe's process start.
func (h *Harness) SandboxNoticeNow(w io.Writer) {
	h.SandboxNotice(w)
	if !h.Sandbox.Off {
		h.sandboxStarting()
	}
}

// sandboxStarting is the policy's Starting hook (sandbox.Policy).
func (h *Harness) sandboxStarting() {
	h.noticeMu.Lock()
	w := h.noticeTo
	h.noticeMu.Unlock()
	if w == nil {
		return
	}
	h.noticeOnce.Do(func() {
		doctor := h.doctor
		if doctor == nil {
			doctor = sandbox.Doctor
		}
		if r := doctor(); !r.Namespaces {
			fmt.Fprintln(w, "reins: sandbox: "+r.Weaker()+" (reins doctor)")
		}
	})
}

// redactor knows the secrets of this process: the values of its secret
// environment variables (sandbox.Secret, and every provider's key
// variable) and the keys the config holds (providers.*.apiKey).
func (h *Harness) redactor() sandbox.Redactor {
	h.redactOnce.Do(func() {
		vals := sandbox.SecretValues(os.Environ(), h.Sandbox.Env.Deny)
		for _, name := range h.Config.ProviderNames() {
			if k := h.Config.Provider(name).APIKey; k != "" {
				vals = append(vals, k)
			}
			if h.Getenv == nil {
				continue
			}
			// A header's value may be a token written in the config.
			if hdr, err := h.Config.Headers(name, h.Getenv); err == nil {
				for _, v := range hdr {
					vals = append(vals, v...)
				}
			}
		}
		if h.Getenv != nil {
			for _, env := range h.Config.SecretVars() {
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
