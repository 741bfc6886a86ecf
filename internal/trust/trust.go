// Package trust keeps the folders the user trusts (`reins trust`).
//
// A cloned repository is written by someone else. Files in it that
// configure reins — .reins/config.yaml, .reins/agents, .claude/agents, and
// every project file added later (MCP server lists, hooks, instructions) —
// can run programs or send the user's keys elsewhere, so they take effect
// only in a folder the user trusted. Trust covers the folder and every
// folder below it.
//
// The list lives in $REINS_HOME/trusted.json. Every path in it is
// canonical (absolute, symbolic links resolved), and every question is
// asked with a canonical path, so a symbolic link cannot borrow another
// folder's trust and /a/b trusted does not trust /a/bc. Changes are made
// under an exclusive lock and written atomically (a temporary file renamed
// over the old one), so concurrent `reins trust` runs lose no entry and a
// reader never sees half a file.
//
// Trusting a folder also pins its project files (pin.go): the one list of
// the kinds of file that can redirect keys, run code or steer the model
// lives there, and every loader of such a file asks Gate.Honour with the
// bytes it read, so a file added or changed after the user's approval is
// not honoured. The package knows nothing else of what the files mean.
package trust

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reinsdev/reins/internal/private"
	"github.com/reinsdev/reins/internal/smallfile"
)

// FileName is the trust list's file in $REINS_HOME.
const FileName = "trusted.json"

// Folder is one trusted folder.
type Folder struct {
	// Path is canonical: absolute, cleaned, symbolic links resolved.
	Path      string    `json:"path"`
	TrustedAt time.Time `json:"trustedAt"`
	// Pins maps each project file of the folder the user approved (pin.go),
	// by its path relative to Path with '/' separators, to its Digest.
	// It is nil in an entry written before reins pinned files: then no
	// file of the folder is honoured until the user runs reins trust again.
	Pins map[string]string `json:"pins"`
	// PinnedAt is when Pins were last approved.
	PinnedAt *time.Time `json:"pinnedAt,omitempty"`
}

// file is the on-disk form. Version lets a later reins change the format
// and an older one refuse it rather than misread it.
type file struct {
	Version int      `json:"version"`
	Folders []Folder `json:"folders"`
}

const version = 1

// Store is the trust list of one REINS_HOME. Its zero value is not usable;
// make one with New. A Store holds no state between calls, so any number
// of them (in any number of processes) may share one home.
type Store struct {
	home string
	// Now stamps new entries; time.Now when nil.
	Now func() time.Time
}

// New returns the store kept in home ($REINS_HOME).
func New(home string) *Store { return &Store{home: home} }

// Path is the trust list's file.
func (s *Store) Path() string { return filepath.Join(s.home, FileName) }

// NotTrustedError is returned by Revoke for a folder that is not in the
// list. Via, when set, is the trusted ancestor that covers Dir: revoking
// Dir alone would change nothing.
type NotTrustedError struct {
	Dir string
	Via string
}

func (e *NotTrustedError) Error() string {
	if e.Via != "" {
		return fmt.Sprintf("%s is not in the trust list; it is trusted through %s", Quote(e.Dir), Quote(e.Via))
	}
	return fmt.Sprintf("%s is not trusted", Quote(e.Dir))
}

// CorruptError is a trust list that cannot be read. Its text never quotes
// the file's contents.
type CorruptError struct {
	File   string
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("trust list %s: %s (fix or remove the file, then run reins trust again)", Quote(e.File), e.Reason)
}

