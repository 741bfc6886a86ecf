package mcp

import "github.com/reinsdev/reins/internal/sandbox"

// ServerPolicy is the policy a stdio server runs under: the sandbox of the
// configuration that declared it (base: the merged configuration's, which
// a repository's layer or .mcp.json can only tighten, never widen) in
// workspace-write, in workspace.
//
// It does not depend on the session that first asks for the server's
// tools. One process serves every session of a reins process, so a mode
// taken from the first session would leak into the others: a server
// started by a full-access session would stay unconfined for the
// read-only children after it, one started by a read-only child could not
// write for the workspace-write parent. The session's mode decides which
// of the server's tools the session may call (Tool.Needs), the
// configuration decides what the server's process may do. Only the
// user's own config (or --config) can lift it out of the sandbox, with
// `sandbox: {enabled: false}` (base.Off).
func ServerPolicy(base sandbox.Policy, workspace string) sandbox.Policy {
	base.Mode, base.Workspace = sandbox.WorkspaceWrite, workspace
	return base
}
