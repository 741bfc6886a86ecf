package tinyinit

import (
	"os"
	"testing"
)

// TestFileIsExecuteOnly: the memory file is execute-only for its owner
// and sealed: the kernel starts an image its process may not read as not
// dumpable (the instant before the init's own prctl), and nobody can
// change it once made.
func TestFileIsExecuteOnly(t *testing.T) {
	if Image() == nil {
		t.Skip("no tiny init on this architecture")
	}
	for name, file := range map[string]func() (*os.File, error){"init": File, "watch": WatchFile} {
		t.Run(name, func(t *testing.T) { executeOnly(t, file) })
	}
}

func executeOnly(t *testing.T, file func() (*os.File, error)) {
	f, err := file()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o100 {
		t.Errorf("mode %v, want execute-only for the owner", fi.Mode())
	}
	if _, err := f.WriteAt([]byte{0}, 0); err == nil {
		t.Error("the sealed image could be written")
	}
	if f.Fd() < 10 {
		t.Errorf("descriptor %d may be replaced by the init's own (3, 4)", f.Fd())
	}
}
