package trust

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// tree makes dirs under a fresh temporary root and returns the root,
// canonical (t.TempDir may itself sit behind a symbolic link).
func tree(t *testing.T, dirs ...string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestWithin(t *testing.T) {
	tests := []struct {
		path, root string
		want       bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b/c", "/a/b", true},
		{"/a/b/c/d", "/a/b", true},
		{"/a/bc", "/a/b", false},
		{"/a/b.c", "/a/b", false},
		{"/a", "/a/b", false},
		{"/x/a/b", "/a/b", false},
		{"/anything", "/", true},
		{"/", "/", true},
	}
	for _, tc := range tests {
		if got := within(tc.path, tc.root); got != tc.want {
			t.Errorf("within(%q, %q) = %v, want %v", tc.path, tc.root, got, tc.want)
		}
	}
}

func TestTrustCoversFolderAndBelowOnly(t *testing.T) {
	root := tree(t, "a/b/c", "a/bc", "a/b.x", "other")
	s := New(filepath.Join(root, "home"))
	ctx := context.Background()
	got, err := s.Trust(ctx, filepath.Join(root, "a", "b", ".", "c", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "a", "b"); got != want {
		t.Errorf("Trust returned %q, want the canonical %q", got, want)
	}
	for dir, want := range map[string]bool{
		"a/b": true, "a/b/c": true,
		"a": false, "a/bc": false, "a/b.x": false, "other": false,
	} {
		ok, err := s.Trusted(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		if ok != want {
			t.Errorf("Trusted(%s) = %v, want %v", dir, ok, want)
		}
	}
}

// A symbolic link is judged by where it leads: a link inside a trusted
// folder that points outside it is not trusted, and a link outside that
// points inside is.
func TestTrustFollowsSymlinks(t *testing.T) {
	root := tree(t, "trusted/sub", "evil")
	s := New(filepath.Join(root, "home"))
	if _, err := s.Trust(context.Background(), filepath.Join(root, "trusted")); err != nil {
		t.Fatal(err)
	}
	os.Symlink(filepath.Join(root, "evil"), filepath.Join(root, "trusted", "out"))
	os.Symlink(filepath.Join(root, "trusted", "sub"), filepath.Join(root, "in"))
	for dir, want := range map[string]bool{"trusted/out": false, "in": true} {
		ok, err := s.Trusted(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		if ok != want {
			t.Errorf("Trusted(%s) = %v, want %v", dir, ok, want)
		}
	}
	// Trusting through a link trusts the target, not the link's folder.
	s2 := New(filepath.Join(root, "home2"))
	got, err := s2.Trust(context.Background(), filepath.Join(root, "trusted", "out"))
	if err != nil {
		t.Fatal(err)
	}
	if got != filepath.Join(root, "evil") {
		t.Errorf("Trust through a link recorded %q", got)
	}
}

func TestNoListTrustsNothing(t *testing.T) {
	root := tree(t, "w")
	ok, err := New(filepath.Join(root, "nohome")).Trusted(filepath.Join(root, "w"))
	if ok || err != nil {
		t.Fatalf("Trusted = %v, %v; want false, nil", ok, err)
	}
}

func TestRevoke(t *testing.T) {
	root := tree(t, "a/b", "gone")
	s := New(filepath.Join(root, "home"))
	ctx := context.Background()
	for _, d := range []string{"a", "gone"} {
		if _, err := s.Trust(ctx, filepath.Join(root, d)); err != nil {
			t.Fatal(err)
		}
	}
	// A subfolder of a trusted folder is not itself in the list.
	_, err := s.Revoke(ctx, filepath.Join(root, "a", "b"))
	var nt *NotTrustedError
	if !errors.As(err, &nt) || nt.Via != filepath.Join(root, "a") {
		t.Fatalf("Revoke(a/b) = %v, want NotTrustedError via a", err)
	}
	// A folder deleted since it was trusted can still be revoked.
	os.Remove(filepath.Join(root, "gone"))
	if _, err := s.Revoke(ctx, filepath.Join(root, "gone")); err != nil {
		t.Fatalf("Revoke(gone) = %v", err)
	}
	if _, err := s.Revoke(ctx, filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Trusted(filepath.Join(root, "a", "b")); ok {
		t.Error("a/b still trusted after revoking a")
	}
	if _, err := s.Revoke(ctx, filepath.Join(root, "a")); !errors.As(err, &nt) || nt.Via != "" {
		t.Errorf("second Revoke = %v, want NotTrustedError", err)
	}
	l, err := s.List()
	if err != nil || len(l) != 0 {
		t.Errorf("List = %v, %v; want empty", l, err)
	}
}

// Concurrent trusts from separate stores (as from separate reins
// processes) lose no entry.
func TestConcurrentTrustLosesNothing(t *testing.T) {
	const n = 24
	var dirs []string
	for i := range n {
		dirs = append(dirs, fmt.Sprintf("d%02d", i))
	}
	root := tree(t, dirs...)
	home := filepath.Join(root, "home")
	var wg sync.WaitGroup
	for _, d := range dirs {
		wg.Go(func() {
			if _, err := New(home).Trust(context.Background(), filepath.Join(root, d)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	l, err := New(home).List()
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != n {
		t.Fatalf("%d entries after %d concurrent trusts", len(l), n)
	}
	fi, err := os.Stat(filepath.Join(home, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("trust list mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestLockHonoursContext(t *testing.T) {
	root := tree(t)
	path := filepath.Join(root, "l")
	unlock, err := lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := lock(ctx, path); !errors.Is(err, context.Canceled) {
		t.Fatalf("lock with a held lock and a cancelled context = %v", err)
	}
}

// A damaged list fails closed, and its error never quotes the contents.
func TestCorruptListFailsClosed(t *testing.T) {
	root := tree(t, "home", "w")
	s := New(filepath.Join(root, "home"))
	for name, content := range map[string]string{
		"not json":      "\x1b]0;pwned\x07{",
		"newer version": `{"version":2,"folders":[]}`,
		"relative path": `{"version":1,"folders":[{"path":"w"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			os.WriteFile(s.Path(), []byte(content), 0o600)
			ok, err := s.Trusted(filepath.Join(root, "w"))
			var ce *CorruptError
			if ok || !errors.As(err, &ce) {
				t.Fatalf("Trusted = %v, %v; want false, CorruptError", ok, err)
			}
			if _, err := s.Trust(context.Background(), filepath.Join(root, "w")); !errors.As(err, &ce) {
				t.Fatalf("Trust over a damaged list = %v", err)
			}
			if b, _ := os.ReadFile(s.Path()); string(b) != content {
				t.Error("a failed Trust changed the damaged list")
			}
		})
	}
	// The file is plain JSON a user can read.
	os.Remove(s.Path())
	s.Trust(context.Background(), filepath.Join(root, "w"))
	var f file
	b, _ := os.ReadFile(s.Path())
	if err := json.Unmarshal(b, &f); err != nil || f.Version != 1 || len(f.Folders) != 1 || f.Folders[0].TrustedAt.IsZero() {
		t.Errorf("trust list %s: %v", b, err)
	}
}

func TestTrustRefusesMissingAndFiles(t *testing.T) {
	root := tree(t)
	os.WriteFile(filepath.Join(root, "f"), nil, 0o644)
	s := New(filepath.Join(root, "home"))
	for _, p := range []string{"missing", "f"} {
		if _, err := s.Trust(context.Background(), filepath.Join(root, p)); err == nil {
			t.Errorf("Trust(%s) succeeded", p)
		}
	}
}

func TestQuote(t *testing.T) {
	tests := []struct{ in, quote, shell string }{
		{"/a/b-c_d.e", "/a/b-c_d.e", "/a/b-c_d.e"},
		{"/a b", `"/a b"`, `'/a b'`},
		{"/it's", `"/it's"`, `'/it'\''s'`},
		{"/$(rm -rf ~)", `"/$(rm -rf ~)"`, `'/$(rm -rf ~)'`},
		{"/x\x1b[2Jy", `"/x\x1b[2Jy"`, `"/x\x1b[2Jy"`},
		{"/x\n$(id)`id`", `"/x\n$(id)` + "`id`\"", `"/x\n\$(id)` + "\\`id\\`\""},
		{"/bad\xff", `"/bad\xff"`, `"/bad\xff"`},
		{"/é", `"/é"`, `'/é'`},
	}
	for _, tc := range tests {
		if got := Quote(tc.in); got != tc.quote {
			t.Errorf("Quote(%q) = %s, want %s", tc.in, got, tc.quote)
		}
		if got := ShellArg(tc.in); got != tc.shell {
			t.Errorf("ShellArg(%q) = %s, want %s", tc.in, got, tc.shell)
		}
	}
}

// TestHugeListFailsClosed: a trust list over 1 MiB (or not a regular
// file) is an error naming it, not read whole into memory.
func TestHugeListFailsClosed(t *testing.T) {
	home := tree(t, "home")
	dir := filepath.Join(home, "home")
	s := New(dir)
	f, err := os.Create(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(2 << 20)
	f.Close()
	_, err = s.Trusted(home)
	if err == nil || !strings.Contains(err.Error(), s.Path()) || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Errorf("err = %v, want one naming %s and saying it is too large", err, s.Path())
	}
}
