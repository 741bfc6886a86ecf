package rules_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	. "github.com/reinsdev/reins/internal/rules"
	"github.com/reinsdev/reins/internal/tool"
)

func args(kv ...string) json.RawMessage {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return b
}

// TestDecide: deny beats allow beats asking, for every pattern kind.
func TestDecide(t *testing.T) {
	const ws = "/work/space"
	cases := []struct {
		name        string
		allow, deny []string
		tool        string
		args        json.RawMessage
		want        Verdict
		rule        string
	}{
		{"no rules ask", nil, nil, "bash", args("command", "ls"), VerdictAsk, ""},
		{"prefix allows the command", []string{"bash(go test:*)"}, nil, "bash", args("command", "go test ./..."), VerdictAllow, "bash(go test:*)"},
		{"prefix allows the bare command", []string{"bash(go test:*)"}, nil, "bash", args("command", "go test"), VerdictAllow, "bash(go test:*)"},
		{"prefix is word-bounded", []string{"bash(go test:*)"}, nil, "bash", args("command", "go testify"), VerdictAsk, ""},
		{"allow prefix never covers a chain", []string{"bash(go test:*)"}, nil, "bash", args("command", "go test ./... && rm -rf ."), VerdictAsk, ""},
		{"allow prefix never covers a substitution", []string{"bash(echo:*)"}, nil, "bash", args("command", "echo $(rm -rf .)"), VerdictAsk, ""},
		{"allow prefix never covers a redirect", []string{"bash(echo:*)"}, nil, "bash", args("command", "echo x > .bashrc"), VerdictAsk, ""},
		{"allow prefix never covers a new line", []string{"bash(echo:*)"}, nil, "bash", args("command", "echo x\nrm -rf ."), VerdictAsk, ""},
		{"exact allows only itself", []string{"bash(make lint)"}, nil, "bash", args("command", "make lint"), VerdictAllow, "bash(make lint)"},
		{"exact refuses more", []string{"bash(make lint)"}, nil, "bash", args("command", "make lint fix"), VerdictAsk, ""},
		{"Claude spelling", []string{"Bash(npm run test:*)"}, nil, "bash", args("command", "npm run test -- -u"), VerdictAllow, "Bash(npm run test:*)"},
		{"deny beats allow", []string{"bash"}, []string{"bash(rm:*)"}, "bash", args("command", "rm -rf x"), VerdictDeny, "bash(rm:*)"},
		{"deny sees inside a chain", nil, []string{"bash(rm:*)"}, "bash", args("command", "ls; rm -rf x"), VerdictDeny, "bash(rm:*)"},
		{"deny sees inside a substitution", nil, []string{"bash(rm:*)"}, "bash", args("command", "echo $(rm x)"), VerdictDeny, "bash(rm:*)"},
		{"deny sees past sudo and env words", nil, []string{"bash(git push:*)"}, "bash", args("command", "FOO=1 sudo git   push origin"), VerdictDeny, "bash(git push:*)"},
		{"deny exact sees a part", nil, []string{"bash(reboot)"}, "bash", args("command", "ls && reboot"), VerdictDeny, "bash(reboot)"},
		{"bash rule is not another tool's", []string{"bash(ls:*)"}, nil, "write", args("path", "ls"), VerdictAsk, ""},
		{"path glob", []string{"write(docs/**)"}, nil, "write", args("path", "docs/a/b.md"), VerdictAllow, "write(docs/**)"},
		{"path glob with ./", []string{"write(./docs/**)"}, nil, "write", args("path", "./docs/x.md"), VerdictAllow, "write(./docs/**)"},
		{"path glob elsewhere asks", []string{"write(docs/**)"}, nil, "write", args("path", "src/x.go"), VerdictAsk, ""},
		{"path glob cleans ..", []string{"write(docs/**)"}, nil, "write", args("path", "docs/../main.go"), VerdictAsk, ""},
		{"allow glob never leaves the workspace", []string{"write(**)"}, nil, "write", args("path", "../other/x"), VerdictAsk, ""},
		{"absolute path inside the workspace", []string{"write(docs/**)"}, nil, "write", args("path", ws+"/docs/x.md"), VerdictAllow, "write(docs/**)"},
		{"absolute glob", nil, []string{"read(/etc/**)"}, "read", args("path", "/etc/passwd"), VerdictDeny, "read(/etc/**)"},
		{"write rule is not edit's", []string{"write(docs/**)"}, nil, "edit", args("path", "docs/x.md"), VerdictAsk, ""},
		{"edit rule covers multi_edit", []string{"edit(src/*.go)"}, nil, "multi_edit", args("path", "src/a.go"), VerdictAllow, "edit(src/*.go)"},
		{"* does not cross /", []string{"edit(src/*.go)"}, nil, "edit", args("path", "src/x/a.go"), VerdictAsk, ""},
		{"deny dotenv anywhere", nil, []string{"read(**/.env)"}, "read", args("path", "a/b/.env"), VerdictDeny, "read(**/.env)"},
		{"webfetch domain", []string{"webfetch(domain:go.dev)"}, nil, "webfetch", args("url", "https://GO.dev/doc"), VerdictAllow, "webfetch(domain:go.dev)"},
		{"webfetch domain is exact", []string{"webfetch(domain:go.dev)"}, nil, "webfetch", args("url", "https://go.dev.evil.example/"), VerdictAsk, ""},
		{"webfetch subdomains", []string{"WebFetch(domain:*.github.com)"}, nil, "webfetch", args("url", "https://api.github.com/x"), VerdictAllow, "WebFetch(domain:*.github.com)"},
		{"webfetch deny", []string{"webfetch"}, []string{"webfetch(domain:*.internal)"}, "webfetch", args("url", "http://db.internal/"), VerdictDeny, "webfetch(domain:*.internal)"},
		{"webfetch domain is not bash's", []string{"webfetch(domain:go.dev)"}, nil, "bash", args("command", "curl go.dev"), VerdictAsk, ""},
		{"grep without a path is the workspace", nil, []string{"grep(.)"}, "grep", args("pattern", "x"), VerdictDeny, "grep(.)"},
		{"tool name glob", []string{"mcp__github__*"}, nil, "mcp__github__create_issue", args(), VerdictAllow, "mcp__github__*"},
		{"tool name glob other server", []string{"mcp__github__*"}, nil, "mcp__gitlab__x", args(), VerdictAsk, ""},
		{"bare tool name", nil, []string{"write"}, "write", args("path", "x"), VerdictDeny, "write"},
		{"invalid arguments ask", []string{"bash(ls:*)"}, nil, "bash", json.RawMessage(`{"command":`), VerdictAsk, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(nil, ws, tool.MatchPath, List{Allow: c.allow, Deny: c.deny})
			if err != nil {
				t.Fatal(err)
			}
			v, rule := s.Decide(c.tool, c.args)
			if v != c.want || rule != c.rule {
				t.Fatalf("Decide(%s %s) = %q %q, want %q %q", c.tool, c.args, v, rule, c.want, c.rule)
			}
		})
	}
}

