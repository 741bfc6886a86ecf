package agent

import (
	"context"
	"testing"

	"github.com/reinsdev/reins/internal/childproc"
	"github.com/reinsdev/reins/internal/session"
)

// A child's stall (childproc.ErrStalled) ends its turn as a timeout, a
// plain cancel as the user's: the loop tells them apart by the cause's
// marker method, not by importing the child lifecycle.
func TestAbortedByCause(t *testing.T) {
	for _, tc := range []struct {
		cause error
		want  string
	}{
		{childproc.ErrStalled, session.AbortedByTimeout},
		{ErrAbortedByParent, session.AbortedByParent},
		{ErrAbortedByTimeout, session.AbortedByTimeout},
		{context.DeadlineExceeded, session.AbortedByUser},
		{nil, session.AbortedByUser},
	} {
		ctx, cancel := context.WithCancelCause(t.Context())
		cancel(tc.cause)
		if got := AbortedBy(ctx); got != tc.want {
			t.Errorf("cause %v: AbortedBy = %q, want %q", tc.cause, got, tc.want)
		}
	}
}
