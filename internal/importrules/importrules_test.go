package importrules

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/testutil"
)

const module = "github.com/reinsdev/reins/"

// goList runs `go list` in the repository and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", append([]string{"list"}, args...)...)
	cmd.Dir = testutil.RepoRoot(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, stderr.Bytes())
	}
	return strings.Fields(string(out))
}

// deps is the module's packages pkg links (without tests), relative to
// the module, and every other non-standard package by full path (the
// standard library's own internal/ packages are left out, so a rule may
// forbid "internal").
func deps(t *testing.T, pkg string) []string {
	var out []string
	for _, d := range goList(t, "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./"+pkg) {
		out = append(out, strings.TrimPrefix(d, module))
	}
	return out
}

// runtime are the packages a leaf must not link: the delegation runtime,
// the placements, the MCP client, the sandbox, the composition root, the
// engines and Temporal's SDK.
var runtime = []string{
	"internal/subagent", "internal/mcp", "internal/sandbox", "internal/harness",
	"internal/engine", "internal/sdkserver", "internal/acp", "internal/tui",
	"go.temporal.io",
}

func linked(ds []string, forbidden []string) []string {
	var bad []string
	for _, d := range ds {
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, f+"/") {
				bad = append(bad, d)
			}
		}
	}
	return bad
}

// The rules that matter (issue 28): each package and what it may not link.
func TestLeavesStayLeaves(t *testing.T) {
	rules := []struct {
		pkg    string
		forbid []string
	}{
		// The result contract: llm and session only.
		{"internal/outcome", append([]string{"internal/agent", "internal/tool", "internal/config", "internal/childproc", "proc", "internal/budget", "internal/compact"}, runtime...)},
		// The pi wrapper applies the fold without the loop, MCP or Landlock.
		{"internal/wrap", append([]string{"internal/agent", "internal/tool", "internal/config"}, runtime...)},
		{"internal/config", append([]string{"internal/agent", "internal/tool", "internal/childproc", "proc"}, runtime...)},
		// The log knows no compaction policy: the summary boundary and
		// message live with it, and compaction imports them.
		{"internal/session", append([]string{"internal/agent", "internal/tool", "internal/config", "internal/compact"}, runtime...)},
		// The loop runs tools (so it links the registry and what the
		// registry confines with), but no child lifecycle and no placement.
		{"internal/agent", []string{"internal/subagent", "internal/mcp", "internal/harness", "internal/engine", "internal/childproc", "internal/config", "go.temporal.io"}},
		// The public client links nothing internal: a program that
		// imports it gets only public packages (the teardown ladder is the
		// public leaf proc, which reins uses too).
		{"sdk", []string{"internal"}},
		{"proc", []string{"internal"}},
		{"internal/view", append([]string{"internal/agent", "internal/tool", "internal/config"}, runtime...)},
		// What the file tools stand on: workspace access and the search
		// engine know nothing of tools, the loop or the runtime.
		{"internal/wsfs", append([]string{"internal/agent", "internal/tool", "internal/config", "internal/search"}, runtime...)},
		{"internal/search", append([]string{"internal/agent", "internal/tool", "internal/config", "internal/wsfs"}, runtime...)},
		// The engine places runs and builds no sessions; nor does the
		// batch's task runner: their composition roots (internal/worker,
		// internal/batchrun, above the harness) inject what runs a child.
		{"internal/engine", []string{"internal/harness"}},
		{"internal/engine/temporal", []string{"internal/harness"}},
		{"internal/engine/wire", []string{"internal/harness"}},
		{"internal/engine/workspace", []string{"internal/harness"}},
		{"internal/batch", []string{"internal/harness"}},
		// `reins run`'s progress lines use the tool-call summary, not the
		// terminal UI: neither its package nor the charm libraries.
		{"internal/progress", []string{"internal/tui/termtext", "internal/tui/markdown", "charm.land", "github.com/charmbracelet", "internal/harness", "internal/mcp"}},
		{"internal/tui/toolsummary", []string{"internal/tui/termtext", "charm.land", "github.com/charmbracelet"}},
		{"internal/tui/callpreview", []string{"internal/tui/termtext", "charm.land", "github.com/charmbracelet"}},
	}
	for _, r := range rules {
		if bad := linked(deps(t, r.pkg), r.forbid); len(bad) > 0 {
			t.Errorf("%s links %v; it must stay a leaf (internal/importrules)", r.pkg, bad)
		}
	}
}

// terminalUI are the interactive terminal's libraries and the screen
// itself (internal/tui, matched exactly): they live in reins-tui
// (docs/interactive.md), and no other reins process pays their start-up.
// internal/tui's leaf packages that link none of the libraries
// (toolsummary, textcut) stay allowed.
var terminalUI = []string{
	"charm.land/bubbletea", "charm.land/bubbletea/v2", "charm.land/lipgloss", "charm.land/lipgloss/v2",
	"charm.land/bubbles", "charm.land/bubbles/v2", "github.com/charmbracelet/ultraviolet",
	"github.com/atotto/clipboard", "github.com/charmbracelet/x/ansi", "github.com/mattn/go-runewidth",
}

// TestReinsLinksNoTerminalUI: cmd/reins links none of terminalUI, and
// reins-tui does link the screen (the check would pass vacuously if the
// names went stale).
func TestReinsLinksNoTerminalUI(t *testing.T) {
	ds := deps(t, "cmd/reins")
	bad := linked(ds, terminalUI)
	if slices.Contains(ds, "internal/tui") {
		bad = append(bad, "internal/tui")
	}
	if len(bad) > 0 {
		t.Errorf("cmd/reins links %v; the interactive terminal belongs in cmd/reins-tui", bad)
	}
	tui := deps(t, "cmd/reins-tui")
	for _, want := range []string{"internal/tui", "charm.land/bubbletea/v2", "github.com/charmbracelet/x/ansi"} {
		if !slices.Contains(tui, want) {
			t.Errorf("cmd/reins-tui does not link %s: terminalUI names a package nobody links", want)
		}
	}
}

