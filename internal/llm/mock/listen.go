package mock

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
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

// StartTest starts s on an httptest server for tests of other packages.
// url is the server's base URL (append /chat/completions or /v1/messages,
// or use it as a provider base URL). stop ends every in-flight handler,
// stalled ones included, and closes the server.
func StartTest(s *Script) (url string, srv *Server, stop func()) {
	srv = NewServer(s)
	ctx, cancel := context.WithCancel(context.Background())
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.BaseContext = func(net.Listener) context.Context { return ctx }
	ts.Start()
	return ts.URL, srv, func() {
		cancel()
		ts.CloseClientConnections()
		ts.Close()
	}
}
