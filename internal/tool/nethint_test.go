package tool

import (
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/sandbox"
)

// TestNetworkHint (issue 48 item 4): the output of a command that could
// not reach the network, run with the sandbox's network off, gets one
// line naming --network on and sandbox.allowDomains (and the terminal's
// question where it asks); anything else gets none.
func TestNetworkHint(t *testing.T) {
	off := sandbox.Policy{Mode: sandbox.WorkspaceWrite, DenyNetwork: true}
	asks := off
	asks.AskSocket = "/tmp/q.sock"
	on := sandbox.Policy{Mode: sandbox.WorkspaceWrite}
	unconfined := off
	unconfined.Off = true
	for _, c := range []struct {
		name, out string
		pol       sandbox.Policy
		want      string
	}{
		{"curl", "curl: (6) Could not resolve host: example.com", off, "--network on"},
		{"apt", "Temporary failure in name resolution", off, "sandbox.allowDomains"},
		{"bash", "bash: connect: Network is unreachable", off, "--network on"},
		{"npm", "npm error getaddrinfo ENOTFOUND registry.npmjs.org", off, "--network on"},
		{"node", "Error: getaddrinfo EAI_AGAIN registry.npmjs.org", off, "--network on"},
		{"terminal", "Could not resolve host: x", asks, "when the terminal asks"},
		{"other failure", "make: *** [all] Error 1", off, ""},
		{"network on", "Could not resolve host: x", on, ""},
		{"sandbox off", "Could not resolve host: x", unconfined, ""},
	} {
		got := NetworkHint(c.pol, c.out)
		switch {
		case c.want == "" && got != "":
			t.Errorf("%s: hint %q, want none", c.name, got)
		case c.want != "" && !strings.Contains(got, c.want):
			t.Errorf("%s: hint %q lacks %q", c.name, got, c.want)
		case c.want != "" && strings.Contains(got, "\n"):
			t.Errorf("%s: hint %q is more than one line", c.name, got)
		}
	}
}

// TestBashNetworkOffHint: a real command in the real sandbox with the
// network off (its own network namespace: loopback only) fails to
// connect out, and its result says how to let it out.
func TestBashNetworkOffHint(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	env.Sandbox.DenyNetwork = true
	res := call(t, env, "bash", map[string]any{"command": "exec 3<>/dev/tcp/192.0.2.1/80"})
	if !res.IsError || !strings.Contains(res.Content, "Network is unreachable") {
		t.Fatalf("the connect did not fail as unreachable: %+v", res)
	}
	if !strings.HasSuffix(res.Content, "[exit code 1]\n[reins: the sandbox's network is off; the user can start reins with --network on or list the host in sandbox.allowDomains]") {
		t.Errorf("no hint after the status: %q", res.Content)
	}
}
