// Package mcp is reins's Model Context Protocol client (docs/mcp.md): it
// starts the configured MCP servers lazily, confined and supervised like
// every child process (internal/sandbox, internal/proc), or reaches them
// over streamable HTTP, and offers each server tool to the model as a
// tool.Tool named mcp__<server>__<tool>.
//
// A server is a stranger: its stderr and its error messages go to the host
// log only. What the model sees of a failure is one of the fixed texts of
// Failure; what it sees of a success is the tool's result content, which
// is what it asked for.
package mcp

import "github.com/reinsdev/reins/internal/mcpspec"

// A server's definition and tool naming live in internal/mcpspec, which
// internal/config imports without this client; these names keep the
// callers of mcp.X compiling.

type (
	Transport = mcpspec.Transport
	Server    = mcpspec.Server
)

const (
	Stdio  = mcpspec.Stdio
	HTTP   = mcpspec.HTTP
	Prefix = mcpspec.Prefix
)

var (
	ValidName     = mcpspec.ValidName
	ToolName      = mcpspec.ToolName
	SplitToolName = mcpspec.SplitToolName
	IsToolName    = mcpspec.IsToolName
	Expand        = mcpspec.Expand
	ExpandServer  = mcpspec.ExpandServer
)
