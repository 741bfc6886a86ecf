package llm

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestTransportNamesEndpoint (issue 48): a transport failure names the
// host and port it was trying (the scheme's port when the URL has none);
// an error that does not say where, or a host with other characters, names
// none.
func TestTransportNamesEndpoint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, derr := http.Get("http://" + addr + "/v1/chat/completions")
	if derr == nil {
		t.Fatal("a closed port answered")
	}
	call := StartCall(context.Background(), 0, 0)
	defer call.Close()
	if got, want := call.Fail(derr).Finish.Message, "connect "+addr+": connection refused"; got != want {
		t.Errorf("refused: %q, want %q", got, want)
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&url.Error{Op: "Post", URL: "https://api.example.com/v1", Err: errors.New("dial tcp: lookup api.example.com: no such host")}, "api.example.com:443: host lookup failed"},
		{&url.Error{Op: "Post", URL: "http://h.example/v1", Err: errors.New("read: connection reset by peer")}, "h.example:80: connection reset"},
		{errors.New("connection refused"), "transport failure: connection refused"},
	} {
		if got := transportMessage(tc.err); got != tc.want {
			t.Errorf("transportMessage(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
	if strings.Contains(transportMessage(&url.Error{Op: "Post", URL: "http://a%1b[31m/v1", Err: errors.New("x")}), "\x1b") {
		t.Error("an escape sequence in the host reached the message")
	}
}