// TestParseErrors: a malformed rule is an ErrSyntax that names it.
func TestParseErrors(t *testing.T) {
	for _, s := range []string{"", "bash(", "bash()", "mcp__x__y(foo)", "write([)", "a b", "bash(ls", "webfetch(go.dev)", "webfetch(domain:)", "webfetch(domain:a/b)"} {
		if _, err := Parse(s); !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) = %v, want ErrSyntax", s, err)
		}
	}
	if _, err := Parse("bash(:*)"); err != nil {
		t.Errorf("bash(:*): %v", err)
	}
}

// TestNarrowest: "always allow this" adds the exact command or path, and
// the rule covers that call and no wider one.
func TestNarrowest(t *testing.T) {
	const ws = "/w"
	cases := []struct {
		tool      string
		args      json.RawMessage
		text      string
		same      json.RawMessage
		notSameTo json.RawMessage
	}{
		{"bash", args("command", " go test ./... "), "bash(go test ./...)", args("command", "go test ./..."), args("command", "go test ./... ; rm x")},
		{"bash", args("command", "echo a:*"), "bash(echo a:*)", args("command", "echo a:*"), args("command", "echo a:b")},
		{"write", args("path", "./docs/a.md", "content", "x"), "write(docs/a.md)", args("path", "/w/docs/a.md"), args("path", "docs/b.md")},
		{"write", args("path", "docs/[a].md"), "write(docs/[a].md)", args("path", "docs/[a].md"), args("path", "docs/a.md")},
		{"mcp__s__t*", args(), "mcp__s__t*", args(), nil},
		{"webfetch", args("url", "https://Go.dev/a?b"), "webfetch(domain:go.dev)", args("url", "http://go.dev/other"), args("url", "https://pkg.go.dev/")},
	}
	for _, c := range cases {
		r := Narrowest(ws, c.tool, c.args)
		if r.String() != c.text {
			t.Errorf("Narrowest(%s %s) = %q, want %q", c.tool, c.args, r, c.text)
		}
		s, _ := New(nil, ws, tool.MatchPath)
		s.Add(r)
		if v, _ := s.Decide(c.tool, c.same); v != VerdictAllow {
			t.Errorf("%s: %s not allowed", c.text, c.same)
		}
		if c.notSameTo != nil {
			if v, _ := s.Decide(c.tool, c.notSameTo); v != VerdictAsk {
				t.Errorf("%s: %s allowed", c.text, c.notSameTo)
			}
		}
		if c.tool == "mcp__s__t*" {
			if v, _ := s.Decide("mcp__s__tx", args()); v != VerdictAsk {
				t.Errorf("%s matched another tool", c.text)
			}
		}
	}
}

