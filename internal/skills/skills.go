// Package skills reads Agent Skills (docs/skills.md): folders holding a
// SKILL.md with YAML front matter, found in a trusted project's
// .reins/skills, .claude/skills and .agents/skills (from the workspace up
// to the repository root, each file honoured only as the user pinned it)
// and the user's $REINS_HOME/skills, ~/.claude/skills and ~/.agents/skills.
//
// A session gets them by progressive disclosure: only each skill's name
// and description go into the system prompt (Catalog), the body comes
// through the model's `skill` tool (Tool) or the user's /NAME, and the
// skill's other files through `read` when the body points at them.
package skills

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
	"github.com/reinsdev/reins/internal/smallfile"
)

// FileName is the file that makes a folder a skill.
const FileName = "SKILL.md"

// Limits of the format (the Agent Skills specification) and reins's own
// bounds on what one start reads.
const (
	MaxNameLen        = 64
	MaxDescriptionLen = 1024
	// MaxPerFolder is how many skill folders of one skills folder are
	// read; the rest are skipped with a warning.
	MaxPerFolder = 200
	// maxFiles bounds the files of one skill that are listed (and, for a
	// project skill, checked against the pins); maxDepth its folders.
	maxFiles = 500
	maxDepth = 8
)

// Origin says whose files a skill came from.
type Origin string

const (
	// OriginProject is a trusted project's skill, pinned.
	OriginProject Origin = "project"
	// OriginUser is the user's own ($REINS_HOME, ~/.claude, ~/.agents).
	OriginUser Origin = "user"
)

// Skill is one valid skill.
type Skill struct {
	Name        string
	Description string
	// Dir is the skill's folder (absolute, as found), File its SKILL.md.
	Dir, File string
	Origin    Origin
	// AllowedTools is front matter `allowed-tools` mapped to reins's tool
	// names; nil when the skill names none. It only narrows (Narrowing).
	AllowedTools []string
	License      string
	Metadata     map[string]string
	// Body is SKILL.md after its front matter: the bytes read (and, for a
	// project skill, honoured) at the start, never read again.
	Body string
	// Files are the skill's other files, relative to Dir with '/'
	// separators, sorted (bounded).
	Files []string
}

// Warning is a skill that was skipped, or a note about one: File names
// the file (reins's own text after it, never the file's content).
type Warning struct {
	File    string
	Message string
}

func (w Warning) String() string { return w.File + ": " + w.Message }

// Set is the skills of one workspace, by name.
type Set struct {
	byName map[string]*Skill
	order  []string // sorted names
}

// Get returns the skill named name.
func (s *Set) Get(name string) (*Skill, bool) {
	if s == nil {
		return nil, false
	}
	sk, ok := s.byName[name]
	return sk, ok
}

// List returns every skill, sorted by name.
func (s *Set) List() []*Skill {
	if s == nil {
		return nil
	}
	out := make([]*Skill, 0, len(s.order))
	for _, n := range s.order {
		out = append(out, s.byName[n])
	}
	return out
}

// Len is how many skills the set holds.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.order)
}

// Narrow returns the set with only the named skills (an agent file's
// `skills:`); nil names keeps them all, names the set lacks are ignored.
func (s *Set) Narrow(names []string) *Set {
	if names == nil || s == nil {
		return s
	}
	out := &Set{byName: map[string]*Skill{}}
	for _, n := range s.order {
		if slices.Contains(names, n) {
			out.byName[n] = s.byName[n]
			out.order = append(out.order, n)
		}
	}
	return out
}

// Dirs are the folders of the skills in the set: a confined process must
// be able to read them (never write), wherever they lie.
func (s *Set) Dirs() []string {
	var out []string
	for _, sk := range s.List() {
		out = append(out, sk.Dir)
	}
	return out
}

// Options say where Discover looks.
type Options struct {
	// Cwd is the workspace (absolute).
	Cwd string
	// Home is $REINS_HOME; UserHome the user's home directory ("" skips
	// ~/.claude/skills and ~/.agents/skills, and bounds nothing).
	Home, UserHome string
	// Trusted says whether a project folder is trusted (trust.Gate.Trusted);
	// nil trusts none: no project skill is read.
	Trusted func(dir string) bool
	// Honour is asked about every project file read, with its bytes
	// (trust.Gate.Honour); a skill with a file it refuses is not used.
	// nil honours all (tests of the loader).
	Honour func(dir, rel string, content []byte) bool
}

// projectFolders are a project folder's skills folders, in the order a
// name clash is decided (reins's own first).
var projectFolders = []string{".reins/skills", ".claude/skills", ".agents/skills"}

