package llm

import (
	"io"
	"time"
)

// Drain bounds (drainBytes, drainWait) what DrainBody reads.
const (
	drainBytes = 64 << 10
	drainWait  = 100 * time.Millisecond
)

// DrainBody reads what is left of a response body after the stream's end
// marker ([DONE], message_stop): usually only the chunked encoding's last
// bytes. Go's HTTP client puts a connection back in its pool only when the
// body was read to its end, so without this every model request dials a
// new connection (against a real provider, a TLS handshake per step). It
// reads at most 64 KiB and waits at most 100 ms, closing the body to stop
// a server that keeps sending; the caller still closes it as usual.
func DrainBody(body io.ReadCloser) {
	t := time.AfterFunc(drainWait, func() { body.Close() })
	defer t.Stop()
	_, _ = io.Copy(io.Discard, io.LimitReader(body, drainBytes))
}
