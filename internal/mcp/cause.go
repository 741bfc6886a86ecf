package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/reinsdev/reins/internal/mcpspec"
	"github.com/reinsdev/reins/internal/termsafe"
)

// Cause is what reins can tell about why a configured server failed,
// from the user's own config and reins's own checks (never from what the
// server wrote, which stays in the host log): the command and whether it
// can be found, or the URL without its query (which may hold a token).
// Arguments, environment and headers are not shown: they may hold
// secrets. The result is escaped for one line.
func Cause(srv mcpspec.Server, getenv func(string) string) string {
	if srv.Refused != "" {
		return "its ${VAR} expansion names the secret variable " + termsafe.EscapeLine(srv.Refused) + ", refused for a server a repository declares"
	}
	if srv.URL != "" {
		u, err := url.Parse(srv.URL)
		if err != nil {
			return "url is not a valid URL"
		}
		u.RawQuery, u.Fragment, u.User = "", "", nil
		return "url " + termsafe.EscapeLine(u.String()) + " (reins could not connect or it did not answer as an MCP server)"
	}
	cmd := termsafe.EscapeLine(srv.Command)
	if strings.ContainsRune(srv.Command, filepath.Separator) {
		fi, err := os.Stat(srv.Command)
		switch {
		case err != nil:
			return "command " + cmd + " does not exist"
		case fi.IsDir() || fi.Mode()&0o111 == 0:
			return "command " + cmd + " is not an executable file"
		}
		return "command " + cmd + " exists; it exited or did not answer the MCP handshake in time"
	}
	path := getenv("PATH")
	found := ""
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, srv.Command)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			found = p
			break
		}
	}
	if found == "" {
		if _, err := exec.LookPath(srv.Command); err != nil {
			return "command " + cmd + " is not on PATH"
		}
	}
	return "command " + cmd + " is on PATH; it exited or did not answer the MCP handshake in time"
}

// NoticeNew says whether the failures summed up in lines differ from the
// last ones reins warned about in workspace cwd, and remembers them
// (home/mcp-notices/<hash of the workspace>, home being $REINS_HOME): a
// run warns once per change, not every run. No failures forgets the
// record, so the next one warns again.
func NoticeNew(home, cwd string, lines []string) bool {
	ws := sha256.Sum256([]byte(cwd))
	file := filepath.Join(home, "mcp-notices", hex.EncodeToString(ws[:8]))
	if len(lines) == 0 {
		os.Remove(file)
		return false
	}
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	want := hex.EncodeToString(sum[:])
	if b, err := os.ReadFile(file); err == nil && string(b) == want {
		return false
	}
	if os.MkdirAll(filepath.Dir(file), 0o700) == nil {
		os.WriteFile(file, []byte(want), 0o600)
	}
	return true
}
