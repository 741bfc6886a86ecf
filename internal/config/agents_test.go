package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type agentDirs struct {
	home, cwd string
}

func newAgentDirs(t *testing.T) agentDirs {
	root := t.TempDir()
	return agentDirs{home: filepath.Join(root, "home"), cwd: filepath.Join(root, "work")}
}

func (a agentDirs) reins(t *testing.T, file, content string) string {
	return writeFile(t, filepath.Join(a.cwd, ".reins", "agents", file), content)
}

func (a agentDirs) claude(t *testing.T, file, content string) string {
	return writeFile(t, filepath.Join(a.cwd, ".claude", "agents", file), content)
}

func (a agentDirs) homeAgent(t *testing.T, file, content string) string {
	return writeFile(t, filepath.Join(a.home, "agents", file), content)
}

func agentFile(front, body string) string { return "---\n" + front + "---\n" + body }

func TestAgentDiscoveryPrecedence(t *testing.T) {
	d := newAgentDirs(t)
	// "shared" exists in all three; "cc" in .claude and home; each dir has one of its own.
	reinsShared := d.reins(t, "shared.md", agentFile("description: from reins\n", "reins prompt"))
	d.claude(t, "shared.md", agentFile("description: from claude\n", "claude prompt"))
	d.homeAgent(t, "shared.md", agentFile("description: from home\n", "home prompt"))
	claudeCC := d.claude(t, "cc.md", agentFile("description: cc from claude\n", "x"))
	d.homeAgent(t, "cc.md", agentFile("description: cc from home\n", "x"))
	homeOnly := d.homeAgent(t, "h.md", agentFile("", "home only"))
	reinsOnly := d.reins(t, "r.md", agentFile("", "reins only"))
	// A file whose name: differs from its base name clashes by name, not file.
	d.homeAgent(t, "other-file.md", agentFile("name: r\n", "shadowed by reins r"))
	d.reins(t, "notes.txt", "not an agent")

	ags, warns, err := LoadAgents(LoadOptions{Home: d.home, Cwd: d.cwd, Trusted: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Errorf("warnings: %v", warns)
	}
	want := map[string]struct{ source, desc string }{
		"shared":  {reinsShared, "from reins"},
		"cc":      {claudeCC, "cc from claude"},
		"h":       {homeOnly, ""},
		"r":       {reinsOnly, ""},
		"general": {"builtin", GeneralAgent().Description},
	}
	var names []string
	for _, a := range ags.List() {
		names = append(names, a.Name)
	}
	if d := cmp.Diff([]string{"cc", "general", "h", "r", "shared"}, names); d != "" {
		t.Errorf("List names (-want +got):\n%s", d)
	}
	for name, w := range want {
		a, ok := ags.Get(name)
		if !ok {
			t.Errorf("agent %q missing", name)
			continue
		}
		if a.Source != w.source || a.Description != w.desc {
			t.Errorf("agent %q: source %q desc %q, want %q %q", name, a.Source, a.Description, w.source, w.desc)
		}
	}
	if a, _ := ags.Get("shared"); a.SystemPrompt != "reins prompt" {
		t.Errorf("shared prompt = %q", a.SystemPrompt)
	}
	if _, ok := ags.Get("other-file"); ok {
		t.Error("agent named after file although name: is set")
	}
}

func TestAgentFields(t *testing.T) {
	cfg := Default()
	cfg.ModelAliases = map[string]string{"sonnet": "anthropic/claude-sonnet-4-5", "fast": "deepseek/deepseek-chat"}
	tests := []struct {
		name  string
		file  string
		want  Agent
		warns []string
	}{
		{
			name: "defaults",
			file: agentFile("", "\n\n  Be brief.  \n\n"),
			want: Agent{Name: "a", Provider: "inprocess", Permission: "reject", SystemPrompt: "Be brief."},
		},
		{
			name: "every field",
			file: agentFile(`name: reviewer
description: Reviews a diff for bugs
provider: acp
model: whatever-acp-says
tools: read, grep, glob
command: claude-code-acp
args: [--verbose, "--x=1"]
env: {FOO: bar, N: 1}
permission: allow
timeout: 10m
`, "You review diffs.\n"),
			want: Agent{Name: "reviewer", Description: "Reviews a diff for bugs", Provider: "acp", Model: "whatever-acp-says",
				Tools: []string{"read", "grep", "glob"}, Command: "claude-code-acp", Args: []string{"--verbose", "--x=1"},
				Env: map[string]string{"FOO": "bar", "N": "1"}, Permission: "allow", Timeout: 10 * time.Minute,
				SystemPrompt: "You review diffs."},
		},
		{
			name: "tools as a list",
			file: agentFile("tools:\n  - read\n  - Bash\n  - ls\n", "p"),
			want: Agent{Name: "a", Provider: "inprocess", Permission: "reject", Tools: []string{"read", "bash", "ls"}, SystemPrompt: "p"},
		},
		{
			name: "tools as a flow list, duplicates folded",
			file: agentFile("tools: [read, Read, subagent, job_output]\n", "p"),
			want: Agent{Name: "a", Provider: "inprocess", Permission: "reject", Tools: []string{"read", "subagent", "job_output"}, SystemPrompt: "p"},
		},
		{
			name:  "only unknown tools leaves an empty allowlist, not the parent's tools",
			file:  agentFile("tools: WebFetch\n", "p"),
			want:  Agent{Name: "a", Provider: "inprocess", Permission: "reject", Tools: []string{}, SystemPrompt: "p"},
			warns: []string{`agent "a": tool "WebFetch" is not available in reins; dropped`},
		},
		{
			name: "tools: profile NAME picks a tool profile and keeps the parent's tools",
			file: agentFile("tools: profile Codex\n", "p"),
			want: Agent{Name: "a", Provider: "inprocess", Permission: "reject", ToolProfile: "codex", SystemPrompt: "p"},
		},
		{
			name: "alias-mapped model",
			file: agentFile("model: sonnet\n", "p"),
			want: Agent{Name: "a", Provider: "inprocess", Permission: "reject", Model: "anthropic/claude-sonnet-4-5", SystemPrompt: "p"},
		},
		{
			name: "any configured alias applies",
			file: agentFile("model: fast\n", "p"),
			want: Agent{Name: "a", Provider: "inprocess", Permission: "reject", Model: "deepseek/deepseek-chat", SystemPrompt: "p"},
		},
		{
			name: "unmapped Claude shorthand means the parent's model",
			file: agentFile("model: opus\n", "p"),
			want: Agent{Name: "a", Provider: "inprocess", Permission: "reject", SystemPrompt: "p"},
		},
		{
			name: "inherit",
			file: agentFile("model: inherit\n", "p"),
			want: Agent{Name: "a", Provider: "inprocess", Permission: "reject", SystemPrompt: "p"},
		},
		{
			name: "pi model kept as written, command defaults to pi",
			file: agentFile("provider: pi\nmodel: sonnet\n", "p"),
			want: Agent{Name: "a", Provider: "pi", Permission: "reject", Model: "sonnet", Command: "pi", SystemPrompt: "p"},
		},
		{
			name: "CRLF and empty front matter",
			file: "---\r\n---\r\nline one\r\nline two\r\n",
			want: Agent{Name: "a", Provider: "inprocess", Permission: "reject", SystemPrompt: "line one\nline two"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newAgentDirs(t)
			path := d.reins(t, "a.md", tt.file)
			ags, warns, err := LoadAgents(LoadOptions{Home: d.home, Cwd: d.cwd, Trusted: true}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := ags.Get(tt.want.Name)
			if !ok {
				t.Fatalf("agent %q not found", tt.want.Name)
			}
			want := tt.want
			want.Source = path
			if d := cmp.Diff(&want, got); d != "" {
				t.Errorf("agent (-want +got):\n%s", d)
			}
			var msgs []string
			for _, w := range warns {
				msgs = append(msgs, w.Message)
				if w.File != path {
					t.Errorf("warning file %q, want %q", w.File, path)
				}
			}
			if d := cmp.Diff(tt.warns, msgs); d != "" {
				t.Errorf("warnings (-want +got):\n%s", d)
			}
		})
	}
}

func TestClaudeCodeAgentReadsAsIs(t *testing.T) {
	d := newAgentDirs(t)
	path := d.claude(t, "code-reviewer.md", `---
name: code-reviewer
description: Expert code review specialist. Use after writing code.
tools: Read, Grep, WebFetch
model: sonnet
color: blue
---

You are a senior code reviewer.
`)
	ags, warns, err := LoadAgents(LoadOptions{Home: d.home, Cwd: d.cwd, Trusted: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := ags.Get("code-reviewer")
	if !ok {
		t.Fatal("code-reviewer not loaded")
	}
	if d := cmp.Diff([]string{"read", "grep"}, a.Tools); d != "" {
		t.Errorf("Tools (-want +got):\n%s", d)
	}
	if a.Model != "" || a.Provider != "inprocess" || a.SystemPrompt != "You are a senior code reviewer." || a.Source != path {
		t.Errorf("agent = %+v", a)
	}
	want := []Warning{{File: path, Agent: "code-reviewer", Message: `agent "code-reviewer": tool "WebFetch" is not available in reins; dropped`}}
	if d := cmp.Diff(want, warns); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
	if s := warns[0].String(); !strings.HasPrefix(s, path+": ") {
		t.Errorf("Warning.String() = %q", s)
	}
}

func TestClaudeFilesAreLenientReinsFilesStrict(t *testing.T) {
	const front = "description: d\npriority: high\n"

	d := newAgentDirs(t)
	path := d.claude(t, "x.md", agentFile(front, "p"))
	ags, warns, err := LoadAgents(LoadOptions{Home: d.home, Cwd: d.cwd, Trusted: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ags.Get("x"); !ok {
		t.Error("claude agent with an unknown key not loaded")
	}
	if len(warns) != 1 || warns[0].File != path || !strings.Contains(warns[0].Message, `unknown key "priority"`) {
		t.Errorf("warnings = %v, want one about priority", warns)
	}

	// reins's own files are strict: the file is skipped, with one warning
	// naming file, line and key, and naming the agent fails alike.
	for _, write := range []func(agentDirs, *testing.T, string, string) string{agentDirs.reins, agentDirs.homeAgent} {
		d := newAgentDirs(t)
		path := write(d, t, "x.md", agentFile(front, "p"))
		ags, warns, err := LoadAgents(LoadOptions{Home: d.home, Cwd: d.cwd, Trusted: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ags.Get("x"); ok {
			t.Error("strict agent with an unknown key loaded")
		}
		want := path + `: skipped: line 3: unknown key "priority"`
		if len(warns) != 1 || !strings.HasPrefix(warns[0].String(), want) {
			t.Errorf("warnings = %v, want one starting %q", warns, want)
		}
		if b := ags.Broken("x"); b == nil || b.Error() != warns[0].String() {
			t.Errorf("Broken(x) = %v", b)
		}
	}
}

func TestAgentErrors(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		kind     ErrorKind
		key      string
		line     int
		contains string
	}{
		{"no front matter", "You are an agent.\n", KindFrontMatter, "", 1, "want YAML front matter"},
		{"unclosed front matter", "---\nname: x\nbody\n", KindFrontMatter, "", 1, "want YAML front matter"},
		{"bad YAML", "---\nname: x\ntools: [read\n---\nbody\n", KindSyntax, "", 3, "invalid YAML"},
		{"bad provider", "---\nprovider: docker\n---\n", KindValue, "provider", 2, "one of inprocess, acp, reins, pi"},
		{"bad permission", "---\npermission: ask\n---\n", KindValue, "permission", 2, "reject or allow"},
		{"bad timeout", "---\ntimeout: soon\n---\n", KindValue, "timeout", 2, "want a duration such as 500ms"},
		{"bad model", "---\nmodel: gpt-4o\n---\n", KindValue, "model", 2, "PROVIDER/MODEL"},
		{"bad name", "---\nname: my agent\n---\n", KindValue, "name", 2, "letters, digits"},
		{"tools wrong type", "---\ntools: {read: true}\n---\n", KindValue, "tools", 2, "comma-separated"},
		{"bad tool profile", "---\ntools: profile gemini\n---\n", KindValue, "tools", 2, "profile codex, profile claude or profile minimal"},
		{"env wrong type", "---\nenv: [A=1]\n---\n", KindValue, "env", 2, "want a mapping"},
		{"acp without command", "---\nprovider: acp\n---\n", KindValue, "command", 0, "needs one"},
		{"bad isolation", "---\nisolation: container\n---\n", KindValue, "isolation", 2, "worktree"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newAgentDirs(t)
			path := d.reins(t, "bad.md", tt.file)
			// The loader skips the file; parsing it alone gives the error.
			ags, warns, err := LoadAgents(LoadOptions{Home: d.home, Cwd: d.cwd, Trusted: true}, nil)
			if err != nil || len(warns) != 1 || ags.Broken("bad") == nil && ags.Broken("x") == nil {
				t.Fatalf("LoadAgents: err %v, warnings %v; want the file skipped with one warning", err, warns)
			}
			_, _, err = parseAgent(path, []byte(tt.file), false, Default())
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if ce.Kind != tt.kind || ce.File != path || ce.Key != tt.key || (tt.line != 0 && ce.Line != tt.line) {
				t.Errorf("got kind %d file %q key %q line %d; want kind %d file %q key %q line %d",
					ce.Kind, ce.File, ce.Key, ce.Line, tt.kind, path, tt.key, tt.line)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path+":") || !strings.Contains(msg, tt.contains) {
				t.Errorf("message %q: want it to start with %s and contain %q", msg, path, tt.contains)
			}
			if tt.key != "" && !strings.Contains(msg, `"`+tt.key+`"`) {
				t.Errorf("message %q does not name key %q", msg, tt.key)
			}
		})
	}
}

func TestBadClaudeFileIsSkippedWithWarning(t *testing.T) {
	d := newAgentDirs(t)
	path := d.claude(t, "broken.md", "---\ndescription: Use this: when x\n---\nbody\n")
	d.claude(t, "fine.md", agentFile("model: claude-3-opus-20240229\n", "p"))
	ags, warns, err := LoadAgents(LoadOptions{Home: d.home, Cwd: d.cwd, Trusted: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ags.Get("broken"); ok {
		t.Error("broken agent loaded")
	}
	fine, ok := ags.Get("fine")
	if !ok || fine.Model != "" {
		t.Errorf("fine = %+v, %v; want loaded with the parent's model", fine, ok)
	}
	if len(warns) != 2 {
		t.Fatalf("warnings = %v, want 2", warns)
	}
	if warns[0].File != path || !strings.HasPrefix(warns[0].Message, "skipped: line 2: invalid YAML") || strings.Contains(warns[0].Message, path) {
		t.Errorf("warning 0 = %+v", warns[0])
	}
	if !strings.Contains(warns[1].Message, "using the parent's model") {
		t.Errorf("warning 1 = %+v", warns[1])
	}
}

func TestGeneralBuiltinAndOverride(t *testing.T) {
	d := newAgentDirs(t)
	ags, _, err := LoadAgents(LoadOptions{Home: d.home, Cwd: d.cwd, Trusted: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := ags.Get("general")
	if !ok || g.Source != "builtin" || g.Provider != "inprocess" || g.Model != "" || g.Tools != nil || g.SystemPrompt == "" {
		t.Errorf("builtin general = %+v", g)
	}
	path := d.homeAgent(t, "general.md", agentFile("tools: read\n", "custom general"))
	ags, _, err = LoadAgents(LoadOptions{Home: d.home, Cwd: d.cwd, Trusted: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := ags.Get("general"); g.Source != path || g.SystemPrompt != "custom general" {
		t.Errorf("general not overridden: %+v", g)
	}
}

func TestDuplicateNameInOneDirectory(t *testing.T) {
	d := newAgentDirs(t)
	first := d.reins(t, "a.md", agentFile("name: same\n", "1"))
	second := d.reins(t, "b.md", agentFile("name: same\n", "2"))
	ags0, warns0, err := LoadAgents(LoadOptions{Home: d.home, Cwd: d.cwd, Trusted: true}, nil)
	if err != nil || len(warns0) != 1 || warns0[0].File != second || !strings.Contains(warns0[0].String(), first) {
		t.Errorf("err = %v, warnings %v; want the second file skipped, naming %s and %s", err, warns0, first, second)
	}
	if a, _ := ags0.Get("same"); a == nil || a.Source != first {
		t.Errorf("same = %+v, want from %s", a, first)
	}

	// In .claude the second is skipped with a warning.
	d = newAgentDirs(t)
	first = d.claude(t, "a.md", agentFile("name: same\n", "1"))
	d.claude(t, "b.md", agentFile("name: same\n", "2"))
	ags, warns, err := LoadAgents(LoadOptions{Home: d.home, Cwd: d.cwd, Trusted: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := ags.Get("same"); a == nil || a.Source != first {
		t.Errorf("same = %+v, want from %s", a, first)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].Message, "skipped") {
		t.Errorf("warnings = %v", warns)
	}
}

func TestShadowedAgentWarningsAreDropped(t *testing.T) {
	d := newAgentDirs(t)
	d.reins(t, "x.md", agentFile("tools: read\n", "p"))
	d.claude(t, "x.md", agentFile("tools: Read, WebSearch\n", "p"))
	_, warns, err := LoadAgents(LoadOptions{Home: d.home, Cwd: d.cwd, Trusted: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Errorf("warnings from a shadowed file: %v", warns)
	}
}

func TestLoadAgentsEmptyDirsSkipped(t *testing.T) {
	ags, warns, err := LoadAgents(LoadOptions{}, nil)
	if err != nil || len(warns) != 0 {
		t.Fatal(err, warns)
	}
	if l := ags.List(); len(l) != 1 || l[0].Name != "general" {
		t.Errorf("List = %v, want only general", l)
	}
}
