package batch

import (
	"fmt"
	"io"
	"strings"
)

// Bar is a batch's progress on stderr: redrawn in place on a terminal,
// else one line at each tenth of the batch.
type Bar struct {
	w     io.Writer
	tty   bool
	total int
	shown int // tenths printed (not a terminal)
	drawn bool
}

// NewBar is the bar of a batch of total tasks on w (tty: a terminal).
func NewBar(w io.Writer, tty bool, total int) *Bar {
	return &Bar{w: w, tty: tty, total: total}
}

const barWidth = 30

// Update shows p. It is called under Run's lock (Options.Progress), so
// calls never interleave.
func (b *Bar) Update(p Progress) {
	if b.total == 0 {
		return
	}
	if !b.tty {
		tenth := p.Done * 10 / b.total
		if tenth <= b.shown {
			return
		}
		b.shown = tenth
		fmt.Fprintf(b.w, "reins batch: %d/%d done, %d not completed\n", p.Done, p.Total, p.Failed)
		return
	}
	fill := p.Done * barWidth / b.total
	fmt.Fprintf(b.w, "\r[%s%s] %d/%d, %d not completed", strings.Repeat("#", fill), strings.Repeat(".", barWidth-fill), p.Done, p.Total, p.Failed)
	b.drawn = true
}

// Done ends the bar's line on a terminal.
func (b *Bar) Done() {
	if b.drawn {
		fmt.Fprintln(b.w)
	}
}
