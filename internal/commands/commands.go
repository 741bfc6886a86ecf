// Package commands reads custom slash commands in Claude Code's format
// (docs/commands.md): Markdown files in a trusted project's
// .reins/commands and .claude/commands (from the workspace up to the
// repository root, each honoured only as the user pinned it) and the
// user's $REINS_HOME/commands and ~/.claude/commands. A file a/b.md is the
// command /a:b, and /b as Claude Code names it. Expand turns one into the
// prompt it stands for.
package commands

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml"

	"github.com/reinsdev/reins/internal/frontmatter"
	"github.com/reinsdev/reins/internal/projectdirs"
	"github.com/reinsdev/reins/internal/skills"
	"github.com/reinsdev/reins/internal/smallfile"
)

// Bounds of one start: files per commands folder, folder depth.
const (
	MaxPerFolder = 500
	maxDepth     = 8
)

// Origin says whose file a command came from.
type Origin string

const (
	OriginProject Origin = "project"
	OriginUser    Origin = "user"
)

// Command is one custom command.
type Command struct {
	// Name is the file's name without .md; Namespace its subfolders
	// joined with ':' ("" at the top).
	Name, Namespace string
	// Description, ArgumentHint and Model are front matter's
	// `description`, `argument-hint` and `model`.
	Description, ArgumentHint, Model string
	// AllowedTools is `allowed-tools` as reins tool names (nil: none
	// named); it only narrows the command's turn (tool.Narrowing).
	AllowedTools []string
	// Body is the file after its front matter: the bytes read (and, for a
	// project file, honoured) at the start.
	Body   string
	File   string
	Origin Origin
}

// FullName is the name /FullName answers to: namespace:name.
func (c *Command) FullName() string {
	if c.Namespace == "" {
		return c.Name
	}
	return c.Namespace + ":" + c.Name
}

// Label is where the command came from as a list shows it: "(user)",
// "(project)", "(project:a)".
func (c *Command) Label() string {
	if c.Namespace == "" {
		return "(" + string(c.Origin) + ")"
	}
	return "(" + string(c.Origin) + ":" + c.Namespace + ")"
}

// Warning is a file that was skipped: File names it (reins's own text
// after it, never the file's content).
type Warning struct {
	File    string
	Message string
}

func (w Warning) String() string { return w.File + ": " + w.Message }

// Set is the commands of one workspace.
type Set struct {
	list []*Command // sorted by FullName
}

// List returns every command, sorted by full name.
func (s *Set) List() []*Command {
	if s == nil {
		return nil
	}
	return s.list
}

// Get finds the command /name means: its full name (a:b), else a
// top-level command of that name, else the one namespaced command of that
// name (Claude Code's /b for a/b.md); two namespaced ones make /b
// ambiguous, and it names none.
func (s *Set) Get(name string) (*Command, bool) {
	if s == nil || name == "" {
		return nil, false
	}
	var short []*Command
	for _, c := range s.list {
		if c.FullName() == name {
			return c, true
		}
		if c.Name == name {
			short = append(short, c)
		}
	}
	if len(short) == 1 {
		return short[0], true
	}
	return nil, false
}

// Options say where Discover looks.
type Options struct {
	Cwd            string
	Home, UserHome string
	// Trusted and Honour are the start's trust gate (trust.Gate); nil
	// Trusted reads no project file, nil Honour honours every one.
	Trusted func(dir string) bool
	Honour  func(dir, rel string, content []byte) bool
}

var projectFolders = []string{".reins/commands", ".claude/commands"}

// base is one commands folder to read.
type base = projectdirs.Folder

// folders are the commands folders in precedence order: the user's own
// first (a repository cannot replace a user's command), then the
// project's from the workspace up to the repository root, nearest first.
func (o Options) folders() []base {
	var user []string
	if o.Home != "" {
		user = append(user, filepath.Join(o.Home, "commands"))
	}
	if o.UserHome != "" {
		user = append(user, filepath.Join(o.UserHome, ".claude", "commands"))
	}
	return projectdirs.Folders(user, o.Cwd, o.UserHome, o.Trusted, projectFolders)
}

