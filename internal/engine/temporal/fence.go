package temporal

import (
	"context"
	"io"
	"os"
	"time"

	"go.temporal.io/sdk/client"
)

// Fencing (docs/engine.md, "Fencing"): a frozen or partitioned worker's
// children must not run on while their retries start elsewhere. Children
// run inside the worker process, so the fence is a small process of its
// own beside it (`reins-temporal fence`) that holds a lease the worker
// renews — one byte on the fence's stdin every LeaseEvery, written only
// while the worker runs and the cluster answers it. When the lease lapses
// the fence kills the worker with SIGKILL, and every child in it; the
// sandbox supervisors of the children's tools see reins die and end them.
// The activity's HeartbeatTimeout is longer than Lease plus a beat, so a
// retry starts only after the first copy is dead.
const (
	// Lease is how long the fence lets the worker go unrenewed.
	Lease = 6 * time.Second
	// LeaseEvery is how often the worker renews it.
	LeaseEvery = time.Second
)

// RenewLease writes one byte to w every LeaseEvery while c's cluster
// answered a health check within Lease, until ctx ends or w fails (the
// fence is gone). A worker that is frozen writes nothing; one cut from the
// cluster stops writing.
func RenewLease(ctx context.Context, c client.Client, w io.Writer, logf func(string, ...any)) {
	t := time.NewTicker(LeaseEvery)
	defer t.Stop()
	lastOK := time.Now()
	for {
		hctx, cancel := context.WithTimeout(ctx, Lease)
		_, err := c.CheckHealth(hctx, &client.CheckHealthRequest{})
		cancel()
		if err == nil {
			lastOK = time.Now()
		}
		if time.Since(lastOK) < Lease {
			if _, err := w.Write([]byte{1}); err != nil {
				logf("worker: the fence is gone: %v", err)
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Fence is the fence's side: it kills process pid when no byte came on
// renewals for lease, and returns when renewals end (the worker exited:
// nothing is left to fence) or after the kill. It reports whether it
// killed.
func Fence(renewals io.Reader, pid int, lease time.Duration) bool {
	beat := make(chan struct{}, 1)
	eof := make(chan struct{})
	go func() {
		defer close(eof)
		buf := make([]byte, 64)
		for {
			n, err := renewals.Read(buf)
			if n > 0 {
				select {
				case beat <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	t := time.NewTimer(lease)
	defer t.Stop()
	for {
		select {
		case <-beat:
			if !t.Stop() {
				<-t.C
			}
			t.Reset(lease)
		case <-eof:
			return false
		case <-t.C:
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
			return true
		}
	}
}
