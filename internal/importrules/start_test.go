package importrules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// TestMainsStartFirst: every command's main calls cli.Start before
// anything else, so its main goroutine grows its stack once, shallow,
// instead of deep in a run (internal/cli/start.go says what that saved).
func TestMainsStartFirst(t *testing.T) {
	for _, cmd := range []string{"reins", "reins-tui", "reins-temporal"} {
		path := filepath.Join("..", "..", "cmd", cmd, "main.go")
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		var body []ast.Stmt
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "main" && fn.Recv == nil {
				body = fn.Body.List
			}
		}
		if !startsWithStart(body) {
			t.Errorf("%s: main does not call cli.Start() first", path)
		}
	}
}

func startsWithStart(body []ast.Stmt) bool {
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
	return ok && pkg.Name == "cli" && sel.Sel.Name == "Start" && len(call.Args) == 0
}
