package tool

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Narrowing is a session's allowed-tools in force for one turn: a skill
// the model loaded, or a skill or custom command the user ran, names the
// only tools the rest of that turn may call (docs/skills.md,
// docs/commands.md). It only refuses: a tool it allows still passes the
// permission mode, the rules and the approval (Env.Narrow is asked first).
type Narrowing struct {
	// Turn is the number of the session's next turn (session.Log.NextTurn):
	// during a turn, the running one's number plus one.
	Turn func() int

	mu    sync.Mutex
	turn  int
	allow []string // nil: nothing narrowed
	by    string
}

// Limit narrows a turn to tools (nil: no change): the running turn, or,
// with upcoming, the turn about to start (the user's /NAME). A second
// limit in the same turn narrows further. by names what narrowed it.
func (n *Narrowing) Limit(tools []string, by string, upcoming bool) {
	if n == nil || tools == nil || n.Turn == nil {
		return
	}
	turn := n.Turn()
	if !upcoming {
		turn--
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.turn != turn || n.allow == nil {
		n.turn, n.allow, n.by = turn, slices.Clone(tools), by
		return
	}
	n.allow = slices.DeleteFunc(n.allow, func(t string) bool { return !slices.Contains(tools, t) })
	n.by += ", " + by
}

// Check is Env.Narrow: "" when a call of tool name may go on to the
// session's own checks, else the refusal. The skill tool is never
// narrowed (a skill may load another, which narrows further).
func (n *Narrowing) Check(name string) string {
	if n == nil || name == "skill" || n.Turn == nil {
		return ""
	}
	running := n.Turn() - 1
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.allow == nil || n.turn != running || slices.Contains(n.allow, name) {
		return ""
	}
	return fmt.Sprintf("the %s call is refused: %s in use allows only %s this turn (its allowed-tools)", name, n.by, strings.Join(append([]string{"skill"}, n.allow...), ", "))
}
