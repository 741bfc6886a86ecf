package markdown

import (
	"strings"

	"github.com/reinsdev/reins/internal/tui/termtext"
)

// Live is a streaming answer as shown, and what it caches: the Markdown
// of the finished paragraphs.
type Live struct {
	src   string
	width int
	out   string
}

// Render is the streaming answer t as shown width cells wide, by r: its
// finished paragraphs (up to the last blank line) as Markdown, rendered
// again only when a paragraph ends, then the paragraph being written,
// wrapped. Only the tail can show, so no more than fills room lines is
// rendered or wrapped: a long answer costs a frame what a short one does.
func (l *Live) Render(r *Renderer, t string, room, width int) string {
	w := max(width-2, 10)
	n := max(room*w*4, 4096)
	cut := strings.LastIndex(t, "\n\n")
	if cut < 0 {
		return termtext.Wrap(termtext.LastBytes(t, n), w)
	}
	done, rest := t[:cut], termtext.LastBytes(strings.TrimLeft(t[cut:], "\n"), n)
	if done != l.src || width != l.width {
		// From a paragraph boundary, so the rendered text stays the same
		// until the next paragraph ends.
		src := done
		if len(src) > n {
			tailStart := len(src) - n
			if i := strings.Index(src[tailStart:], "\n\n"); i >= 0 {
				src = src[tailStart+i+2:]
			} else {
				src = termtext.LastBytes(src, n)
			}
		}
		l.src, l.width, l.out = done, width, r.Render(src)
	}
	if rest == "" {
		return l.out
	}
	return l.out + "\n" + termtext.Wrap("  "+rest, w)
}
