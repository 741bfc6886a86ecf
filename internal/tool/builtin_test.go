package tool

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuiltins(t *testing.T) {
	want := map[string]struct {
		needs    Permission
		required []string
		params   []string
	}{
		"read":        {ReadOnly, []string{"path"}, []string{"path", "offset", "limit"}},
		"write":       {WorkspaceWrite, []string{"path", "content"}, []string{"path", "content"}},
		"edit":        {WorkspaceWrite, []string{"path", "old_string", "new_string"}, []string{"path", "old_string", "new_string", "replace_all"}},
		"apply_patch": {WorkspaceWrite, []string{"input"}, []string{"input"}},
		"multi_edit":  {WorkspaceWrite, []string{"path", "edits"}, []string{"path", "edits"}},
		"bash":        {WorkspaceWrite, []string{"command"}, []string{"command", "timeout", "background"}},
		"bash_output": {WorkspaceWrite, []string{"id"}, []string{"id"}},
		"bash_kill":   {WorkspaceWrite, []string{"id"}, []string{"id"}},
		"grep": {ReadOnly, []string{"pattern"}, []string{"pattern", "path", "glob", "type", "output_mode",
			"-A", "-B", "-C", "-i", "-n", "multiline", "head_limit", "offset"}},
		"glob": {ReadOnly, []string{"pattern"}, []string{"pattern", "path"}},
		"ls":   {ReadOnly, nil, []string{"path"}},
	}
	tools := Builtins()
	if len(tools) != len(want) {
		t.Fatalf("Builtins() has %d tools, want %d", len(tools), len(want))
	}
	for _, tl := range tools {
		s := tl.Spec()
		w, ok := want[s.Name]
		if !ok {
			t.Errorf("unexpected tool %q", s.Name)
			continue
		}
		if tl.Needs() != w.needs {
			t.Errorf("%s needs %s, want %s", s.Name, tl.Needs(), w.needs)
		}
		// Only the readers are Traceless: their calls are not synced
		// before they run (agent.runTools).
		_, traceless := tl.(Traceless)
		if want := s.Name == "read" || s.Name == "grep" || s.Name == "glob" || s.Name == "ls"; traceless != want {
			t.Errorf("%s Traceless %v, want %v", s.Name, traceless, want)
		}
		if s.Description == "" {
			t.Errorf("%s has no description", s.Name)
		}
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(s.Parameters, &schema); err != nil {
			t.Errorf("%s schema: %v", s.Name, err)
			continue
		}
		if schema.Type != "object" || strings.Join(schema.Required, ",") != strings.Join(w.required, ",") {
			t.Errorf("%s schema type %q required %v, want object %v", s.Name, schema.Type, schema.Required, w.required)
		}
		if len(schema.Properties) != len(w.params) {
			t.Errorf("%s has %d parameters, want %v", s.Name, len(schema.Properties), w.params)
		}
		for _, p := range w.params {
			if _, ok := schema.Properties[p]; !ok {
				t.Errorf("%s lacks parameter %q", s.Name, p)
			}
		}
	}
	r := NewBuiltinRegistry()
	if got := strings.Join(r.Names(), ","); got != "apply_patch,bash,bash_kill,bash_output,edit,glob,grep,ls,multi_edit,read,write" {
		t.Errorf("registry names = %s", got)
	}
}

// Every tool answers malformed arguments with an error result, never a
// panic.
func TestBadArguments(t *testing.T) {
	env := newEnv(t, FullAccess)
	for _, tl := range Builtins() {
		name := tl.Spec().Name
		for _, raw := range []string{`{`, `"str"`, `[1,2]`, `42`, `{"path": 1, "pattern": 2, "command": 3, "content": 4, "input": 5, "id": 6, "edits": 7}`} {
			res := call(t, env, name, json.RawMessage(raw))
			if !res.IsError || !strings.HasPrefix(res.Content, "invalid arguments") {
				t.Errorf("%s(%s) = %+v, want an invalid-arguments error", name, raw, res)
			}
		}
	}
}