// extraOnly are the packages of the commands reins-extra holds
// (internal/cli.ExtraCommands): the ACP agent, batch, the demo and the
// session viewer. reins forwards those commands; linking them again would
// bring back their cost to every `reins run` and `reins sdk` child
// (BENCHMARKS.md, "The reins-extra helper").
var extraOnly = []string{"internal/acp", "internal/batch", "internal/batchrun", "internal/demo", "internal/view", "internal/mcpserve"}

// TestReinsLinksNoExtra: cmd/reins links none of extraOnly, and
// reins-extra links each (else the list went stale).
func TestReinsLinksNoExtra(t *testing.T) {
	if bad := linked(deps(t, "cmd/reins"), extraOnly); len(bad) > 0 {
		t.Errorf("cmd/reins links %v; those commands belong in cmd/reins-extra", bad)
	}
	extra := deps(t, "cmd/reins-extra")
	for _, want := range extraOnly {
		if !slices.Contains(extra, want) {
			t.Errorf("cmd/reins-extra does not link %s: extraOnly names a package it does not need", want)
		}
	}
}

// Nothing imports the CLI: it is the top of the graph.
func TestNothingImportsCmd(t *testing.T) {
	lines := goList(t, "-f", `{{.ImportPath}}:{{join .Imports ","}}`, "./...")
	for _, l := range lines {
		pkg, imps, _ := strings.Cut(l, ":")
		for _, imp := range strings.Split(imps, ",") {
			if strings.HasPrefix(imp, module+"cmd/") {
				t.Errorf("%s imports %s", pkg, imp)
			}
		}
	}
}

// The README's layout list names every package folder of internal/ and
// nothing that does not exist.
func TestReadmeLayout(t *testing.T) {
	root := testutil.RepoRoot(t)
	listed := readmeLayout(t, filepath.Join(root, "README.md"))
	for _, p := range listed {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("README layout lists %s, which does not exist", p)
		}
	}
	for _, p := range goList(t, "./internal/...") {
		dir := strings.TrimPrefix(p, module)
		if !covered(listed, dir) {
			t.Errorf("package %s is missing from the README's layout list", dir)
		}
	}
}

// covered reports whether dir is listed, or lies under a listed folder
// whose entry names it as a sub-list ("internal/llm/ …" does not cover
// internal/llm/openai; each package has its own line).
func covered(listed []string, dir string) bool {
	return slices.Contains(listed, dir)
}

// readmeLayout is the paths of the fenced block under "## Layout": the
// first word of each line, and on a line like "a/b/ c/ d/" the siblings
// c and d of b.
func readmeLayout(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := bytes.Cut(data, []byte("\n## Layout\n"))
	if !ok {
		t.Fatal("README has no ## Layout section")
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(after))
	in := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			if in {
				break
			}
			in = true
			continue
		}
		if !in {
			continue
		}
		words := strings.Fields(line)
		if len(words) == 0 || !strings.HasSuffix(words[0], "/") {
			continue
		}
		first := strings.TrimSuffix(words[0], "/")
		out = append(out, first)
		parent := filepath.Dir(first)
		for _, w := range words[1:] {
			if !strings.HasSuffix(w, "/") || strings.Contains(w, "`") {
				break
			}
			out = append(out, filepath.Join(parent, strings.TrimSuffix(w, "/")))
		}
	}
	return out
}

// The reins binary links no MCP SDK (issue 27): its package initialisation
// (encoding/gob, a JSON-schema validator, OAuth, a URI-template parser)
// cost every reins process ~3 MiB and ~3 ms at start, MCP or not.
// internal/mcp speaks the protocol itself; the SDK serves the tests' MCP
// servers and reins-extra's `reins mcp serve` (internal/mcpserve, which
// extraOnly keeps out of reins).
func TestBinaryLinksNoMCPSDK(t *testing.T) {
	heavy := []string{
		"github.com/modelcontextprotocol", "github.com/google/jsonschema-go", "github.com/segmentio",
		"golang.org/x/oauth2", "github.com/yosida95/uritemplate",
	}
	for _, d := range deps(t, "cmd/reins") {
		for _, h := range heavy {
			if d == h || strings.HasPrefix(d, h+"/") {
				t.Errorf("cmd/reins links %s; the MCP client must not bring the SDK or its dependencies back (internal/mcp, issue 27)", d)
			}
		}
	}
}

// The composition root is a list of steps over pieces of their own
// (issue 50): model resolution is internal/modelres, so the harness
// imports no wire adapter itself, and its fan-out stays bounded.
func TestHarnessComposes(t *testing.T) {
	// 28 after model resolution moved out; skills, custom commands and
	// hooks (issue 51) brought four set-ups in. Moving MCP and telemetry
	// set-up into packages of their own is the next cut (issue 50).
	const maxFanOut = 32
	imps := goList(t, "-f", `{{join .Imports "\n"}}`, "./internal/harness")
	var own []string
	for _, imp := range imps {
		if rel, ok := strings.CutPrefix(imp, module); ok {
			own = append(own, rel)
		}
	}
	for _, adapter := range []string{"internal/llm/openai", "internal/llm/anthropic", "internal/llm/gemini", "internal/llm/responses"} {
		if slices.Contains(own, adapter) {
			t.Errorf("internal/harness imports %s; a model is resolved by internal/modelres", adapter)
		}
	}
	if len(own) > maxFanOut {
		t.Errorf("internal/harness imports %d of the module's packages, more than %d: %v", len(own), maxFanOut, own)
	}
}
