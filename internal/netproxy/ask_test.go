package netproxy

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// askRig is a proxy whose Ask goes, as in reins, over a question socket
// to a Questions (ServeQuestions, AskOver), and an HTTP client through it.
type askRig struct {
	proxy  string
	client *http.Client
	stop   func()
}

func newAskRig(t *testing.T, q *Questions) *askRig {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "q.sock")
	qln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	qdone := make(chan struct{})
	go func() { defer close(qdone); _ = ServeQuestions(qln, q) }()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Allow: []string{"listed.example"}, Ask: AskOver(sock)}
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(ln) }()
	pu, _ := url.Parse("http://" + ln.Addr().String())
	tr := &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true}
	return &askRig{
		proxy:  ln.Addr().String(),
		client: &http.Client{Transport: tr, Timeout: 60 * time.Second},
		stop: func() {
			tr.CloseIdleConnections()
			s.Close()
			<-done
			q.Close()
			qln.Close()
			<-qdone
		},
	}
}

func (r *askRig) get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := r.client.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestAskAllowedOnce: a host outside the list is asked about; allowed, it is
// reached, and the next connections to it — one after the other, or ten at
// once to a host being asked about — make no second question.
func TestAskAllowedOnce(t *testing.T) {
	defer goleak.VerifyNone(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "upstream-ok") }))
	defer up.Close()
	// A second host: the same server on IPv6 loopback. (An address the user
	// allowed is reached; a name — "localhost" — that resolves to loopback
	// would not be, allowed or not: TestResolvedLoopback.)
	ln6, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Fatalf("this test needs IPv6 loopback: %v", err)
	}
	up6 := &httptest.Server{Listener: ln6, Config: &http.Server{Handler: up.Config.Handler}}
	up6.Start()
	defer up6.Close()
	var mu sync.Mutex
	asked := map[string]int{}
	release := make(chan struct{})
	q := &Questions{Ask: func(ctx context.Context, host string) bool {
		mu.Lock()
		asked[host]++
		mu.Unlock()
		if host == "::1" {
			select { // held until every concurrent connection waits
			case <-release:
			case <-ctx.Done():
				return false
			}
		}
		return true
	}}
	r := newAskRig(t, q)
	defer r.stop()

	for range 2 {
		if code, body := r.get(t, up.URL); code != 200 || body != "upstream-ok" {
			t.Fatalf("allowed host: %d %q", code, body)
		}
	}
	// Ten connections to a host while its question is open.
	var wg sync.WaitGroup
	var good atomic.Int32
	for range 10 {
		wg.Go(func() {
			resp, err := r.client.Get(up6.URL + "/")
			if err != nil {
				t.Errorf("concurrent GET: %v", err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) == "upstream-ok" {
				good.Add(1)
			}
		})
	}
	// Every connection is waiting when the question's single waiter count
	// reaches 10 (seen through Questions' own state).
	deadline := time.Now().Add(60 * time.Second)
	for {
		q.mu.Lock()
		n := 0
		if qu := q.pending["::1"]; qu != nil {
			n = qu.waiters
		}
		q.mu.Unlock()
		if n == 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d connections wait for the question", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	wg.Wait()
	if good.Load() != 10 {
		t.Errorf("%d of 10 concurrent connections reached the host", good.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if asked["127.0.0.1"] != 1 || asked["::1"] != 1 || len(asked) != 2 {
		t.Errorf("questions asked: %v, want one per host", asked)
	}
}

// TestAskRefused: a host the user refuses gets the proxy's refusal line
// (plain HTTP and CONNECT), and the refusal holds for the session: no
// second question.
func TestAskRefused(t *testing.T) {
	defer goleak.VerifyNone(t)
	var n atomic.Int32
	q := &Questions{Ask: func(ctx context.Context, host string) bool { n.Add(1); return false }}
	r := newAskRig(t, q)
	defer r.stop()
	code, body := r.get(t, "http://refused.example/")
	if code != 403 || !strings.Contains(body, "reins sandbox: refused.example is not in sandbox.allowDomains") {
		t.Errorf("refused host: %d %q", code, body)
	}
	conn, err := net.Dial("tcp", r.proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "CONNECT refused.example:443 HTTP/1.1\r\nHost: refused.example:443\r\n\r\n")
	_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	b, _ := io.ReadAll(conn)
	if !strings.HasPrefix(string(b), "HTTP/1.1 403 ") || !strings.Contains(string(b), "refused.example is not in sandbox.allowDomains") {
		t.Errorf("refused CONNECT: %q", b)
	}
	if n.Load() != 1 {
		t.Errorf("asked %d times, want 1", n.Load())
	}
}

// TestAskCancel: a connection waiting for an answer ends with the refusal
// when the proxy closes (the run ended), the question is taken back (its
// context ends on reins's side), and nothing hangs or leaks. A question
// taken back is not an answer: the next connection asks again.
func TestAskCancel(t *testing.T) {
	defer goleak.VerifyNone(t)
	entered := make(chan string, 4)
	withdrawn := make(chan string, 4)
	q := &Questions{Ask: func(ctx context.Context, host string) bool {
		entered <- host
		<-ctx.Done()
		withdrawn <- host
		return true // too late: the wait is over
	}}
	sock := filepath.Join(t.TempDir(), "q.sock")
	qln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	qdone := make(chan struct{})
	go func() { defer close(qdone); _ = ServeQuestions(qln, q) }()
	defer func() { q.Close(); qln.Close(); <-qdone }()

	for round := range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s := &Server{Ask: AskOver(sock)}
		done := make(chan struct{})
		go func() { defer close(done); _ = s.Serve(ln) }()
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET http://waiting.example/ HTTP/1.1\r\nHost: waiting.example\r\n\r\n")
		select {
		case h := <-entered:
			if h != "waiting.example" {
				t.Fatalf("asked about %q", h)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("round %d: the question was never asked", round)
		}
		got := make(chan string, 1)
		go func() {
			_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
			b, _ := io.ReadAll(conn)
			got <- string(b)
		}()
		s.Close() // the run ends while the question is open
		<-done
		select {
		case h := <-withdrawn:
			if h != "waiting.example" {
				t.Fatalf("withdrew %q", h)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("round %d: the question was not taken back", round)
		}
		if b := <-got; strings.Contains(b, " 200 ") {
			t.Errorf("round %d: a withdrawn question let the connection through: %q", round, b)
		}
		conn.Close()
	}
}

func TestValidHost(t *testing.T) {
	for h, want := range map[string]bool{
		"example.com": true, "::1": true, "fe80::1%eth0": true, "a_b.example": true,
		"": false, "a b": false, "evil\n": false, "x\x1b[2J": false, strings.Repeat("a", 300): false,
	} {
		if got := validHost(h); got != want {
			t.Errorf("validHost(%q) = %v", h, got)
		}
	}
}

// TestAskBounded: at most MaxQuestions questions are open at once; a
// connection to yet another host is refused at once, and that refusal is
// not remembered (asked later, when there is room).
func TestAskBounded(t *testing.T) {
	defer goleak.VerifyNone(t)
	release := make(chan struct{})
	var n atomic.Int32
	q := &Questions{Ask: func(ctx context.Context, host string) bool {
		n.Add(1)
		select {
		case <-release:
			return true
		case <-ctx.Done():
			return false
		}
	}}
	defer q.Close()
	var wg sync.WaitGroup
	for i := range MaxQuestions {
		wg.Go(func() {
			if !q.Decide(context.Background(), fmt.Sprintf("h%d.example", i)) {
				t.Errorf("h%d refused", i)
			}
		})
	}
	for deadline := time.Now().Add(60 * time.Second); n.Load() < MaxQuestions; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d questions open", n.Load())
		}
	}
	if q.Decide(context.Background(), "more.example") {
		t.Error("a question beyond the bound was allowed")
	}
	if n.Load() != MaxQuestions {
		t.Errorf("%d questions asked, want %d", n.Load(), MaxQuestions)
	}
	close(release)
	wg.Wait()
	if !q.Decide(context.Background(), "more.example") || n.Load() != MaxQuestions+1 {
		t.Errorf("with room again, more.example was not asked (%d questions)", n.Load())
	}
}
