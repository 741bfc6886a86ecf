package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/rogpeppe/go-internal/testscript"
)

// keyServers holds the recording servers of each script, by name.
var keyServers sync.Map // keyServer -> *mock.Server

type keyServer struct {
	ts   *testscript.TestScript
	name string
}

// cmdKeyServer starts a wire-level fake endpoint named args[0] that answers
// every request with "answer from NAME" on either wire and records its
// headers; it sets $URL_NAME to its base URL. Tests that check where an API
// key goes point config layers and variables at several of them.
func cmdKeyServer(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: keyserver NAME")
	}
	sc, err := mock.Parse([]byte("fallback:\n  text: answer from " + args[0] + "\n"))
	ts.Check(err)
	url, srv, stop := mock.StartTest(sc)
	ts.Defer(stop)
	keyServers.Store(keyServer{ts, args[0]}, srv)
	ts.Setenv("URL_"+args[0], url)
}

// cmdKeyHeaders writes the credential headers (Authorization, X-Api-Key)
// that server args[0] received, one "Name: value" line each, to args[1].
func cmdKeyHeaders(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: keyheaders NAME FILE")
	}
	v, ok := keyServers.Load(keyServer{ts, args[0]})
	if !ok {
		ts.Fatalf("no keyserver %s", args[0])
	}
	var b strings.Builder
	for _, r := range v.(*mock.Server).Requests() {
		for _, h := range []string{"Authorization", "X-Api-Key"} {
			for _, val := range r.Header.Values(h) {
				fmt.Fprintf(&b, "%s: %s\n", h, val)
			}
		}
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(b.String()), 0o644))
}

// cmdEnvsubst copies file args[0] to args[1] with $VAR and ${VAR} replaced
// by the script's environment: config files that name a test server's port.
func cmdEnvsubst(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: envsubst SRC DST")
	}
	dst := ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(filepath.Dir(dst), 0o755))
	ts.Check(os.WriteFile(dst, []byte(os.Expand(ts.ReadFile(args[0]), ts.Getenv)), 0o644))
}
