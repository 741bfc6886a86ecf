package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/tool"
)

// Bounds of the catalog in the system prompt: each description is cut at
// CatalogDescriptionLen characters, at most MaxListed skills are named
// and the whole list stays under MaxCatalogBytes; the rest are counted,
// not named (the skill tool still loads them by name).
const (
	CatalogDescriptionLen = 250
	MaxListed             = 100
	MaxCatalogBytes       = 24 << 10
)

// Catalog is the section of the system prompt that names the skills: one
// line each, name and description (whitespace folded, cut), or "" for
// none. It is the only part of a skill the model sees before it asks.
func Catalog(s *Set) string {
	list := s.List()
	if len(list) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n<skills>\nSkills are instructions for particular tasks. When a task matches one, call skill with its name before you start and follow it; its files are relative to its folder.\n")
	shown := 0
	for _, sk := range list {
		line := "- " + sk.Name + ": " + cutRunes(strings.Join(strings.Fields(sk.Description), " "), CatalogDescriptionLen) + "\n"
		if shown == MaxListed || b.Len()+len(line) > MaxCatalogBytes {
			break
		}
		b.WriteString(line)
		shown++
	}
	if shown < len(list) {
		fmt.Fprintf(&b, "(%d more skills are not listed)\n", len(list)-shown)
	}
	b.WriteString("</skills>")
	return b.String()
}

// cutRunes cuts s to at most n characters, marking a cut with "…".
func cutRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}

// Load is one skill's load, for the session log (session.SkillLoad).
type Load struct {
	Skill *Skill
	// By is "model" or "user".
	By string
}

// Who loads a skill.
const (
	ByModel = "model"
	ByUser  = "user"
)

// Loader serves a session's skills: the skill tool and the user's /NAME.
type Loader struct {
	Set *Set
	// Narrowing is the session's (tool.Narrowing): a loaded skill's
	// allowed-tools narrow its turn. nil: they narrow nothing.
	Narrowing *tool.Narrowing
	// Record, when set, is told of every load before its text is
	// returned (the harness appends skill/load).
	Record func(Load)
}

// Text is what a load puts in the conversation: the skill's body, its
// folder and its other files.
func Text(sk *Skill) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<skill name=%q folder=%q>\n%s\n</skill>", sk.Name, sk.Dir, sk.Body)
	if len(sk.Files) > 0 {
		fmt.Fprintf(&b, "\nThe skill's folder %s holds (read them with read when the instructions point to them; run its scripts with bash): %s", sk.Dir, strings.Join(sk.Files, ", "))
	}
	if sk.AllowedTools != nil {
		fmt.Fprintf(&b, "\nFor the rest of this turn only these tools may be used (the skill's allowed-tools): %s", strings.Join(append([]string{"skill"}, sk.AllowedTools...), ", "))
	}
	return b.String()
}

// Load loads the skill named name for by: the text for the conversation.
// A skill with allowed-tools narrows the turn it is loaded in (by the
// model) or the turn about to start (by the user).
func (l *Loader) Load(name, by string) (string, bool) {
	sk, ok := l.Set.Get(name)
	if !ok {
		return "", false
	}
	l.Narrowing.Limit(sk.AllowedTools, "the skill "+sk.Name, by == ByUser)
	if l.Record != nil {
		l.Record(Load{Skill: sk, By: by})
	}
	return Text(sk), true
}

// Tool is the model's `skill {name}` tool.
func (l *Loader) Tool() tool.Tool { return skillTool{l} }

type skillTool struct{ l *Loader }

func (skillTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{
		Name:        "skill",
		Description: "Load a skill listed under <skills> by its name: its instructions, folder and files.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`),
	}
}

func (skillTool) Needs() tool.Permission { return tool.ReadOnly }

func (t skillTool) Run(_ context.Context, _ *tool.Env, raw json.RawMessage) tool.Result {
	var a struct {
		Name *string `json:"name"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || a.Name == nil {
		return tool.Errorf("skill takes {\"name\": NAME}")
	}
	text, ok := t.l.Load(*a.Name, ByModel)
	if !ok {
		names := make([]string, 0, t.l.Set.Len())
		for _, sk := range t.l.Set.List() {
			names = append(names, sk.Name)
		}
		if len(names) > 20 {
			names = append(names[:20], "…")
		}
		return tool.Errorf("no skill is named %q; the skills are: %s", cutRunes(*a.Name, 64), strings.Join(names, ", "))
	}
	return tool.Result{Content: text}
}