// base is one skills folder to read.
type base = projectdirs.Folder

// Folders are the skills folders Discover reads for o, in precedence
// order: the user's own first (as Claude Code: a personal skill wins over
// a project's of the same name, so a repository cannot replace one), then
// the project's from the workspace up to the repository root, nearest
// first. A project folder that is not trusted is left out.
func (o Options) folders() []base {
	var user []string
	if o.Home != "" {
		user = append(user, filepath.Join(o.Home, "skills"))
	}
	if o.UserHome != "" {
		user = append(user, filepath.Join(o.UserHome, ".claude", "skills"), filepath.Join(o.UserHome, ".agents", "skills"))
	}
	return projectdirs.Folders(user, o.Cwd, o.UserHome, o.Trusted, projectFolders)
}

// Discover reads the skills o names. A folder that does not exist is
// fine; a skill that is not valid is skipped with one warning naming its
// SKILL.md; a name found again in a later folder is shadowed silently (the
// first, by Options.folders' order, wins).
func Discover(o Options) (*Set, []Warning) {
	set := &Set{byName: map[string]*Skill{}}
	var warnings []Warning
	for _, b := range o.folders() {
		entries, err := os.ReadDir(b.Dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
				warnings = append(warnings, Warning{File: b.Dir, Message: "skills folder skipped: cannot be read"})
			}
			continue
		}
		n := 0
		for _, e := range entries { // sorted by name
			dir := filepath.Join(b.Dir, e.Name())
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				continue
			}
			file := filepath.Join(dir, FileName)
			if _, err := os.Lstat(file); err != nil {
				continue // a folder without SKILL.md is no skill
			}
			if n++; n > MaxPerFolder {
				warnings = append(warnings, Warning{File: b.Dir, Message: fmt.Sprintf("only the first %d skills of this folder are read", MaxPerFolder)})
				break
			}
			sk, w := load(o, b, e.Name())
			if w != nil {
				warnings = append(warnings, *w)
				continue
			}
			if sk == nil {
				continue // refused by the pins: the start stops on it
			}
			if _, ok := set.byName[sk.Name]; ok {
				continue
			}
			set.byName[sk.Name] = sk
			set.order = append(set.order, sk.Name)
		}
	}
	slices.Sort(set.order)
	return set, warnings
}

// load reads the skill in folder name of b: (nil, nil) when the pins
// refused one of its files.
func load(o Options, b base, name string) (*Skill, *Warning) {
	dir := filepath.Join(b.Dir, name)
	file := filepath.Join(dir, FileName)
	src, err := smallfile.Read(file, smallfile.Limit)
	if err != nil {
		return nil, &Warning{File: file, Message: "skill skipped: not a readable regular file of at most 1 MiB"}
	}
	honour := func(rel string, content []byte) bool {
		return Origin(b.Origin()) != OriginProject || o.Honour == nil || o.Honour(b.Project, path.Join(b.Rel, name, rel), content)
	}
	if !honour(FileName, src) {
		return nil, nil
	}
	sk, err := Parse(src, name)
	if err != nil {
		return nil, &Warning{File: file, Message: "skill skipped: " + err.Error()}
	}
	sk.Dir, sk.File, sk.Origin = dir, file, Origin(b.Origin())
	files, ok := otherFiles(dir, func(rel string) bool {
		if Origin(b.Origin()) != OriginProject {
			return true
		}
		content, err := smallfile.Read(filepath.Join(dir, filepath.FromSlash(rel)), smallfile.Limit)
		if err != nil {
			return true // not a small regular file: never pinned, read only through read's own checks
		}
		return honour(rel, content)
	})
	if !ok {
		return nil, nil
	}
	sk.Files = files
	return sk, nil
}

// otherFiles lists dir's files but SKILL.md (bounded), asking check about
// each; ok is false when check refused one.
func otherFiles(dir string, check func(rel string) bool) (files []string, ok bool) {
	var walk func(d, rel string, depth int) bool
	walk = func(d, rel string, depth int) bool {
		if depth > maxDepth {
			return true
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			return true
		}
		for _, e := range entries {
			r := path.Join(rel, e.Name())
			if e.IsDir() {
				if !walk(filepath.Join(d, e.Name()), r, depth+1) {
					return false
				}
				continue
			}
			if r == FileName {
				continue
			}
			if len(files) >= maxFiles {
				return true
			}
			if !check(r) {
				return false
			}
			files = append(files, r)
		}
		return true
	}
	ok = walk(dir, "", 0)
	slices.Sort(files)
	return files, ok
}

