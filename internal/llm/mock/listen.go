package mock

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// ListenAndServe serves s on addr until ctx is done. An empty addr binds
// 127.0.0.1 on a free port: the mock is for local tests and demos and
// should not be reachable from the network unless asked. ready, if not
// nil, is called with the bound address before the first request is
// served. Handlers see their request contexts end when ctx does, so
// stalled streams do not hold up shutdown.
func ListenAndServe(ctx context.Context, addr string, s *Script, ready func(addr string)) error {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           NewServer(s),
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ReadHeaderTimeout: 30 * time.Second,
	}
	if ready != nil {
		ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// StartTest starts s on a loopback server for tests of other packages.
// url is the server's base URL (append /chat/completions or /v1/messages,
// or use it as a provider base URL). stop ends every in-flight handler,
// stalled ones included, closes the server and waits for the handlers to
// return. It is net/http's server and not httptest's, which would link
// the flag package and a test certificate into reins (BENCHMARKS.md).
func StartTest(s *Script) (url string, srv *Server, stop func()) {
	srv = NewServer(s)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic("mock: cannot listen on loopback: " + err.Error())
	}
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu       sync.Mutex
		closed   bool
		handlers sync.WaitGroup
	)
	hs := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			if closed {
				mu.Unlock()
				http.Error(w, "mock: stopped", http.StatusServiceUnavailable)
				return
			}
			handlers.Add(1)
			mu.Unlock()
			defer handlers.Done()
			srv.ServeHTTP(w, r)
		}),
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ReadHeaderTimeout: 30 * time.Second,
	}
	served := make(chan struct{})
	go func() {
		_ = hs.Serve(ln)
		close(served)
	}()
	return "http://" + ln.Addr().String(), srv, func() {
		cancel()
		mu.Lock()
		closed = true
		mu.Unlock()
		_ = hs.Close()
		<-served
		handlers.Wait()
	}
}
