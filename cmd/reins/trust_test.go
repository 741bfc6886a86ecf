package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

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

// TestTrustExitCodes: a folder that was not trusted cannot be revoked, a
// missing folder cannot be trusted, and a damaged trust list stops every
// command that reads project files: all usage errors, exit 2.
func TestTrustExitCodes(t *testing.T) {
	home := t.TempDir()
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"trust", []string{"trust", dir}, 0},
		{"list", []string{"trust", "--list"}, 0},
		{"revoke", []string{"trust", "--revoke", dir}, 0},
		{"revoke again", []string{"trust", "--revoke", dir}, 2},
		{"revoke never trusted", []string{"trust", "--revoke", t.TempDir()}, 2},
		{"missing folder", []string{"trust", filepath.Join(dir, "missing")}, 2},
		{"list and folder", []string{"trust", "--list", dir}, 2},
		{"two folders", []string{"trust", dir, dir}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, stderr := exitCode(t, reinsCmd(t, home, tc.args...))
			if got != tc.want {
				t.Errorf("exit %d, want %d; stderr: %s", got, tc.want, stderr)
			}
		})
	}
	t.Run("damaged list", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(home, "trusted.json"), []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"trust", dir}, {"trust", "--list"}, {"run", "-m", "mock/echo", "hi"}, {"agents"}} {
			got, stderr := exitCode(t, reinsCmd(t, home, args...))
			if got != 2 || !strings.Contains(stderr, "trusted.json") {
				t.Errorf("%v: exit %d, want 2 naming the list; stderr: %s", args, got, stderr)
			}
		}
	})
}