// frontMatter is SKILL.md's front matter as the format defines it, with
// Claude Code's additions read or tolerated.
type frontMatter struct {
	Name          *string        `yaml:"name"`
	Description   *string        `yaml:"description"`
	License       string         `yaml:"license"`
	Compatibility string         `yaml:"compatibility"`
	AllowedTools  any            `yaml:"allowed-tools"`
	Metadata      map[string]any `yaml:"metadata"`
}

// ValidName reports whether s is a skill name: 1 to 64 lowercase letters,
// digits and hyphens, neither starting nor ending with a hyphen, no two
// hyphens in a row.
func ValidName(s string) bool {
	if s == "" || len(s) > MaxNameLen || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// Parse reads one SKILL.md whose folder is named folder. Its errors are
// reins's own text (they name fields, never quote the file).
func Parse(src []byte, folder string) (*Skill, error) {
	if !utf8.Valid(src) {
		return nil, errors.New("not UTF-8 text")
	}
	front, body, ok := frontmatter.Split(src)
	if !ok {
		return nil, errors.New("no front matter (a SKILL.md opens with --- lines holding name and description)")
	}
	var fm frontMatter
	if err := yaml.Unmarshal(front, &fm); err != nil {
		return nil, errors.New("front matter is not valid YAML of the Agent Skills fields" + frontmatter.Hint(front))
	}
	switch {
	case fm.Name == nil || *fm.Name == "":
		return nil, errors.New("name is missing")
	case !ValidName(*fm.Name):
		return nil, fmt.Errorf("name must be 1 to %d lowercase letters, digits and single hyphens, not starting or ending with one", MaxNameLen)
	case *fm.Name != folder:
		return nil, errors.New("name differs from its folder's name")
	case fm.Description == nil || strings.TrimSpace(*fm.Description) == "":
		return nil, errors.New("description is missing")
	case utf8.RuneCountInString(*fm.Description) > MaxDescriptionLen:
		return nil, fmt.Errorf("description is longer than %d characters", MaxDescriptionLen)
	}
	sk := &Skill{Name: *fm.Name, Description: strings.TrimSpace(*fm.Description), License: fm.License, Body: body}
	if fm.AllowedTools != nil {
		names, err := ToolNames(fm.AllowedTools)
		if err != nil {
			return nil, err
		}
		sk.AllowedTools = names
	}
	for k, v := range fm.Metadata {
		if sk.Metadata == nil {
			sk.Metadata = map[string]string{}
		}
		sk.Metadata[k] = fmt.Sprint(v)
	}
	return sk, nil
}

// claudeTool maps one of Claude Code's tool names (any case) to reins's,
// "" for a tool reins lacks. A switch, not a map: a package-level map
// would be built at every reins start (internal/lazy).
func claudeTool(name string) string {
	switch n := strings.ToLower(name); n {
	case "bash", "read", "write", "edit", "grep", "glob", "ls", "webfetch", "todo", "apply_patch", "skill",
		"multi_edit", "subagent", "bash_output", "bash_kill":
		return n
	case "multiedit":
		return "multi_edit"
	case "task":
		return "subagent"
	case "todowrite":
		return "todo"
	case "bashoutput":
		return "bash_output"
	case "killshell", "killbash":
		return "bash_kill"
	}
	return ""
}

// ToolNames reads allowed-tools — a list, a comma-separated string
// (Claude Code) or a space-separated one (the Agent Skills format) — as
// reins tool names. A rule's argument pattern (Bash(git:*)) narrows to the
// tool as a whole; names reins lacks are dropped (the skill gets less,
// never more). An MCP tool name is kept as written.
func ToolNames(v any) ([]string, error) {
	var raw []string
	switch t := v.(type) {
	case string:
		raw = splitTools(t)
	case []any:
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				return nil, errors.New("allowed-tools must be a list of tool names or one string of them")
			}
			raw = append(raw, s)
		}
	default:
		return nil, errors.New("allowed-tools must be a list of tool names or one string of them")
	}
	out := []string{}
	for _, r := range raw {
		r = strings.TrimSpace(r)
		if i := strings.IndexByte(r, '('); i >= 0 {
			r = r[:i]
		}
		name := r
		if !strings.HasPrefix(r, "mcp__") {
			name = claudeTool(r)
		}
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// splitTools splits a tools string at commas, or at spaces outside
// parentheses when there is no comma.
func splitTools(s string) []string {
	if strings.Contains(s, ",") {
		return strings.Split(s, ",")
	}
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch {
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case (c == ' ' || c == '\t') && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