// Discover reads the commands o names. A file that cannot be read as a
// command is skipped with one warning naming it; a full name found again
// in a later folder is shadowed.
func Discover(o Options) (*Set, []Warning) {
	set := &Set{}
	seen := map[string]bool{}
	var warnings []Warning
	for _, b := range o.folders() {
		n := 0
		var walk func(dir, rel string, depth int) bool
		walk = func(dir, rel string, depth int) bool {
			entries, err := os.ReadDir(dir)
			if err != nil {
				if depth == 0 && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
					warnings = append(warnings, Warning{File: dir, Message: "commands folder skipped: cannot be read"})
				}
				return true
			}
			for _, e := range entries {
				p, r := filepath.Join(dir, e.Name()), path.Join(rel, e.Name())
				fi, err := os.Stat(p)
				if err != nil {
					continue
				}
				if fi.IsDir() {
					if depth < maxDepth && !walk(p, r, depth+1) {
						return false
					}
					continue
				}
				if !strings.HasSuffix(e.Name(), ".md") {
					continue
				}
				if n++; n > MaxPerFolder {
					warnings = append(warnings, Warning{File: b.Dir, Message: fmt.Sprintf("only the first %d commands of this folder are read", MaxPerFolder)})
					return false
				}
				c, w := load(o, b, p, r)
				switch {
				case w != nil:
					warnings = append(warnings, *w)
				case c != nil && !seen[c.FullName()]:
					seen[c.FullName()] = true
					set.list = append(set.list, c)
				}
			}
			return true
		}
		walk(b.Dir, "", 0)
	}
	slices.SortFunc(set.list, func(a, b *Command) int { return strings.Compare(a.FullName(), b.FullName()) })
	return set, warnings
}

// load reads one command file (rel to b.Dir): (nil, nil) when the pins
// refused it.
func load(o Options, b base, file, rel string) (*Command, *Warning) {
	src, err := smallfile.Read(file, smallfile.Limit)
	if err != nil {
		return nil, &Warning{File: file, Message: "command skipped: not a readable regular file of at most 1 MiB"}
	}
	if Origin(b.Origin()) == OriginProject && o.Honour != nil && !o.Honour(b.Project, path.Join(b.Rel, rel), src) {
		return nil, nil
	}
	name := strings.TrimSuffix(path.Base(rel), ".md")
	ns := ""
	if d := path.Dir(rel); d != "." {
		ns = strings.ReplaceAll(d, "/", ":")
	}
	if !validName(name) || (ns != "" && !validName(strings.ReplaceAll(ns, ":", "-"))) {
		return nil, &Warning{File: file, Message: "command skipped: a command's file and folder names are letters, digits, '.', '_' and '-'"}
	}
	c, err := Parse(src)
	if err != nil {
		return nil, &Warning{File: file, Message: "command skipped: " + err.Error()}
	}
	c.Name, c.Namespace, c.File, c.Origin = name, ns, file, Origin(b.Origin())
	return c, nil
}

// validName: a command name is typed after / and shown in lists, so
// nothing but letters, digits, '.', '_' and '-' (not first), at most 64.
func validName(s string) bool { return frontmatter.ValidName(s) && len(s) <= 64 }

type frontMatter struct {
	Description  string `yaml:"description"`
	ArgumentHint any    `yaml:"argument-hint"`
	Model        string `yaml:"model"`
	AllowedTools any    `yaml:"allowed-tools"`
}

// Parse reads one command file. Front matter is optional (Claude Code's
// commands may be plain Markdown); its errors are reins's own text.
func Parse(src []byte) (*Command, error) {
	if !utf8.Valid(src) {
		return nil, errors.New("not UTF-8 text")
	}
	front, body, ok := frontmatter.Split(src)
	if !ok {
		return &Command{Body: strings.TrimSpace(strings.TrimPrefix(string(src), "\ufeff"))}, nil
	}
	var fm frontMatter
	if err := yaml.Unmarshal(front, &fm); err != nil {
		return nil, errors.New("front matter is not valid YAML of description, argument-hint, model and allowed-tools" + frontmatter.Hint(front))
	}
	c := &Command{Description: strings.TrimSpace(fm.Description), Model: strings.TrimSpace(fm.Model), Body: body}
	switch h := fm.ArgumentHint.(type) {
	case nil:
	case string:
		c.ArgumentHint = h
	case []any: // [file] unquoted in YAML is a list
		var parts []string
		for _, x := range h {
			parts = append(parts, "["+fmt.Sprint(x)+"]")
		}
		c.ArgumentHint = strings.Join(parts, " ")
	default:
		return nil, errors.New("argument-hint must be a string")
	}
	if fm.AllowedTools != nil {
		names, err := skills.ToolNames(fm.AllowedTools)
		if err != nil {
			return nil, err
		}
		c.AllowedTools = names
	}
	return c, nil
}
