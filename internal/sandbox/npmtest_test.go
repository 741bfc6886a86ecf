//go:build linux

package sandbox

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNpmTestInContainer (issue 26, acceptance 2): `npm test` of a small
// package works under workspace-write in the container with the network
// on: npm runs its script, node writes in the workspace, and the test
// script reaches a server on the host's loopback — what a project's test
// suite talking to a local database or dev server does. npm's cache and
// logs go to a folder in the workspace (npm_config_cache), since the home
// folder is not writable there.
func TestNpmTestInContainer(t *testing.T) {
	requireLandlock(t)
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatal("npm not on PATH: scripts/test needs Node and npm (README, Tests)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "pong from the host")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	ws := visibleDir(t)
	files := map[string]string{
		"package.json": `{"name": "hello", "version": "1.0.0", "private": true, "scripts": {"test": "node test.js"}}`,
		"test.js": `const fs = require("fs");
const http = require("http");
fs.writeFileSync("written.txt", "from node");
http.get(process.env.PING_URL, res => {
  let body = "";
  res.on("data", c => body += c);
  res.on("end", () => { console.log("got: " + body); process.exit(body === "pong from the host" ? 0 : 1); });
}).on("error", e => { console.log("network: " + e.message); process.exit(1); });
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := Policy{Mode: WorkspaceWrite, Workspace: ws}
	env := append(os.Environ(),
		"PING_URL=http://"+ln.Addr().String()+"/",
		"npm_config_cache="+filepath.Join(ws, ".npm-cache"),
		"npm_config_update_notifier=false",
		"PATH="+filepath.Dir(npm)+":"+os.Getenv("PATH"))
	out, code := runEnv(t, p, ws, env, "npm test 2>&1; echo npm-exit=$?")
	if code != 0 || !strings.Contains(out, "got: pong from the host") || !strings.Contains(out, "npm-exit=0") {
		t.Fatalf("npm test under workspace-write, network on: exit %d:\n%s", code, out)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "written.txt")); err != nil || string(b) != "from node" {
		t.Fatalf("written.txt = %q, %v", b, err)
	}
}
