package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/reinsdev/reins/internal/lazy"
	"path/filepath"
	"strings"

	"github.com/reinsdev/reins/internal/patch"
)

// Claude Code's vocabulary. A hook written for Claude Code matches and
// reads tool calls by Claude Code's tool and argument names, so reins's
// calls are shown to hooks under those names (docs/hooks.md has the
// table) and a rewritten input is translated back. A reins tool that
// writes files is always shown as one of Claude Code's file-writing
// tools, so a `Write|Edit` guard sees every write: apply_patch is shown
// as one Write (added or deleted file) or Edit (changed file) per file it
// touches.

// renames are reins's argument names that Claude Code spells otherwise,
// per reins tool; paths are made absolute on the way out.
type toolName struct {
	claude  string
	renames map[string]string // reins → Claude Code
	paths   []string          // Claude Code argument names holding a path
}

// toolNames maps reins's tools to Claude Code's (built on first use:
// reins builds no tables at start-up).
var toolNames = lazy.Value[map[string]toolName]{New: func() map[string]toolName {
	return map[string]toolName{
		"bash":        {claude: "Bash", renames: map[string]string{"background": "run_in_background"}},
		"bash_output": {claude: "BashOutput", renames: map[string]string{"id": "bash_id"}},
		"bash_kill":   {claude: "KillShell", renames: map[string]string{"id": "shell_id"}},
		"read":        {claude: "Read", renames: map[string]string{"path": "file_path"}, paths: []string{"file_path"}},
		"write":       {claude: "Write", renames: map[string]string{"path": "file_path"}, paths: []string{"file_path"}},
		"edit":        {claude: "Edit", renames: map[string]string{"path": "file_path"}, paths: []string{"file_path"}},
		"multi_edit":  {claude: "MultiEdit", renames: map[string]string{"path": "file_path"}, paths: []string{"file_path"}},
		"grep":        {claude: "Grep", paths: []string{"path"}},
		"glob":        {claude: "Glob", paths: []string{"path"}},
		"ls":          {claude: "LS", paths: []string{"path"}},
		"subagent":    {claude: "Task", renames: map[string]string{"agent": "subagent_type"}},
		"webfetch":    {claude: "WebFetch"},
		"todo":        {claude: "TodoWrite"},
	}
}}

// ClaudeName is the tool name hooks see for reins's tool name: Claude
// Code's for the tools it has, the MCP name as it is, reins's own name
// for a tool Claude Code has no counterpart of (job_output, worktree,
// subagent_output). apply_patch has several (Calls).
func ClaudeName(name string) string {
	if t, ok := toolNames.Get()[name]; ok {
		return t.claude
	}
	return name
}

// Call is one tool call as hooks see it.
type Call struct {
	Tool  string          // Claude Code's name
	Input json.RawMessage // in Claude Code's argument names
}

// ToClaude is a reins call as hooks see it: usually one Call, one per
// file for apply_patch. A call whose arguments are not an object is
// passed as it is under its Claude Code name (the tool refuses it).
func ToClaude(workspace, name string, args json.RawMessage) []Call {
	if name == "apply_patch" {
		return patchCalls(workspace, args)
	}
	t, ok := toolNames.Get()[name]
	if !ok {
		return []Call{{Tool: name, Input: args}}
	}
	var m map[string]any
	if json.Unmarshal(args, &m) != nil || m == nil {
		return []Call{{Tool: t.claude, Input: args}}
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if r, ok := t.renames[k]; ok {
			k = r
		}
		out[k] = v
	}
	for _, p := range t.paths {
		if s, ok := out[p].(string); ok && s != "" && !filepath.IsAbs(s) {
			out[p] = filepath.Join(workspace, s)
		}
	}
	if name == "bash" {
		// Claude Code's Bash timeout is in milliseconds, reins's in seconds.
		if f, ok := out["timeout"].(float64); ok {
			out["timeout"] = f * 1000
		}
	}
	if name == "subagent" {
		if _, ok := out["subagent_type"]; !ok {
			out["subagent_type"] = "general"
		}
	}
	b, _ := json.Marshal(out)
	return []Call{{Tool: t.claude, Input: b}}
}

