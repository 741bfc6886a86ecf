package session

// TypeSkillLoad is the event of one skill's body entering the
// conversation (docs/skills.md): the model called the skill tool, or the
// user ran /NAME.
const TypeSkillLoad = "skill/load"

// SkillLoad is the data of skill/load.
type SkillLoad struct {
	// Name is the skill's name; Origin "project" or "user"; Path its
	// SKILL.md.
	Name   string `json:"name"`
	Origin string `json:"origin"`
	Path   string `json:"path"`
	// By is who loaded it: "model" (the skill tool) or "user" (/NAME).
	By string `json:"by"`
	// AllowedTools are the tools the skill narrowed the rest of the turn
	// to (its allowed-tools), absent when it narrows nothing.
	AllowedTools []string `json:"allowedTools,omitempty"`
}
