package harness

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/reinsdev/reins/internal/smallfile"
	"github.com/reinsdev/reins/internal/trust"
)

// MaxInstructionBytes caps the project instructions appended to a system
// prompt, all files together; the cut is marked.
const MaxInstructionBytes = 64 << 10

// instructionDirs are the directories whose instruction file counts,
// farthest first: the workspace and its parents up to the repository root
// (the nearest directory holding .git). Without a repository above the
// workspace only the workspace counts. The walk never goes above the
// user's home directory nor past the file system root.
func instructionDirs(cwd, userHome string) []string {
	var walk []string
	for dir := cwd; ; {
		walk = append(walk, dir)
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir || dir == userHome {
			// no repository root up to the home or file system root
			walk = walk[:1]
			break
		}
		dir = parent
	}
	// farthest first, so the nearest file comes last and reads as the most
	// specific
	for i, j := 0, len(walk)-1; i < j; i, j = i+1, j-1 {
		walk[i], walk[j] = walk[j], walk[i]
	}
	return walk
}

// loadInstructions reads the project instructions of cwd, each directory
// only when the user trusts it (docs/trust.md). It returns the marked
// section to append to a system prompt, or "".
func loadInstructions(home, cwd string, names []string) string {
	userHome, _ := os.UserHomeDir()
	if userHome != "" {
		if abs, err := filepath.Abs(userHome); err == nil {
			userHome = abs
		}
	}
	store := trust.New(home)
	var b strings.Builder
	left := MaxInstructionBytes
	for _, dir := range instructionDirs(cwd, userHome) {
		if ok, err := store.Trusted(dir); err != nil || !ok {
			continue
		}
		for _, name := range names {
			path := filepath.Join(dir, name)
			data, err := readInstructions(path)
			if err != nil {
				continue
			}
			text := strings.TrimSpace(string(data))
			if left <= 0 {
				break
			}
			if len(text) > left {
				text = strings.ToValidUTF8(text[:left], "") + fmt.Sprintf("\n[cut: project instructions are capped at %d bytes]", MaxInstructionBytes)
			}
			left -= len(text)
			fmt.Fprintf(&b, "\n\n<project-instructions path=%q>\n%s\n</project-instructions>", path, text)
			break // AGENTS.md wins over CLAUDE.md in one directory
		}
	}
	return b.String()
}

// readInstructions reads an instruction file a repository names: only a
// regular file (checked on the opened file, not a stat before it), and no
// more of it than can be shown, however large it is.
func readInstructions(path string) ([]byte, error) {
	f, err := smallfile.Open(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxInstructionBytes+1))
}
