package cli

// The reins-extra helper holds the commands few runs need — the ACP agent,
// the session viewer, batch, the wrapper, the mock model and the demo —
// so that `reins run`, `reins sdk` and every other reins process do not
// map, page in and walk their code (BENCHMARKS.md, "The reins-extra
// helper"). reins lists them under their own names and becomes
// reins-extra for them (exec on unix), as it becomes reins-tui and
// reins-temporal.
const (
	ExtraName = "reins-extra"
	// ExtraEnv names the helper's path, over the search (helperbin.Find).
	ExtraEnv = "REINS_EXTRA"
)

// An ExtraCommand is a command reins-extra runs and reins forwards.
type ExtraCommand struct {
	Name, Short string
}

// ExtraCommands are the commands of reins-extra, in reins's help order.
// Both binaries take Short from here: reins lists the command, reins-extra
// documents it (its Use and Long are its own).
var ExtraCommands = [...]ExtraCommand{
	{"demo", "A keyless end-to-end run on the built-in mock model"},
	{"mock-llm", "Serve a scripted, wire-level endpoint on all four wires (chat, Responses, Anthropic, Gemini)"},
	{"wrap", "Run one JSON-mode CLI child (pi) and write its artifacts"},
	{"acp", "Serve the Agent Client Protocol on stdio (for Zed and other ACP editors)"},
	{"view", "Show sessions, a session's delegation tree, timeline and conversation in a local page, live"},
	{"batch", "Run one child per task line, in parallel; results as JSONL in input order"},
}

// ExtraShort is the Short line of the reins-extra command name.
func ExtraShort(name string) string {
	for _, c := range ExtraCommands {
		if c.Name == name {
			return c.Short
		}
	}
	panic("cli: no reins-extra command " + name)
}

// MCPServe is `reins mcp serve`: a subcommand of reins's own `mcp` (whose
// list stays in reins), which reins forwards to reins-extra as
// `reins-extra mcp serve` — the MCP SDK it links stays out of reins.
var MCPServe = ExtraCommand{"serve", "Serve reins's children as MCP tools on stdio (for Claude Code, Codex, Cursor and other MCP clients)"}