// patchCalls shows an apply_patch call as the file writes it makes: an
// added file is a Write with its content, a deleted one a Write of no
// content marked reins_delete, a changed one an Edit of its chunks'
// old and new lines (and a renamed one also a Write of its new path). A
// patch that does not parse is shown as one Edit of no file: the tool
// refuses it, but a guard still sees a write.
func patchCalls(workspace string, args json.RawMessage) []Call {
	var a struct {
		Input string `json:"input"`
	}
	_ = json.Unmarshal(args, &a)
	ops, err := patch.Parse(a.Input)
	if err != nil || len(ops) == 0 {
		b, _ := json.Marshal(map[string]any{"file_path": "", "old_string": "", "new_string": "", "reins_patch": a.Input})
		return []Call{{Tool: "Edit", Input: b}}
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(workspace, p)
	}
	var calls []Call
	add := func(tool string, m map[string]any) {
		b, _ := json.Marshal(m)
		calls = append(calls, Call{Tool: tool, Input: b})
	}
	for _, op := range ops {
		switch op.Kind {
		case patch.Add:
			add("Write", map[string]any{"file_path": abs(op.Path), "content": op.Content})
		case patch.Delete:
			add("Write", map[string]any{"file_path": abs(op.Path), "content": "", "reins_delete": true})
		default:
			var olds, news []string
			for _, c := range op.Chunks {
				olds = append(olds, strings.Join(c.Old, "\n"))
				news = append(news, strings.Join(c.New, "\n"))
			}
			add("Edit", map[string]any{"file_path": abs(op.Path), "old_string": strings.Join(olds, "\n...\n"), "new_string": strings.Join(news, "\n...\n")})
			if op.MoveTo != "" {
				add("Write", map[string]any{"file_path": abs(op.MoveTo), "content": strings.Join(news, "\n...\n"), "reins_moved_from": abs(op.Path)})
			}
		}
	}
	return calls
}

// ErrNoTranslation is the refusal of an updatedInput reins cannot turn
// back into its own tool's arguments (apply_patch's): the call is not
// run rather than run with the input the hook did not approve.
var ErrNoTranslation = errors.New("a hook rewrote the input of a call reins cannot translate back")

// FromClaude turns a hook's updatedInput for reins's tool name back into
// reins's argument names. A path inside the workspace is made relative
// to it again (permission rules match workspace paths).
func FromClaude(workspace, name string, input json.RawMessage) (json.RawMessage, error) {
	if name == "apply_patch" {
		return nil, ErrNoTranslation
	}
	t, ok := toolNames.Get()[name]
	if !ok {
		return input, nil // MCP and reins's own tools: the same names
	}
	var m map[string]any
	if err := json.Unmarshal(input, &m); err != nil || m == nil {
		return nil, fmt.Errorf("a hook's updatedInput is not a JSON object")
	}
	back := make(map[string]string, len(t.renames))
	for r, c := range t.renames {
		back[c] = r
	}
	for _, p := range t.paths {
		if s, ok := m[p].(string); ok && filepath.IsAbs(s) {
			if rel, err := filepath.Rel(workspace, s); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				m[p] = rel
			}
		}
	}
	if name == "bash" {
		if f, ok := m["timeout"].(float64); ok {
			m["timeout"] = f / 1000
		}
		delete(m, "description") // Claude Code's Bash has one; reins's bash does not
	}
	if name == "subagent" {
		if s, ok := m["subagent_type"].(string); ok && s == "general" {
			delete(m, "subagent_type")
		}
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if r, ok := back[k]; ok {
			k = r
		}
		out[k] = v
	}
	return json.Marshal(out)
}
