package importrules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// TestTurnCommandsPresize: the commands that run turns on their own
// goroutine (`reins run`; `reins demo`'s turns run elsewhere and measured
// no change) call cli.Presize first in their RunE, so that goroutine grows
// its stack once, shallow, instead of deep in a run
// (internal/cli/presize.go says what that saved).
func TestTurnCommandsPresize(t *testing.T) {
	for _, c := range []struct{ file, fn string }{
		{"run.go", "newRunCmd"},
	} {
		path := filepath.Join("..", "..", "cmd", "reins", c.file)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		body, found := runE(f, c.fn)
		if !found {
			t.Errorf("%s: no RunE in %s", path, c.fn)
			continue
		}
		if !callsPresizeFirst(body) {
			t.Errorf("%s: %s's RunE does not call cli.Presize() first", path, c.fn)
		}
	}
}

// runE is the body of the RunE function literal in function fn of f.
func runE(f *ast.File, fn string) (body []ast.Stmt, found bool) {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != fn || fd.Body == nil {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			kv, ok := n.(*ast.KeyValueExpr)
			if !ok || found {
				return !found
			}
			if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "RunE" {
				if lit, ok := kv.Value.(*ast.FuncLit); ok {
					body, found = lit.Body.List, true
				}
			}
			return true
		})
	}
	return body, found
}

func callsPresizeFirst(body []ast.Stmt) bool {
	if len(body) == 0 {
		return false
	}
	es, ok := body[0].(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "cli" && sel.Sel.Name == "Presize" && len(call.Args) == 0
}
