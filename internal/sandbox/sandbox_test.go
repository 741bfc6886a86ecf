//go:build linux

package sandbox

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckOnOlderKernels: where Landlock lacks a feature the policy
// needs, starting a confined process is refused with an error naming the
// feature; an unconfined policy (full-access, or the sandbox turned off)
// starts anyway.
func TestCheckOnOlderKernels(t *testing.T) {
	cases := []struct {
		abi     int
		policy  Policy
		feature string // "" means allowed
	}{
		{0, Policy{Mode: WorkspaceWrite}, "Landlock ABI 3"},
		{2, Policy{Mode: ReadOnly}, "Landlock ABI 3"},
		{3, Policy{Mode: ReadOnly}, ""},
		{3, Policy{Mode: WorkspaceWrite, DenyNetwork: true}, "Landlock ABI 4"},
		{4, Policy{Mode: WorkspaceWrite, DenyNetwork: true}, ""},
		{0, Policy{Mode: FullAccess}, ""},
		{0, Policy{Mode: WorkspaceWrite, Off: true}, ""},
		{7, Policy{Mode: "bogus"}, "unknown permission mode"},
		{7, Policy{}, "unknown permission mode"},
	}
	defer func(old func() int) { abi = old }(abi)
	for _, c := range cases {
		abi = func() int { return c.abi }
		err := Check(c.policy)
		if c.feature == "" {
			if err != nil {
				t.Errorf("abi %d %+v: %v, want allowed", c.abi, c.policy, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.feature) {
			t.Errorf("abi %d %+v: %v, want an error naming %q", c.abi, c.policy, err, c.feature)
		}
		var ue *UnavailableError
		if strings.HasPrefix(c.feature, "Landlock") && (!errors.As(err, &ue) || !strings.Contains(err.Error(), "--sandbox=off")) {
			t.Errorf("abi %d: %v is not an *UnavailableError telling how to turn the sandbox off", c.abi, err)
		}
	}
}

func TestNarrow(t *testing.T) {
	for _, c := range []struct{ have, parent, want Mode }{
		{FullAccess, ReadOnly, ReadOnly},
		{ReadOnly, FullAccess, ReadOnly},
		{WorkspaceWrite, WorkspaceWrite, WorkspaceWrite},
		{FullAccess, "", ""}, // an unknown parent mode fails closed
	} {
		if got := (Policy{Mode: c.have}).Narrow(c.parent).Mode; got != c.want {
			t.Errorf("Narrow(%s, %s) = %q, want %q", c.have, c.parent, got, c.want)
		}
	}
}

// TestPlanScopesSockets: the Landlock plan scopes signals and abstract
// sockets from ABI 6 and pathname sockets (connect, sendmsg) from ABI 9;
// this machine's kernel may lack ABI 9, so the plan is checked here and
// the ABI 9 rule itself runs where the kernel has it (TestAttackSocketAnywhere
// with the mount wall off: REINS_TEST_MUTATE=sockets).
func TestPlanScopesSockets(t *testing.T) {
	defer func(old func() int) { abi = old }(abi)
	for _, c := range []struct {
		abi                 int
		scoped, resolveUnix bool
	}{{5, false, false}, {6, true, false}, {8, true, false}, {9, true, true}} {
		abi = func() int { return c.abi }
		cfg, err := plan(Policy{Mode: WorkspaceWrite})
		if err != nil {
			t.Fatalf("abi %d: %v", c.abi, err)
		}
		s := cfg.String()
		if got := strings.Contains(s, "Scoped: all"); got != c.scoped {
			t.Errorf("abi %d: scoped %v, want %v (%s)", c.abi, got, c.scoped, s)
		}
		if got := strings.Contains(s, "resolve_unix"); got != c.resolveUnix {
			t.Errorf("abi %d: resolve_unix %v, want %v (%s)", c.abi, got, c.resolveUnix, s)
		}
	}
}

// TestArgvCallsStarting: Argv calls the policy's Starting hook before a
// confined process only; an unconfined one, or a start refused by Check,
// never calls it.
func TestArgvCallsStarting(t *testing.T) {
	cases := []struct {
		name   string
		policy Policy
		prog   string
		calls  int
	}{
		{"workspace-write", Policy{Mode: WorkspaceWrite}, "true", 1},
		{"read-only", Policy{Mode: ReadOnly}, "true", 1},
		{"full-access", Policy{Mode: FullAccess}, "true", 0},
		{"off", Policy{Mode: WorkspaceWrite, Off: true}, "true", 0},
		{"refused", Policy{Mode: "bogus"}, "true", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			c.policy.Starting = func() { calls++ }
			Argv(c.policy, c.prog)
			if calls != c.calls {
				t.Errorf("Starting called %d times, want %d", calls, c.calls)
			}
		})
	}
}

// TestLimitsWithin: a project's sandbox.limits lower the user's limits
// and the defaults, never raise them.
func TestLimitsWithin(t *testing.T) {
	for _, c := range []struct {
		l, cap, want Limits
	}{
		{Limits{}, Limits{}, Limits{}},
		{Limits{}, Limits{Tmp: 64 << 20, Pids: 10, Memory: 1 << 30}, Limits{Tmp: 64 << 20, Pids: 10, Memory: 1 << 30}},
		{Limits{}, Limits{Tmp: 8 << 30, Pids: 5000}, Limits{}},
		{Limits{Tmp: 2 << 30, Pids: 2000, Memory: 4 << 30}, Limits{Tmp: 1 << 30, Pids: 3000, Memory: 8 << 30}, Limits{Tmp: 1 << 30, Pids: 2000, Memory: 4 << 30}},
	} {
		if got := c.l.Within(c.cap); got != c.want {
			t.Errorf("%+v.Within(%+v) = %+v, want %+v", c.l, c.cap, got, c.want)
		}
	}
	if (Limits{}).TmpSize() != 512<<20 || (Limits{}).MaxPids() != 512 {
		t.Errorf("defaults: %d, %d", Limits{}.TmpSize(), Limits{}.MaxPids())
	}
}
