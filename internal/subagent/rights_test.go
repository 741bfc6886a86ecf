package subagent

import (
	"slices"
	"testing"
)

func TestChildTools(t *testing.T) {
	for _, c := range []struct {
		name          string
		parent, agent []string
		want          []string
	}{
		{"neither has a list: every tool", nil, nil, nil},
		{"agent file names none: the parent's", []string{"read", "grep"}, nil, []string{"read", "grep"}},
		{"parent unrestricted: the agent file's", nil, []string{"read", "write"}, []string{"read", "write"}},
		{"both: the intersection, in the agent file's order", []string{"grep", "read", "subagent"}, []string{"subagent", "read", "write", "bash"}, []string{"subagent", "read"}},
		{"nothing shared: no tools, not every tool", []string{"read", "grep"}, []string{"write", "bash"}, []string{}},
		{"the agent file names none explicitly: none", []string{"read"}, []string{}, []string{}},
		{"the parent has none: none", []string{}, []string{"read"}, []string{}},
		{"the parent has none, the agent file names none: none", []string{}, nil, []string{}},
		{"duplicates collapse", []string{"read", "read"}, []string{"read", "read"}, []string{"read"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ChildTools(c.parent, c.agent)
			if !slices.Equal(got, c.want) || (got == nil) != (c.want == nil) {
				t.Errorf("ChildTools(%q, %q) = %#v, want %#v", c.parent, c.agent, got, c.want)
			}
		})
	}
}
