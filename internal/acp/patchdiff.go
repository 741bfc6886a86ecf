package acp

import (
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/reinsdev/reins/internal/patch"
)

// describePatch fills in the editor's view of an apply_patch call: a title
// naming the files, their locations, and a diff item per file, parsed with
// the tool's own parser (internal/patch). A live call's updates show the
// whole file before and after (patch.Apply on the file as it is, the
// tool's own apply); where the file cannot be read, or on a replay, each
// chunk's old and new lines. An added file is new text only; a deleted
// one is its old text going to nothing (live only: without the old text a
// diff would read as a new empty file). A patch that does not parse
// gets the title alone: the tool will refuse it.
func describePatch(c *toolCall, workspace, input string, live bool) {
	ops, err := patch.Parse(input)
	if err != nil || len(ops) == 0 {
		c.title = "Patch"
		return
	}
	abs := func(p string) string {
		if !filepath.IsAbs(p) {
			p = filepath.Join(workspace, p)
		}
		return filepath.Clean(p)
	}
	names := make([]string, 0, len(ops))
	for _, op := range ops {
		path := abs(op.Path)
		names = append(names, op.Path)
		c.locations = append(c.locations, sdk.ToolCallLocation{Path: path})
		switch op.Kind {
		case patch.Add:
			c.diff = append(c.diff, sdk.ToolDiffContent(path, op.Content))
		case patch.Delete:
			// Without the old text a diff would read as an empty new file.
			if live {
				if b, err := readSmall(path); err == nil {
					c.diff = append(c.diff, sdk.ToolDiffContent(path, "", b))
				}
			}
		case patch.Update:
			dest := path
			if op.MoveTo != "" {
				dest = abs(op.MoveTo)
				c.locations = append(c.locations, sdk.ToolCallLocation{Path: dest})
			}
			if live {
				if before, err := readSmall(path); err == nil {
					if after, err := patch.Apply(before, op.Chunks); err == nil {
						c.diff = append(c.diff, sdk.ToolDiffContent(dest, after, before))
						continue
					}
				}
			}
			for _, ch := range op.Chunks {
				c.diff = append(c.diff, sdk.ToolDiffContent(dest, joinLines(ch.New), joinLines(ch.Old)))
			}
		}
	}
	c.title = "Patch " + oneLine(strings.Join(names, ", "), 80)
}

func joinLines(ls []string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}
