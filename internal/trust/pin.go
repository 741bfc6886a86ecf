package trust

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinsdev/reins/internal/smallfile"
)

// Pinning (docs/trust.md "Pinned files"). Trusting a folder trusts every
// folder below it, and a project file there can be written after the
// user looked — by a model's tool call, a `git pull`, anyone. So trust
// records a digest of each project file that can redirect keys, run code
// or steer the model, at any depth of the folder, and reins honours such
// a file only while its content still matches the digest the user
// approved. The kinds are listed here, in one place, because they are what
// trust is about; the loaders that read them call Gate.Honour with the
// bytes they read.

// pinnedFiles are single files, relative to any folder of a trusted tree:
// the MCP server list, the instruction files and Claude Code's settings
// (hooks).
var pinnedFiles = []string{".mcp.json", "AGENTS.md", "CLAUDE.md"}

// pinnedTrees are folders every file of which is pinned: reins's own
// (config, agents and what later features add: skills, commands, hooks),
// Claude Code's agents, skills and commands, and .agents (skills).
var pinnedTrees = []string{".reins", ".agents"}

// claudeFiles and claudeTrees are the pinned parts of a .claude folder:
// the rest of it (Claude Code's own state) configures nothing reins runs.
var (
	claudeFiles = []string{"settings.json", "settings.local.json"}
	claudeTrees = []string{"agents", "skills", "commands"}
)

// skippedDirs are not searched for project files when a folder is
// scanned: a repository's control folder and installed packages. reins
// reads project files there only when it runs inside one, and then the
// files are not pinned, so they are refused (fail closed) until the user
// trusts that folder itself.
var skippedDirs = []string{".git", "node_modules"}

// Scan bounds. A scan stops after MaxScanEntries directory entries, does
// not descend below MaxScanDepth folders, and pins at most MaxPins files
// of one folder; what lies past a bound is not pinned (and so not
// honoured), and the scan says it was cut.
const (
	MaxScanEntries = 250_000
	MaxScanDepth   = 64
	MaxPins        = 2_000
	// maxTreeDepth bounds a pinned tree (.reins, .claude/skills, ...),
	// which is walked following symbolic links.
	maxTreeDepth = 16
)

// State is what became of a pinned or pinnable file since it was pinned.
type State string

const (
	StatePinned  State = "pinned"  // on disk with the approved content
	StateChanged State = "changed" // on disk with other content
	StateNew     State = "new"     // on disk, never approved
	StateRemoved State = "removed" // approved, gone from disk
	// StateUnpinned is a file of a folder trusted before reins pinned
	// files: nothing of it was ever approved by content.
	StateUnpinned State = "not pinned"
)

