package main

import "github.com/reinsdev/reins/internal/config"

// runAgentName is the agent the root session runs as in the stream: the
// --agent definition, else "main" (the built-in agent of reins run).
func runAgentName(ag *config.Agent) string {
	if ag == nil {
		return "main"
	}
	return ag.Name
}

// streamResult is the last line of --stream-json (SPEC §12): the --json
// object with "type":"result" first, so a consumer that dispatches on
// type, as on every other line, finds it.
type streamResult struct {
	Type string `json:"type"`
	runResult
}