func TestPermissionModes(t *testing.T) {
	type step struct {
		tool    string
		args    map[string]any
		outside bool // path arguments point outside the workspace
		allowed bool
		refusal string // expected error text when refused
	}
	const notPermitted = "is not permitted in"
	const outsideWS = "is outside the workspace"
	inside := func(tool string, args map[string]any) step { return step{tool: tool, args: args} }
	outside := func(tool string, args map[string]any) step { return step{tool: tool, args: args, outside: true} }

	readArgs := map[string]any{"path": "f.txt"}
	writeArgs := map[string]any{"path": "new.txt", "content": "x"}
	editArgs := map[string]any{"path": "f.txt", "old_string": "hello", "new_string": "bye"}
	bashArgs := map[string]any{"command": "echo ok"}
	grepArgs := map[string]any{"pattern": "hello", "path": "."}
	globArgs := map[string]any{"pattern": "*.txt", "path": "."}
	lsArgs := map[string]any{"path": "."}

	allow := func(s step) step { s.allowed = true; return s }
	refuse := func(s step, why string) step { s.refusal = why; return s }

	modes := []struct {
		mode  Permission
		steps []step
	}{
		{ReadOnly, []step{
			allow(inside("read", readArgs)), allow(inside("grep", grepArgs)),
			allow(inside("glob", globArgs)), allow(inside("ls", lsArgs)),
			refuse(inside("write", writeArgs), notPermitted), refuse(inside("edit", editArgs), notPermitted),
			refuse(inside("bash", bashArgs), notPermitted),
			refuse(outside("read", readArgs), outsideWS), refuse(outside("grep", grepArgs), outsideWS),
			refuse(outside("glob", globArgs), outsideWS), refuse(outside("ls", lsArgs), outsideWS),
		}},
		{WorkspaceWrite, []step{
			allow(inside("read", readArgs)), allow(inside("write", writeArgs)), allow(inside("edit", editArgs)),
			allow(inside("bash", bashArgs)), allow(inside("ls", lsArgs)),
			refuse(outside("read", readArgs), outsideWS), refuse(outside("write", writeArgs), outsideWS),
			refuse(outside("edit", editArgs), outsideWS), refuse(outside("ls", lsArgs), outsideWS),
		}},
		{FullAccess, []step{
			allow(inside("write", writeArgs)), allow(inside("bash", bashArgs)),
			allow(outside("read", readArgs)), allow(outside("write", writeArgs)), allow(outside("edit", editArgs)),
			allow(outside("grep", grepArgs)), allow(outside("glob", globArgs)), allow(outside("ls", lsArgs)),
		}},
	}
	for _, m := range modes {
		for _, s := range m.steps {
			name := string(m.mode) + "/" + s.tool
			if s.outside {
				name += "/outside"
			}
			t.Run(name, func(t *testing.T) {
				env := newEnv(t, m.mode)
				out := t.TempDir()
				for _, dir := range []string{env.Workspace, out} {
					writeFiles(t, dir, map[string]string{"f.txt": "hello\n"})
				}
				args := map[string]any{}
				for k, v := range s.args {
					if k == "path" && s.outside {
						v = filepath.Join(out, v.(string))
					}
					args[k] = v
				}
				target := env.Workspace
				if s.outside {
					target = out
				}
				res := call(t, env, s.tool, args)
				if !s.allowed {
					wantResult(t, res, true, s.refusal)
					if readFile(t, filepath.Join(target, "f.txt")) != "hello\n" {
						t.Error("a refused call changed the file")
					}
					if _, err := os.Stat(filepath.Join(target, "new.txt")); err == nil {
						t.Error("a refused call created a file")
					}
					return
				}
				if res.IsError {
					t.Fatalf("%s refused in %s mode: %s", s.tool, m.mode, res.Content)
				}
				switch s.tool {
				case "write":
					if readFile(t, filepath.Join(target, "new.txt")) != "x" {
						t.Error("write did not write")
					}
				case "edit":
					if readFile(t, filepath.Join(target, "f.txt")) != "bye\n" {
						t.Error("edit did not edit")
					}
				case "read", "grep":
					wantResult(t, res, false, "hello")
				case "glob", "ls":
					wantResult(t, res, false, "f.txt")
				case "bash":
					wantResult(t, res, false, "ok")
				}
			})
		}
	}
}

func TestOutputCap(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	env.OutputCap = 100
	writeFiles(t, env.Workspace, map[string]string{"big.txt": strings.Repeat("0123456789\n", 100)})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read", map[string]any{"path": "big.txt"}},
		{"bash", map[string]any{"command": "cat big.txt"}},
		{"grep", map[string]any{"pattern": "0"}},
	} {
		res := call(t, env, c.tool, c.args)
		if res.IsError {
			t.Errorf("%s: %s", c.tool, res.Content)
		}
		head, note, ok := strings.Cut(res.Content, "\n[output truncated: showing ")
		if !ok || len(head) > 100 || !strings.HasSuffix(note, " bytes]") {
			t.Errorf("%s result not capped at 100 bytes:\n%s", c.tool, res.Content)
		}
	}
}
