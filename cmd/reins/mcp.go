package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/mcp"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/trust"
)

func newMCPCmd(s *streams) *cobra.Command {
	c := &cobra.Command{
		Use:   "mcp",
		Short: "MCP servers (docs/mcp.md)",
		Args:  cobra.NoArgs,
	}
	c.AddCommand(newMCPListCmd(s), newMCPServeCmd(s))
	return c
}

// newMCPServeCmd is `reins mcp serve`, which reins-extra serves (the MCP
// SDK it links stays out of reins: internal/importrules); flags and --help
// are reins-extra's.
func newMCPServeCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:                cli.MCPServe.Name,
		Short:              cli.MCPServe.Short,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return forwardExtra(cmd, s, []string{"mcp", cli.MCPServe.Name}, args)
		},
	}
}

// newMCPListCmd is `reins mcp list`: every configured server with where it
// came from, its state and its tools. Listing the tools means starting the
// servers (as a workspace-write session would, confined the same way);
// they are torn down before it returns.
func newMCPListCmd(s *streams) *cobra.Command {
	return listingCmd(s, "list", "List the configured MCP servers, where each came from, their state and their tools", func(h *harness.Harness) error {
		for _, w := range h.Config.MCPWarnings {
			fmt.Fprintln(s.err, "reins: warning: "+termsafe.Escape(w))
		}
		all := h.MCPStatus()
		if len(all) == 0 {
			fmt.Fprintln(s.out, "no MCP servers configured (mcpServers in a config, or .mcp.json in a trusted folder; docs/mcp.md)")
			return nil
		}
		tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVER\tTRANSPORT\tSTATE\tSOURCE")
		for _, st := range all {
			state := string(st.State)
			if st.Err != nil {
				state += ": " + st.Err.Error()
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cell(st.Server.Name), st.Server.Transport(), cell(state), trust.Quote(st.Server.Source))
			if st.State == mcp.StateFailed {
				fmt.Fprintf(tw, "  cause: %s\n", mcp.Cause(st.Server, h.Getenv)) // no tab: no column
			}
			for _, t := range st.Tools {
				sp := t.Spec()
				fmt.Fprintf(tw, "  %s\t%s\t%s\t\n", cell(sp.Name), t.Needs(), cell(termsafe.Clip(sp.Description, 60)))
			}
		}
		return tw.Flush()
	})
}

// noticeMCP says on stderr which MCP servers failed to start when the
// session was made: the model only sees their tools answer a fixed error,
// so the user learns it here. The text is reins's own (mcp.Error); what a
// server wrote stays in the host log.
//
// It says so once per change: the same failures again in the same
// workspace are not repeated (mcp.NoticeNew); `reins mcp list` shows them
// with their causes whenever asked.
func noticeMCP(s *streams, h *harness.Harness) {
	var lines []string
	for _, srv := range h.MCP.Servers() {
		if st, fail := h.MCP.Status(srv.Name); st == mcp.StateFailed && fail != nil {
			lines = append(lines, fmt.Sprintf("reins: %s: %s", termsafe.EscapeLine(fail.Error()), h.HostLogPath()))
		}
	}
	if !mcp.NoticeNew(h.Home, h.Cwd, lines) {
		return
	}
	for _, l := range lines {
		fmt.Fprintln(s.err, l)
	}
	fmt.Fprintln(s.err, "reins: reins mcp list shows why; this is said again only when it changes")
}
