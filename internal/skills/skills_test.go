package skills

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/tool"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestParse(t *testing.T) {
	long := strings.Repeat("d", MaxDescriptionLen+1)
	for _, tc := range []struct {
		name, folder, src, err string
		tools                  []string
	}{
		{"minimal", "pdf", "---\nname: pdf\ndescription: Work with PDFs.\n---\nbody", "", nil},
		{"crlf and bom", "pdf", "\ufeff---\r\nname: pdf\r\ndescription: x\r\n---\r\nbody", "", nil},
		{"no front matter", "pdf", "# pdf\n", "no front matter", nil},
		{"unclosed", "pdf", "---\nname: pdf\n", "no front matter", nil},
		{"bad yaml", "pdf", "---\nname: [\n---\n", "not valid YAML", nil},
		{"unquoted colon", "pdf", "---\nname: pdf\ndescription: Work with PDFs: extract text\n---\n", `line 3: a value holding ": " needs quotes`, nil},
		{"no name", "pdf", "---\ndescription: x\n---\n", "name is missing", nil},
		{"upper", "Pdf", "---\nname: Pdf\ndescription: x\n---\n", "lowercase", nil},
		{"underscore", "a_b", "---\nname: a_b\ndescription: x\n---\n", "lowercase", nil},
		{"double hyphen", "a--b", "---\nname: a--b\ndescription: x\n---\n", "lowercase", nil},
		{"leading hyphen", "-a", "---\nname: -a\ndescription: x\n---\n", "lowercase", nil},
		{"too long", strings.Repeat("a", 65), "---\nname: " + strings.Repeat("a", 65) + "\ndescription: x\n---\n", "lowercase", nil},
		{"64 is fine", strings.Repeat("a", 64), "---\nname: " + strings.Repeat("a", 64) + "\ndescription: x\n---\n", "", nil},
		{"folder differs", "other", "---\nname: pdf\ndescription: x\n---\n", "differs from its folder", nil},
		{"no description", "pdf", "---\nname: pdf\n---\n", "description is missing", nil},
		{"blank description", "pdf", "---\nname: pdf\ndescription: '  '\n---\n", "description is missing", nil},
		{"description too long", "pdf", "---\nname: pdf\ndescription: " + long + "\n---\n", "longer than 1024", nil},
		{"tools, spaces (the format)", "pdf", "---\nname: pdf\ndescription: x\nallowed-tools: Bash(git add:*) Read\n---\n", "", []string{"bash", "read"}},
		{"tools, commas (Claude Code)", "pdf", "---\nname: pdf\ndescription: x\nallowed-tools: Read, Grep, Nope, mcp__s__t\n---\n", "", []string{"read", "grep", "mcp__s__t"}},
		{"tools, list", "pdf", "---\nname: pdf\ndescription: x\nallowed-tools: [Write, Task]\n---\n", "", []string{"write", "subagent"}},
		{"tools, none known", "pdf", "---\nname: pdf\ndescription: x\nallowed-tools: Nope\n---\n", "", []string{}},
		{"tools, bad", "pdf", "---\nname: pdf\ndescription: x\nallowed-tools: {a: 1}\n---\n", "allowed-tools", nil},
		{"not utf-8", "pdf", "---\nname: pdf\ndescription: \xff\n---\n", "UTF-8", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sk, err := Parse([]byte(tc.src), tc.folder)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (tc.tools == nil) != (sk.AllowedTools == nil) || strings.Join(tc.tools, ",") != strings.Join(sk.AllowedTools, ",") {
				t.Errorf("tools %#v, want %#v", sk.AllowedTools, tc.tools)
			}
		})
	}
}

