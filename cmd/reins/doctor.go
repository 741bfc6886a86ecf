package main

import (
	"fmt"
	"strings"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/mcp"
	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/worktree"
	"github.com/spf13/cobra"
)

// doctorMCP says which configured MCP servers fail to start here, each
// with what reins can tell of the cause (mcp.Cause: the user's own config
// and reins's checks, escaped; never what the server wrote). Starting them
// is how that is known, as `reins mcp list` does; they are torn down with
// the harness.
func doctorMCP(s *streams, h *harness.Harness) {
	all := h.MCPStatus()
	failed := 0
	for _, st := range all {
		if st.State != mcp.StateFailed {
			continue
		}
		failed++
		fmt.Fprintf(s.out, "mcp: server %s failed: %s\n", cell(st.Server.Name), mcp.Cause(st.Server, h.Getenv))
	}
	if len(all) > 0 && failed == 0 {
		fmt.Fprintf(s.out, "mcp: %d server(s) configured, all start\n", len(all))
	}
}

// doctorModel says which model a run without -m uses, why, and whether
// its provider's key is set: what a newcomer's first run needs, said
// before that run fails.
func doctorModel(s *streams, h *harness.Harness) {
	spec, why := h.DefaultModel()
	switch {
	case why != "":
	case h.Config.ModelFrom != "":
		why = "model: in " + h.Config.ModelFrom
	default:
		why = "the default: no -m, no config model, and no key that picks one"
	}
	line := "model: " + cell(spec) + " (" + cell(why) + ")"
	prov, _, err := h.Config.ResolveModel(spec)
	switch {
	case err != nil:
		line += "; " + cell(err.Error())
	default:
		if env := h.Config.MissingKey(prov, h.Getenv); env != "" {
			line += "; its key " + env + " is not set: set it, or another provider's key and -m (reins models shows which keys are set); reins demo runs without a key"
		} else {
			line += "; ready (its key is set, or it needs none)"
		}
	}
	fmt.Fprintln(s.out, line)
}

// newDoctorCmd is `reins doctor`: what the sandbox enforces on this machine
// (SPEC §12) and what this folder's configuration asks of it.
func newDoctorCmd(s *streams) *cobra.Command {
	return listingCmd(s, "doctor", "Print what the sandbox enforces on this machine", func(h *harness.Harness) error {
		for _, l := range sandbox.Doctor().Lines() {
			fmt.Fprintln(s.out, l)
		}
		p := h.Sandbox
		switch {
		case p.Off:
			fmt.Fprintln(s.out, "config: sandbox off (sandbox.enabled: false or --sandbox=off): processes are supervised, not confined")
		case p.DenyNetwork:
			fmt.Fprintln(s.out, "config: network off for confined processes (sandbox.network: off; children of acp, pi and reins keep the network for their provider)")
		default:
			fmt.Fprintln(s.out, "config: network on (sandbox.network: on)")
		}
		if !p.Off {
			fmt.Fprintln(s.out, "config: sandbox.limits: "+p.Limits.String())
		}
		if len(p.Env.Pass) > 0 {
			fmt.Fprintln(s.out, "config: sandbox.env.pass lets through: "+strings.Join(p.Env.Pass, ", "))
		}
		if len(p.Readable) > 0 {
			fmt.Fprintf(s.out, "config: sandbox.readable opens %d credential path(s)\n", len(p.Readable))
		}
		if p.GitWritable && !p.Off {
			fmt.Fprintln(s.out, "config: .git writable by confined processes (sandbox.git: writable): a planted commondir or config runs in your next git (docs/sandbox.md)")
		}
		if worktree.Confined(p) {
			fmt.Fprintln(s.out, "reins's own git (worktree isolation, /undo snapshots, reins worktree merge): confined — a repository's filters, textconv, includes and helpers run in the sandbox, writing only its git directory")
		} else {
			fmt.Fprintln(s.out, "reins's own git (worktree isolation, /undo snapshots, reins worktree merge): NOT confined (sandbox off or unavailable) — hooks and fsmonitor are switched off, but a repository's filters, textconv drivers and includes run as you; use isolation and /undo only in repositories you trust")
		}
		doctorModel(s, h)
		doctorMCP(s, h)
		return nil
	})
}