// Digest is the pin of content: "sha256:" and the hex digest.
func Digest(content []byte) string {
	sum := sha256.Sum256(content)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ScanOptions tune Scan.
type ScanOptions struct {
	// Names are further instruction file names to pin (config
	// instructions.files), besides AGENTS.md and CLAUDE.md.
	Names []string
	// Home is $REINS_HOME: a .reins folder that is it is the user's own
	// and not pinned.
	Home string
	// MaxEntries replaces MaxScanEntries when positive (tests).
	MaxEntries int
}

// ScanResult is the pinnable files of one folder.
type ScanResult struct {
	// Files maps each file's path, relative to the scanned folder with
	// '/' separators, to its Digest.
	Files map[string]string
	// Truncated says a bound was reached: files past it are not in Files.
	Truncated bool
	// Entries is how many directory entries were read.
	Entries int
}

// Scan lists the pinnable project files of root (canonical) at any depth,
// with their digests. Folders are found without following symbolic links
// (a link's target is judged where it lies: trust is by canonical path);
// inside a project folder, the pinned files and trees are read through
// links, as the loaders read them. A file that cannot be read as a small
// regular file (smallfile.Read) is not pinned: the loaders cannot honour
// it either.
func Scan(ctx context.Context, root string, opts ScanOptions) (*ScanResult, error) {
	s := &scanner{ctx: ctx, opts: opts, res: &ScanResult{Files: map[string]string{}}, budget: opts.MaxEntries}
	if s.budget <= 0 {
		s.budget = MaxScanEntries
	}
	if opts.Home != "" {
		if fi, err := os.Stat(opts.Home); err == nil {
			s.home = fi
		}
	}
	if err := s.folder(root, "", 0); err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	return s.res, nil
}

type scanner struct {
	ctx    context.Context
	opts   ScanOptions
	res    *ScanResult
	budget int
	home   fs.FileInfo
}

var errStop = errors.New("scan bound reached")

// count spends n entries of the budget.
func (s *scanner) count(n int) error {
	s.res.Entries += n
	if s.res.Entries > s.budget {
		s.res.Truncated = true
		return errStop
	}
	return s.ctx.Err()
}

// folder pins the project files of dir (a project folder: reins may run
// in it) and searches its subfolders.
func (s *scanner) folder(dir, rel string, depth int) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // an unreadable folder: reins cannot read its files either
	}
	if err := s.count(len(entries)); err != nil {
		return s.stop(err)
	}
	for _, e := range entries {
		name := e.Name()
		p, r := filepath.Join(dir, name), path.Join(rel, name)
		switch {
		case slices.Contains(pinnedFiles, name) || slices.Contains(s.opts.Names, name):
			s.file(p, r)
		case slices.Contains(pinnedTrees, name):
			if name == ".reins" && s.home != nil {
				if fi, err := os.Stat(p); err == nil && os.SameFile(fi, s.home) {
					continue // $REINS_HOME: the user's own
				}
			}
			if err := s.tree(p, r, 0); err != nil {
				return s.stop(err)
			}
		case name == ".claude":
			for _, f := range claudeFiles {
				s.file(filepath.Join(p, f), path.Join(r, f))
			}
			for _, t := range claudeTrees {
				if err := s.tree(filepath.Join(p, t), path.Join(r, t), 1); err != nil {
					return s.stop(err)
				}
			}
		}
		if !e.IsDir() || slices.Contains(skippedDirs, name) {
			continue
		}
		if depth+1 > MaxScanDepth {
			s.res.Truncated = true
			continue
		}
		if err := s.folder(p, r, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// stop turns the bound into a cut result and passes other errors on.
func (s *scanner) stop(err error) error {
	if errors.Is(err, errStop) {
		return errStop
	}
	return err
}

// tree pins every file below dir (dir itself may be a symbolic link, as
// .claude -> ../shared/.claude; a link to a file is pinned by its content).
// A link to a folder inside the tree is not followed: a loop cannot make
// the scan spin, and a loader that would follow it meets unpinned files
// and refuses them.
func (s *scanner) tree(dir, rel string, depth int) error {
	if depth > maxTreeDepth {
		s.res.Truncated = true
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	if err := s.count(len(entries)); err != nil {
		return err
	}
	for _, e := range entries {
		p, r := filepath.Join(dir, e.Name()), path.Join(rel, e.Name())
		if e.IsDir() {
			if err := s.tree(p, r, depth+1); err != nil {
				return err
			}
			continue
		}
		s.file(p, r)
	}
	return nil
}

// file pins one file if it reads as a small regular file.
func (s *scanner) file(p, rel string) {
	if _, ok := s.res.Files[rel]; ok {
		return
	}
	if len(s.res.Files) >= MaxPins {
		s.res.Truncated = true
		return
	}
	b, err := smallfile.Read(p, smallfile.Limit)
	if err != nil {
		return
	}
	s.res.Files[rel] = Digest(b)
}

// FileState is one file's State, its path relative to the folder.
type FileState struct {
	Path  string
	State State
}

// Compare sets the files on disk (a ScanResult's Files) against the pins
// approved (nil: a folder trusted before pinning), sorted by path.
func Compare(pins, disk map[string]string) []FileState {
	var out []FileState
	for p, d := range disk {
		old, ok := pins[p]
		switch {
		case pins == nil:
			out = append(out, FileState{p, StateUnpinned})
		case !ok:
			out = append(out, FileState{p, StateNew})
		case old != d:
			out = append(out, FileState{p, StateChanged})
		default:
			out = append(out, FileState{p, StatePinned})
		}
	}
	for p := range pins {
		if _, ok := disk[p]; !ok {
			out = append(out, FileState{p, StateRemoved})
		}
	}
	slices.SortFunc(out, func(a, b FileState) int { return strings.Compare(a.Path, b.Path) })
	return out
}