// A broken skill is skipped with one warning naming its SKILL.md and
// never its content; the others load. The user's own skill wins a name
// clash with a project's; a project folder that is not trusted is not read.
func TestDiscover(t *testing.T) {
	home, user, repo := t.TempDir(), t.TempDir(), t.TempDir()
	ws := filepath.Join(repo, "sub")
	write(t, repo, map[string]string{
		".git/HEAD":                               "ref: refs/heads/main\n",
		".agents/skills/root/SKILL.md":            "---\nname: root\ndescription: from the repository root\n---\nroot body",
		"sub/.claude/skills/near/SKILL.md":        "---\nname: near\ndescription: near\n---\n",
		"sub/.claude/skills/clash/SKILL.md":       "---\nname: clash\ndescription: the project's\n---\n",
		"sub/.reins/skills/broken/SKILL.md":       "---\nname: Broken\ndescription: \x1b[31mEVIL\n---\n",
		"sub/.reins/skills/nofile/README.md":      "not a skill",
		"sub/.claude/skills/near/scripts/a.sh":    "echo a\n",
		"sub/.claude/skills/near/references/r.md": "r\n",
	})
	write(t, user, map[string]string{".claude/skills/clash/SKILL.md": "---\nname: clash\ndescription: the user's\n---\n"})
	write(t, home, map[string]string{"skills/mine/SKILL.md": "---\nname: mine\ndescription: mine\n---\n"})

	trusted := map[string]bool{ws: true, repo: true}
	var honoured []string
	o := Options{Cwd: ws, Home: home, UserHome: user, Trusted: func(d string) bool { return trusted[d] },
		Honour: func(dir, rel string, _ []byte) bool { honoured = append(honoured, rel); return true }}
	set, ws1 := Discover(o)
	var names []string
	for _, sk := range set.List() {
		names = append(names, sk.Name+"/"+string(sk.Origin))
	}
	if got := strings.Join(names, " "); got != "clash/user mine/user near/project root/project" {
		t.Errorf("skills %s", got)
	}
	if len(ws1) != 1 || !strings.HasSuffix(ws1[0].File, filepath.Join("broken", "SKILL.md")) || strings.Contains(ws1[0].String(), "EVIL") {
		t.Errorf("warnings %v", ws1)
	}
	near, _ := set.Get("near")
	if strings.Join(near.Files, ",") != "references/r.md,scripts/a.sh" {
		t.Errorf("near files %v", near.Files)
	}
	if !strings.Contains(strings.Join(honoured, ","), ".claude/skills/near/scripts/a.sh") {
		t.Errorf("the project skill's scripts were not checked against the pins: %v", honoured)
	}

	// The pins refuse one file of near: near is not used at all.
	o.Honour = func(dir, rel string, _ []byte) bool { return !strings.HasSuffix(rel, "a.sh") }
	set, _ = Discover(o)
	if _, ok := set.Get("near"); ok {
		t.Error("a skill whose script the pins refused is used")
	}
	// Untrusted: only the user's.
	o.Trusted = func(string) bool { return false }
	set, _ = Discover(o)
	if set.Len() != 2 {
		t.Errorf("untrusted: %d skills", set.Len())
	}
	if sk, _ := set.Get("clash"); sk.Description != "the user's" {
		t.Errorf("clash is %q", sk.Description)
	}
}

// The catalog names and describes (cut at 250 characters, whitespace
// folded) but never carries a body, and it stays bounded however many
// skills there are.
func TestCatalogBounds(t *testing.T) {
	set := &Set{byName: map[string]*Skill{}}
	for i := range 300 {
		name := "skill-" + strings.Repeat("x", i%5) + string(rune('a'+i%26)) + "-" + strconv.Itoa(i)
		set.byName[name] = &Skill{Name: name, Description: strings.Repeat("word\n", 200), Body: "SECRET BODY"}
		set.order = append(set.order, name)
	}
	c := Catalog(set)
	if len(c) > MaxCatalogBytes+200 || strings.Contains(c, "SECRET BODY") || !strings.Contains(c, "more skills are not listed") {
		t.Errorf("catalog %d bytes", len(c))
	}
	for _, line := range strings.Split(c, "\n") {
		if strings.HasPrefix(line, "- ") {
			_, desc, _ := strings.Cut(line, ": ")
			if n := len([]rune(desc)); n != CatalogDescriptionLen+1 || !strings.HasSuffix(desc, "…") {
				t.Fatalf("description of %d characters: %q", n, desc)
			}
		}
	}
	if Catalog(&Set{}) != "" {
		t.Error("a catalog without skills")
	}
}

func itoa(i int) string {
	return strings.TrimSpace(strings.Repeat(" ", 0) + string(rune('0'+i/100)) + string(rune('0'+i/10%10)) + string(rune('0'+i%10)))
}

// allowed-tools narrows the turn the skill was loaded in and no other,
// never lets the skill tool itself be refused, and a second skill narrows
// further.
func TestNarrow(t *testing.T) {
	set := &Set{byName: map[string]*Skill{
		"a": {Name: "a", AllowedTools: []string{"read", "bash"}},
		"b": {Name: "b", AllowedTools: []string{"read"}},
		"c": {Name: "c"},
	}, order: []string{"a", "b", "c"}}
	next := 2 // turn 1 is running
	n := &tool.Narrowing{Turn: func() int { return next }}
	l := &Loader{Set: set, Narrowing: n}
	if n.Check("grep") != "" {
		t.Error("narrowed before any load")
	}
	l.Load("c", ByModel)
	if n.Check("grep") != "" {
		t.Error("a skill without allowed-tools narrowed")
	}
	l.Load("a", ByModel)
	if n.Check("grep") == "" || n.Check("bash") != "" || n.Check("skill") != "" {
		t.Error("a's narrowing")
	}
	l.Load("b", ByModel)
	if n.Check("bash") == "" || n.Check("read") != "" {
		t.Error("b did not narrow further")
	}
	next = 3 // the next turn
	if n.Check("grep") != "" {
		t.Error("narrowing outlived its turn")
	}
	l.Load("b", ByUser) // before turn 3 starts
	if n.Check("grep") != "" {
		t.Error("the user's load narrowed the turn that ended")
	}
	next = 4 // turn 3 running
	if n.Check("grep") == "" {
		t.Error("the user's load did not narrow its turn")
	}
}