// Canonical returns dir as the list keeps it: absolute, cleaned, with
// symbolic links resolved. dir must exist.
func Canonical(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// Trusted reports whether dir is a trusted folder or lies below one. A
// missing list means nothing is trusted; a list that cannot be read is an
// error, so that a damaged file fails closed and is noticed.
func (s *Store) Trusted(dir string) (bool, error) {
	_, ok, err := s.Covering(dir)
	return ok, err
}

// Covering returns the trusted folder that covers dir (dir itself or its
// nearest trusted ancestor).
func (s *Store) Covering(dir string) (string, bool, error) {
	canon, err := Canonical(dir)
	if err != nil {
		return "", false, err
	}
	f, err := s.read()
	if err != nil {
		return "", false, err
	}
	e, ok := nearest(f.Folders, canon)
	return e.Path, ok, nil
}

// within reports whether path is root or below it, by whole path
// elements: /a/bc is not within /a/b.
func within(path, root string) bool {
	if path == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(path, root)
}

// List returns the trusted folders, sorted by path.
func (s *Store) List() ([]Folder, error) {
	f, err := s.read()
	if err != nil {
		return nil, err
	}
	return f.Folders, nil
}

// Trust adds dir, which must be an existing directory, pins its project
// files as they are now (Approve) and returns its canonical path.
func (s *Store) Trust(ctx context.Context, dir string) (string, error) {
	a, err := s.Approve(ctx, dir, ScanOptions{Home: s.home})
	if err != nil {
		return "", err
	}
	return a.Folder, nil
}

// Approval is what Approve did.
type Approval struct {
	// Folder is the canonical folder trusted.
	Folder string
	// Changes are the files whose pin changed (new, changed, removed, or
	// every file of a folder trusted before pinning), sorted by path.
	Changes []FileState
	// Pinned is how many files are pinned now.
	Pinned int
	// Truncated says the scan reached a bound (pin.go): files past it
	// are not pinned, so reins does not honour them.
	Truncated bool
}

// Approve trusts dir, which must be an existing directory, and pins its
// project files as they are on disk now: the user's approval of their
// content. Trusting a folder already in the list keeps its entry and
// replaces its pins. The scan runs before the lock is taken (it may read
// many folders); only the entry of dir is replaced under it, so
// concurrent approvals of other folders lose nothing.
func (s *Store) Approve(ctx context.Context, dir string, opts ScanOptions) (*Approval, error) {
	canon, err := Canonical(dir)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(canon)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", Quote(canon))
	}
	if _, err := s.read(); err != nil {
		return nil, err // a damaged list is said before a long scan
	}
	scan, err := Scan(ctx, canon, opts)
	if err != nil {
		return nil, err
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	a := &Approval{Folder: canon, Pinned: len(scan.Files), Truncated: scan.Truncated}
	err = s.update(ctx, func(f *file) error {
		at := now().UTC()
		i := slices.IndexFunc(f.Folders, func(e Folder) bool { return e.Path == canon })
		if i < 0 {
			f.Folders = append(f.Folders, Folder{Path: canon, TrustedAt: at, Pins: map[string]string{}})
			i = len(f.Folders) - 1
		}
		for _, c := range Compare(f.Folders[i].Pins, scan.Files) {
			if c.State != StatePinned {
				a.Changes = append(a.Changes, c)
			}
		}
		f.Folders[i].Pins = scan.Files
		f.Folders[i].PinnedAt = &at
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// PinFiles approves single files of the trusted folder (canonical, as in
// Refused.Folder): each key of files (a Refused.Key) is pinned to its
// digest, the other pins are kept. It is the terminal's answer to a
// question that showed the user these files' content.
func (s *Store) PinFiles(ctx context.Context, folder string, files map[string]string) error {
	return s.update(ctx, func(f *file) error {
		i := slices.IndexFunc(f.Folders, func(e Folder) bool { return e.Path == folder })
		if i < 0 {
			return &NotTrustedError{Dir: folder}
		}
		if f.Folders[i].Pins == nil {
			f.Folders[i].Pins = map[string]string{}
		}
		for k, d := range files {
			f.Folders[i].Pins[k] = d
		}
		at := (s.Now)
		if at == nil {
			at = time.Now
		}
		t := at().UTC()
		f.Folders[i].PinnedAt = &t
		return nil
	})
}

// Shown is what Show found.
type Shown struct {
	// Folder is the trusted folder that covers the one asked about (its
	// pins decide), or the canonical folder asked about when none does.
	Folder  string
	Trusted bool
	// Files are the pinned files and those on disk, with their states.
	Files     []FileState
	Truncated bool
}

// Show compares the pins of the trusted folder covering dir with its
// files on disk. For a folder that is not trusted every file is new.
func (s *Store) Show(ctx context.Context, dir string, opts ScanOptions) (*Shown, error) {
	canon, err := Canonical(dir)
	if err != nil {
		return nil, err
	}
	f, err := s.read()
	if err != nil {
		return nil, err
	}
	sh := &Shown{Folder: canon}
	pins := map[string]string{}
	if e, ok := nearest(f.Folders, canon); ok {
		sh.Folder, sh.Trusted, pins = e.Path, true, e.Pins
	}
	scan, err := Scan(ctx, sh.Folder, opts)
	if err != nil {
		return nil, err
	}
	sh.Files, sh.Truncated = Compare(pins, scan.Files), scan.Truncated
	return sh, nil
}

// nearest is the entry of folders that covers canon most closely.
func nearest(folders []Folder, canon string) (Folder, bool) {
	var best Folder
	found := false
	for _, e := range folders {
		if within(canon, e.Path) && (!found || len(e.Path) > len(best.Path)) {
			best, found = e, true
		}
	}
	return best, found
}

// Revoke removes dir from the list and returns the path removed. A folder
// that no longer exists can still be revoked by the path it was trusted
// under. A folder not in the list is a *NotTrustedError.
func (s *Store) Revoke(ctx context.Context, dir string) (string, error) {
	canon, err := Canonical(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if canon, err = filepath.Abs(dir); err != nil {
			return "", err
		}
	}
	err = s.update(ctx, func(f *file) error {
		i := slices.IndexFunc(f.Folders, func(e Folder) bool { return e.Path == canon })
		if i < 0 {
			nt := &NotTrustedError{Dir: canon}
			for _, e := range f.Folders {
				if within(canon, e.Path) && len(e.Path) > len(nt.Via) {
					nt.Via = e.Path
				}
			}
			return nt
		}
		f.Folders = slices.Delete(f.Folders, i, i+1)
		return nil
	})
	return canon, err
}

// read loads the list; a missing file is an empty list.
func (s *Store) read() (*file, error) {
	b, err := smallfile.Read(s.Path(), smallfile.Limit)
	if errors.Is(err, fs.ErrNotExist) {
		return &file{Version: version}, nil
	}
	if err != nil {
		return nil, err
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, &CorruptError{File: s.Path(), Reason: "not a JSON trust list"}
	}
	if f.Version != version {
		return nil, &CorruptError{File: s.Path(), Reason: fmt.Sprintf("version %d, want %d", f.Version, version)}
	}
	for _, e := range f.Folders {
		if !filepath.IsAbs(e.Path) || filepath.Clean(e.Path) != e.Path {
			return nil, &CorruptError{File: s.Path(), Reason: "an entry is not a clean absolute path"}
		}
	}
	slices.SortFunc(f.Folders, func(a, b Folder) int { return strings.Compare(a.Path, b.Path) })
	return &f, nil
}

// update applies change to the list under the lock and writes the result
// atomically. An error from change leaves the file as it was.
func (s *Store) update(ctx context.Context, change func(*file) error) error {
	if err := private.Home(s.home); err != nil {
		return err
	}
	unlock, err := lock(ctx, s.Path()+".lock")
	if err != nil {
		return err
	}
	defer unlock()
	f, err := s.read()
	if err != nil {
		return err
	}
	if err := change(f); err != nil {
		return err
	}
	slices.SortFunc(f.Folders, func(a, b Folder) int { return strings.Compare(a.Path, b.Path) })
	f.Version = version
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if len(b) >= smallfile.Limit {
		// written, it could not be read back: every command would stop
		return fmt.Errorf("the trust list %s would grow past %d bytes; revoke folders you no longer use, or trust project folders rather than a folder of many projects", Quote(s.Path()), smallfile.Limit)
	}
	return writeAtomic(s.Path(), append(b, '\n'))
}

// writeAtomic replaces path with data: a reader sees the old file or the
// new one, never a mix, and a crash leaves the old one.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
