package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/sandbox"
)

// TestWritableCannotOpenHome: an agent file's sandbox.writable may name a
// CLI's state directory, never "/" or a directory holding reins's home
// (whose trusted-folder list a child could otherwise rewrite).
func TestWritableCannotOpenHome(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "reins-home")
	if err := os.Symlink(base, filepath.Join(base, "link-to-base")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		writable string
		ok       bool
	}{
		{filepath.Join(base, "state"), true},
		{filepath.Join(home, "sessions") + "x", true},
		{"/", false},
		{base, false},
		{home, false},
		{filepath.Join(base, "link-to-base"), false}, // a symlink to a folder holding the home
	} {
		os.RemoveAll(home)
		agent := "---\nname: a\nprovider: acp\ncommand: x\nsandbox: {writable: [" + c.writable + "]}\n---\n"
		if err := os.MkdirAll(filepath.Join(home, "agents"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, "agents", "a.md"), []byte(agent), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := New(Options{Home: home, Cwd: t.TempDir(), Getenv: func(string) string { return "" }})
		if (err == nil) != c.ok {
			t.Errorf("writable %s: err %v, want ok=%v", c.writable, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "sandbox.writable") {
			t.Errorf("writable %s: error %q does not name the key", c.writable, err)
		}
	}
}

// TestConfigWritableReachesTools: the user's sandbox.writable reaches the
// policy of every process a session starts; one that would open reins's
// home is refused.
func TestConfigWritableReachesTools(t *testing.T) {
	home, cache := t.TempDir(), t.TempDir()
	write := func(body string) {
		if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sandbox: {writable: [" + cache + "], network: false}\n")
	h, err := New(Options{Home: home, Cwd: t.TempDir(), Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if got := h.Sandbox; len(got.Writable) != 1 || got.Writable[0] != cache || !got.DenyNetwork || got.Off {
		t.Errorf("base policy %+v", got)
	}
	write("sandbox: {writable: [" + filepath.Dir(home) + "]}\n")
	if _, err := New(Options{Home: home, Cwd: t.TempDir(), Getenv: func(string) string { return "" }}); err == nil || !strings.Contains(err.Error(), "sandbox.writable") {
		t.Errorf("writable over reins's home: err %v", err)
	}
}

// TestSandboxPolicyFromConfig: sandbox.network (default off), --network,
// allowDomains, env, protect and readable reach the base policy; the
// provider key variables are denied by name.
func TestSandboxPolicyFromConfig(t *testing.T) {
	home := t.TempDir()
	mk := func(body, network string) *Harness {
		t.Helper()
		if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		h, err := New(Options{Home: home, Cwd: t.TempDir(), Getenv: func(string) string { return "" }, Network: network})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		return h
	}
	if h := mk("", ""); !h.Sandbox.DenyNetwork || h.Sandbox.Home != home {
		t.Errorf("default: %+v", h.Sandbox)
	}
	if h := mk("", "on"); h.Sandbox.DenyNetwork {
		t.Errorf("--network on: %+v", h.Sandbox)
	}
	if h := mk("sandbox: {network: on}\n", "off"); !h.Sandbox.DenyNetwork {
		t.Errorf("--network off over config on: %+v", h.Sandbox)
	}
	h := mk("sandbox: {allowDomains: [proxy.golang.org], env: {pass: [GH_TOKEN], set: {CI: '1'}}, protect: [deploy], readable: [~/.npmrc]}\n", "")
	p := h.Sandbox
	if len(p.AllowDomains) != 1 || len(p.Env.Pass) != 1 || p.Env.Set["CI"] != "1" || len(p.Protect) != 1 || len(p.Readable) != 1 {
		t.Errorf("policy %+v", p)
	}
	for _, k := range []string{"DEEPSEEK_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"} {
		if !strings.Contains(strings.Join(p.Env.Deny, ","), k) {
			t.Errorf("%s is not denied: %v", k, p.Env.Deny)
		}
	}
}

// TestSandboxNoticeWaitsForAProcess: the sandbox notice probes the machine
// only when the first confined process starts (a run that starts none
// never pays the probe's process start), and says it once.
func TestSandboxNoticeWaitsForAProcess(t *testing.T) {
	h, err := New(Options{Home: t.TempDir(), Cwd: t.TempDir(), Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	probes := 0
	h.doctor = func() sandbox.Report { probes++; return sandbox.Report{NamespaceErr: "refused"} }
	var out strings.Builder
	h.SandboxNotice(&out)
	if probes != 0 || out.Len() != 0 {
		t.Fatalf("before any process: %d probes, notice %q", probes, out.String())
	}
	pol := h.Sandbox
	pol.Mode = sandbox.WorkspaceWrite
	for range 2 {
		if _, _, err := sandbox.Argv(pol, "true"); err != nil {
			t.Fatal(err)
		}
	}
	if probes != 1 || strings.Count(out.String(), "reins: sandbox: no unprivileged user namespaces") != 1 {
		t.Fatalf("after two processes: %d probes, notice %q", probes, out.String())
	}
}

// TestSandboxNoticeNow: the interactive screen's notice is said before
// any process (its terminal is the screen's afterwards), once; with the
// sandbox off, nothing is probed.
func TestSandboxNoticeNow(t *testing.T) {
	for _, off := range []bool{false, true} {
		h, err := New(Options{Home: t.TempDir(), Cwd: t.TempDir(), Getenv: func(string) string { return "" }})
		if err != nil {
			t.Fatal(err)
		}
		h.Sandbox.Off = off
		probes := 0
		h.doctor = func() sandbox.Report { probes++; return sandbox.Report{NamespaceErr: "refused"} }
		var out strings.Builder
		h.SandboxNoticeNow(&out)
		pol := h.Sandbox
		pol.Mode = sandbox.WorkspaceWrite
		if _, _, err := sandbox.Argv(pol, "true"); err != nil {
			t.Fatal(err)
		}
		want := 1
		if off {
			want = 0
		}
		if probes != want || strings.Count(out.String(), "reins: sandbox: ") != want {
			t.Errorf("off=%v: %d probes, notice %q; want %d", off, probes, out.String(), want)
		}
		h.Close()
	}
}

// TestSandboxPolicyLimits: config's sandbox.limits reach every confined
// process's policy, a project's only lowering the user's (and the
// defaults).
func TestSandboxPolicyLimits(t *testing.T) {
	for _, c := range []struct {
		user, cap config.Limits
		want      sandbox.Limits
	}{
		{config.Limits{}, config.Limits{}, sandbox.Limits{}},
		{config.Limits{Tmp: 1 << 30, Pids: 2000}, config.Limits{}, sandbox.Limits{Tmp: 1 << 30, Pids: 2000}},
		{config.Limits{Tmp: 1 << 30, Pids: 2000}, config.Limits{Tmp: 8 << 30, Pids: 100, Memory: 1 << 30}, sandbox.Limits{Tmp: 1 << 30, Pids: 100, Memory: 1 << 30}},
		{config.Limits{}, config.Limits{Tmp: 8 << 30, Pids: 5000}, sandbox.Limits{}},
	} {
		cfg := &config.Config{Sandbox: config.Sandbox{Enabled: true, Limits: c.user, LimitsCap: c.cap}}
		p, err := sandboxPolicy(cfg, t.TempDir(), "")
		if err != nil {
			t.Fatal(err)
		}
		if p.Limits != c.want {
			t.Errorf("user %+v, project %+v: %+v, want %+v", c.user, c.cap, p.Limits, c.want)
		}
	}
}
