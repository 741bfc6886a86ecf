package testutil

import "regexp"

var childLineRE = regexp.MustCompile(`\nchild: child-[0-9a-f]{8}$`)

// NoChildLine is a subagent result, job notice or job_output without its
// last line, child: <id> (docs/subagents.md), which names a child by a
// hash of the random parent session id.
func NoChildLine(s string) string { return childLineRE.ReplaceAllString(s, "") }
