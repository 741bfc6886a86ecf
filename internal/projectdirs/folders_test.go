package projectdirs

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestFolders(t *testing.T) {
	home := t.TempDir()
	repo := filepath.Join(home, "repo")
	ws := filepath.Join(repo, "sub")
	for _, d := range []string{filepath.Join(repo, ".git"), filepath.Join(ws, ".reins")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The workspace's .reins is the user's own folder (as when it is
	// $REINS_HOME): not read again as the project's.
	userOwn := filepath.Join(home, "own")
	if err := os.Symlink(filepath.Join(ws, ".reins"), userOwn); err != nil {
		t.Fatal(err)
	}
	rels := []string{".reins", ".claude/x"}
	all := func(string) bool { return true }
	for _, c := range []struct {
		name    string
		cwd     string
		trusted func(string) bool
		want    []Folder
	}{
		{"no trust gate", ws, nil, []Folder{{Dir: userOwn}}},
		{"no workspace", "", all, []Folder{{Dir: userOwn}}},
		{"untrusted repo root", ws, func(d string) bool { return d == ws }, []Folder{
			{Dir: userOwn}, {Dir: filepath.Join(ws, ".claude", "x"), Project: ws, Rel: ".claude/x"},
		}},
		{"trusted", ws, all, []Folder{
			{Dir: userOwn},
			{Dir: filepath.Join(ws, ".claude", "x"), Project: ws, Rel: ".claude/x"},
			{Dir: filepath.Join(repo, ".reins"), Project: repo, Rel: ".reins"},
			{Dir: filepath.Join(repo, ".claude", "x"), Project: repo, Rel: ".claude/x"},
		}},
	} {
		if got := Folders([]string{userOwn}, c.cwd, home, c.trusted, rels); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

func TestFolderOrigin(t *testing.T) {
	if o := (Folder{Dir: "/h/skills"}).Origin(); o != "user" {
		t.Errorf("the user's folder: %q", o)
	}
	if o := (Folder{Dir: "/w/.reins/skills", Project: "/w", Rel: ".reins/skills"}).Origin(); o != "project" {
		t.Errorf("a project's folder: %q", o)
	}
}
