package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCanaryOnlyInHostLog(t *testing.T) {
	const canary = "CANARY-testutil"
	tests := []struct {
		name  string
		files map[string]string // path under home → content
		want  []string          // substrings of the reported errors, in order
	}{
		{"only in the host log", map[string]string{"logs/reins.log": "x " + canary, "sessions/s/session.jsonl": "{}"}, nil},
		{"also in a session log", map[string]string{"logs/reins.log": canary, "sessions/s/session.jsonl": canary},
			[]string{filepath.Join("sessions", "s", "session.jsonl")}},
		{"nowhere", map[string]string{"sessions/s/session.jsonl": "{}"}, []string{"not in the host log"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			for p, body := range tt.files {
				full := filepath.Join(home, p)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f := &fakeTB{name: t.Name()}
			CanaryOnlyInHostLog(f, home, canary)
			if len(f.errors) != len(tt.want) {
				t.Fatalf("errors %q, want %d", f.errors, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(f.errors[i], w) {
					t.Errorf("error %q lacks %q", f.errors[i], w)
				}
			}
		})
	}
}
