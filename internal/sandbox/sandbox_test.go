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