// TestChildAndHold: a child is held by its parent's rules; HoldAllow
// makes allowed calls ask again, denies still deny.
func TestChildAndHold(t *testing.T) {
	p, _ := New(nil, "/w", tool.MatchPath, List{Allow: []string{"bash(ls:*)"}, Deny: []string{"write(secret/**)"}})
	c, _ := New(p, "/w", nil, List{Deny: []string{"bash(ls -R:*)"}})
	if v, _ := c.Decide("write", args("path", "secret/k")); v != VerdictDeny {
		t.Fatal("the parent's deny did not hold the child")
	}
	if v, _ := c.Decide("bash", args("command", "ls -l")); v != VerdictAllow {
		t.Fatal("the parent's allow did not reach the child")
	}
	if v, _ := c.Decide("bash", args("command", "ls -R x")); v != VerdictDeny {
		t.Fatal("the child's deny did not beat the parent's allow")
	}
	p.HoldAllow(true)
	if v, _ := c.Decide("bash", args("command", "ls -l")); v != VerdictAsk {
		t.Fatal("held allow rules still allowed")
	}
	if v, _ := c.Decide("write", args("path", "secret/k")); v != VerdictDeny {
		t.Fatal("held allow rules lifted a deny")
	}
}

// TestRegistryGate: the registry asks the rules before the approval
// hook: a deny refuses without asking, an allow runs unasked, a refusal
// carries the user's instruction.
func TestRegistryGate(t *testing.T) {
	ws := t.TempDir()
	s, _ := New(nil, ws, tool.MatchPath, List{Allow: []string{"write(ok/**)"}, Deny: []string{"write(no/**)"}})
	asked := 0
	env := &tool.Env{Workspace: ws, Permission: tool.WorkspaceWrite, Rules: s,
		Ask: func(_ context.Context, name string, _ json.RawMessage) tool.Answer {
			asked++
			return tool.Answer{Note: "write it to ok/ instead"}
		}}
	reg := tool.NewBuiltinRegistry()
	ctx := t.Context()
	if r := reg.Run(ctx, env, "write", args("path", "ok/a.txt", "content", "x")); r.IsError || asked != 0 {
		t.Fatalf("allowed write: %+v, asked %d", r, asked)
	}
	r := reg.Run(ctx, env, "write", args("path", "no/a.txt", "content", "x"))
	if !r.IsError || asked != 0 || r.Content != "the write call is denied by the permission rule write(no/**)" {
		t.Fatalf("denied write: %+v, asked %d", r, asked)
	}
	r = reg.Run(ctx, env, "write", args("path", "x.txt", "content", "x"))
	if !r.IsError || asked != 1 || r.Content != "the write call was not approved. The user says instead: write it to ok/ instead" {
		t.Fatalf("refused write: %+v, asked %d", r, asked)
	}
	if r := reg.Run(ctx, env, "read", args("path", "ok/a.txt")); r.IsError || asked != 1 {
		t.Fatalf("read: %+v, asked %d", r, asked)
	}
}
