package subagent

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/tool"
)

// One cap per result (issue 28): a child's result is paged by
// subagents.maxResultBytes alone. Through the real tool registry (whose
// own cap is 50 KiB) the page keeps its size, its marker and its child
// line whatever the setting; on main a setting above 50 KiB lost both.
// subagent_output's next page is bounded the same way.
func TestResultCapThroughRegistry(t *testing.T) {
	const answer = 300 << 10
	for _, kib := range []int{32, 50, 70, 200} {
		t.Run(fmt.Sprintf("%dKiB", kib), func(t *testing.T) {
			prov := &keepProvider{answer: func(Request) string { return strings.Repeat("x", answer) }}
			m := managerWith(t, prov, config.Subagents{MaxResultBytes: kib << 10})
			reg := tool.NewRegistry(m.Tools()...)
			env := &tool.Env{Workspace: t.TempDir(), Permission: tool.ReadOnly}
			args, _ := json.Marshal(map[string]string{"description": "d", "prompt": "p"})
			res := reg.Run(t.Context(), env, "subagent", args)
			id := strings.TrimPrefix(lastLine(res.Content), "child: ")
			if res.IsError || !strings.HasPrefix(id, "child-") {
				t.Fatalf("last line %q, want the child line (error %v)", lastLine(res.Content), res.IsError)
			}
			marker := fmt.Sprintf("[output truncated: bytes 0-%d of %d shown; read the rest with subagent_output {\"child\":%q,\"offset\":%d}", kib<<10, answer, id, kib<<10)
			if !strings.Contains(res.Content, marker) {
				t.Fatalf("result lacks the marker %q; tail %q", marker, res.Content[max(0, len(res.Content)-300):])
			}
			if got := strings.Count(res.Content, "x"); got != kib<<10 {
				t.Fatalf("page holds %d bytes of output, want %d", got, kib<<10)
			}
			next, _ := json.Marshal(map[string]any{"child": id, "offset": kib << 10})
			res2 := reg.Run(t.Context(), env, "subagent_output", next)
			if lastLine(res2.Content) != "child: "+id || strings.Count(res2.Content, "x") != min(kib<<10, answer-kib<<10) {
				t.Fatalf("second page: %d bytes, last line %q", strings.Count(res2.Content, "x"), lastLine(res2.Content))
			}
		})
	}
}
