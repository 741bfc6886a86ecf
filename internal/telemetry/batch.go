package telemetry

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// SpanExporter sends ended spans somewhere: the OTLP/HTTP exporter
// (otlpjson.go), or what Options.Exporter puts in its place.
type SpanExporter interface {
	// ExportSpans sends one batch (none: the start-up probe).
	ExportSpans(ctx context.Context, spans []*SpanData) error
	// Shutdown releases what the exporter holds (idle connections).
	Shutdown(ctx context.Context) error
}

// maxExportBatch is the most spans one export carries (the SDK's
// default, which reins used).
const maxExportBatch = 512

// batcher is the batch span processor: ended spans wait in a queue of
// MaxQueue (beyond it they are dropped, never waited for) and go out in
// batches of at most maxExportBatch, every BatchTimeout or when a batch
// is full, each export bounded by ExportTimeout. At shutdown it exports
// what is queued and stops.
type batcher struct {
	exp     *countingExporter
	queue   chan *SpanData
	stopped atomic.Bool
	stop    chan struct{}
	once    sync.Once
	// done is closed when the export goroutine has returned.
	done chan struct{}
}

func newBatcher(exp *countingExporter) *batcher {
	b := &batcher{exp: exp, queue: make(chan *SpanData, MaxQueue), stop: make(chan struct{}), done: make(chan struct{})}
	go b.run()
	return b
}

// enqueue queues d, or drops it when the queue is full.
func (b *batcher) enqueue(d *SpanData) {
	select {
	case b.queue <- d:
	default:
	}
}

func (b *batcher) run() {
	defer close(b.done)
	timer := time.NewTimer(BatchTimeout)
	defer timer.Stop()
	var batch []*SpanData
	export := func() {
		if len(batch) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), ExportTimeout)
		_ = b.exp.ExportSpans(ctx, batch) // counted, and logged, by countingExporter
		cancel()
		batch = nil
	}
	for {
		select {
		case <-b.stop:
			for {
				select {
				case d := <-b.queue:
					if batch = append(batch, d); len(batch) == maxExportBatch {
						export()
					}
				default:
					export()
					return
				}
			}
		case <-timer.C:
			export()
			timer.Reset(BatchTimeout)
		case d := <-b.queue:
			if batch = append(batch, d); len(batch) == maxExportBatch {
				export()
				timer.Reset(BatchTimeout)
			}
		}
	}
}

// shutdown stops taking spans, exports what is queued and waits for that
// until ctx is done (then it returns ctx's error; the caller abandons the
// exports so that the goroutine returns at once).
func (b *batcher) shutdown(ctx context.Context) error {
	b.once.Do(func() {
		b.stopped.Store(true)
		close(b.stop)
	})
	select {
	case <-b.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
