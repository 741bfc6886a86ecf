package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestVersion: --version and -v print the line instead of running the
// command; without them the command runs (or, with nothing to run, its
// help shows); a command whose -v is taken keeps it and gets --version
// only.
func TestVersion(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		runE    bool
		takeV   bool
		want    string
		wantErr bool
	}{
		{"long", []string{"--version"}, true, false, "tool 1.2\n", false},
		{"short", []string{"-v"}, true, false, "tool 1.2\n", false},
		{"runs", nil, true, false, "ran\n", false},
		{"help without RunE", nil, false, false, "Usage:", false},
		{"-v taken", []string{"-v"}, true, true, "ran\n", false},
		{"-v taken, --version", []string{"--version"}, true, true, "tool 1.2\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out strings.Builder
			root := &cobra.Command{Use: "tool", SilenceUsage: true, SilenceErrors: true}
			root.AddCommand(&cobra.Command{Use: "sub", Run: func(*cobra.Command, []string) {}})
			if c.runE {
				root.RunE = func(cmd *cobra.Command, _ []string) error {
					_, err := cmd.OutOrStdout().Write([]byte("ran\n"))
					return err
				}
			}
			if c.takeV {
				root.Flags().BoolP("verbose", "v", false, "")
			}
			Version(root, "tool 1.2")
			root.SetOut(&out)
			root.SetArgs(c.args)
			err := root.Execute()
			if (err != nil) != c.wantErr || !strings.Contains(out.String(), c.want) {
				t.Errorf("args %q: output %q, err %v; want %q", c.args, out.String(), err, c.want)
			}
			if strings.Contains(out.String(), "version") && strings.Contains(out.String(), "tool version") {
				t.Errorf("cobra's own version line: %q", out.String())
			}
		})
	}
}
