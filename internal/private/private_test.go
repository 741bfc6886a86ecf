package private

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func mode(t *testing.T, p string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// TestTighten: folders made or found, and open files, end with no group or
// other bit; a tighter mode is left alone; the user's home folder named as
// REINS_HOME is never changed.
func TestTighten(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, base string) string // returns the path to act on
		act   func(p string) error
		want  fs.FileMode
	}{
		{"MkdirAll makes new folders private", func(t *testing.T, base string) string {
			return filepath.Join(base, "a", "b")
		}, MkdirAll, 0o700},
		{"MkdirAll tightens an existing folder", func(t *testing.T, base string) string {
			p := filepath.Join(base, "old")
			os.Mkdir(p, 0o755)
			os.Chmod(p, 0o777)
			return p
		}, MkdirAll, 0o700},
		{"Mkdir tightens an existing folder", func(t *testing.T, base string) string {
			p := filepath.Join(base, "old")
			os.Mkdir(p, 0o755)
			os.Chmod(p, 0o755)
			return p
		}, Mkdir, 0o700},
		{"a tighter folder stays", func(t *testing.T, base string) string {
			p := filepath.Join(base, "tight")
			os.Mkdir(p, 0o500)
			return p
		}, Dir, 0o500},
		{"Home tightens", func(t *testing.T, base string) string {
			p := filepath.Join(base, ".reins")
			os.Mkdir(p, 0o755)
			os.Chmod(p, 0o755)
			return p
		}, Home, 0o700},
		{"Home through a symlink tightens its target", func(t *testing.T, base string) string {
			p := filepath.Join(base, "real")
			os.Mkdir(p, 0o755)
			os.Chmod(p, 0o755)
			os.Symlink(p, filepath.Join(base, "link"))
			return filepath.Join(base, "link")
		}, Home, 0o700},
		{"File tightens an open 0666 file", func(t *testing.T, base string) string {
			p := filepath.Join(base, "log")
			os.WriteFile(p, nil, 0o644)
			os.Chmod(p, 0o666)
			return p
		}, func(p string) error {
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			return File(f)
		}, 0o600},
		{"File keeps a 0400 file", func(t *testing.T, base string) string {
			p := filepath.Join(base, "log")
			os.WriteFile(p, nil, 0o400)
			return p
		}, func(p string) error {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return File(f)
		}, 0o400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.setup(t, t.TempDir())
			if err := tc.act(p); err != nil {
				t.Fatal(err)
			}
			if got := mode(t, p); got != tc.want {
				t.Errorf("mode %o, want %o", got, tc.want)
			}
		})
	}
}

// TestHomeLeavesTheUsersHome: REINS_HOME=$HOME does not make the user's
// home folder 0700.
func TestHomeLeavesTheUsersHome(t *testing.T) {
	home := t.TempDir()
	os.Chmod(home, 0o755)
	t.Setenv("HOME", home)
	if err := Home(home); err != nil {
		t.Fatal(err)
	}
	if got := mode(t, home); got != 0o755 {
		t.Errorf("the user's home became %o", got)
	}
}
