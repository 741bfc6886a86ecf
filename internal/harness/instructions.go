package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinsdev/reins/internal/projectdirs"
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
	walk := projectdirs.Up(cwd, userHome)
	// farthest first, so the nearest file comes last and reads as the most
	// specific
	slices.Reverse(walk)
	return walk
}

// loadInstructions reads the project instructions of cwd, each directory
// only when the user trusts it (docs/trust.md) and each file only when the
// gate honours what was read. It returns the marked section to append to
// a system prompt, or "".
func loadInstructions(gate *trust.Gate, cwd string, names []string) string {
	userHome, _ := os.UserHomeDir()
	if userHome != "" {
		if abs, err := filepath.Abs(userHome); err == nil {
			userHome = abs
		}
	}
	var b strings.Builder
	left := MaxInstructionBytes
	for _, dir := range instructionDirs(cwd, userHome) {
		if !gate.Trusted(dir) {
			continue
		}
		for _, name := range names {
			path := filepath.Join(dir, name)
			data, err := smallfile.Read(path, smallfile.Limit)
			if err != nil {
				continue
			}
			if !gate.Honour(dir, name, data) {
				break // refused: New stops on it
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
