package shellcmd

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/tool"
)

// TestShownAndContext: the screen shows at most MaxShown escaped lines
// and counts the rest; the next prompt gets the whole output, unescaped.
func TestShownAndContext(t *testing.T) {
	var out strings.Builder
	for i := range MaxShown + 5 {
		fmt.Fprintf(&out, "line %d \x1b[2J\n", i)
	}
	d := Done{Command: "seq", Res: tool.Result{Content: out.String()}}
	shown := d.Shown()
	if strings.Contains(shown, "\x1b") || !strings.Contains(shown, `line 0 \x1b[2J`) || strings.Contains(shown, "line 40 ") ||
		!strings.Contains(shown, "… 5 more lines") {
		t.Errorf("shown:\n%s", shown)
	}
	ctx := d.Context()
	if !strings.HasPrefix(ctx, "<shell command=\"seq\">\nline 0 \x1b[2J\n") || !strings.HasSuffix(ctx, "line 44 \x1b[2J\n</shell>") {
		t.Errorf("context:\n%q", ctx)
	}
}
