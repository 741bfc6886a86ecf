package session

// OriginMCPServe is the origin of a `reins mcp serve` session: each tool
// call its client makes is one of its children (like a batch task), and
// `reins run --continue` never picks it.
const OriginMCPServe = "mcp-serve"
