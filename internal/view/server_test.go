package view

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/session"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testToken = "test-token-0123456789"

func serve(t *testing.T, root string, opts Options) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(NewServer(root, testToken, opts).Handler())
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, url string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return resp, body
}

func getJSON[T any](t *testing.T, url string) T {
	t.Helper()
	resp, body := get(t, url, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return v
}

// TestTokenRequired: every route, the SSE stream included, answers only a
// request with the token and a loopback host.
func TestTokenRequired(t *testing.T) {
	f := newFixture(t)
	f.tree(false)
	ts := serve(t, f.root, Options{})
	paths := []string{"/", "/api/sessions", "/api/sessions/root", "/api/sessions/root/detail", "/api/sessions/root/events"}
	tests := []struct {
		name  string
		query string
		hdr   map[string]string
		want  int
	}{
		{"no token", "", nil, http.StatusUnauthorized},
		{"wrong token", "?token=nope", nil, http.StatusUnauthorized},
		{"token prefix", "?token=" + testToken[:len(testToken)-1], nil, http.StatusUnauthorized},
		{"token longer", "?token=" + testToken + "x", nil, http.StatusUnauthorized},
		{"token in header", "", map[string]string{"X-Reins-Token": testToken}, http.StatusOK},
		{"token in query", "?token=" + testToken, nil, http.StatusOK},
		{"foreign host (DNS rebinding)", "?token=" + testToken, map[string]string{"Host": "evil.example:80"}, http.StatusForbidden},
		{"localhost", "?token=" + testToken, map[string]string{"Host": "localhost:1"}, http.StatusOK},
	}
	for _, tt := range tests {
		for _, p := range paths {
			t.Run(tt.name+" "+p, func(t *testing.T) {
				if strings.HasSuffix(p, "/events") && tt.want == http.StatusOK {
					// A granted stream does not end by itself: check its
					// status and leave.
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+p+tt.query, nil)
					for k, v := range tt.hdr {
						if k == "Host" {
							req.Host = v
						} else {
							req.Header.Set(k, v)
						}
					}
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != tt.want {
						t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
					}
					return
				}
				resp, body := get(t, ts.URL+p+tt.query, tt.hdr)
				if resp.StatusCode != tt.want {
					t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.want, body)
				}
				if tt.want != http.StatusOK && (bytes.Contains(body, []byte("root")) || bytes.Contains(body, []byte("review"))) {
					t.Errorf("a refused request got data: %s", body)
				}
				if resp.Header.Get("Referrer-Policy") != "no-referrer" {
					t.Error("no Referrer-Policy: the token could leak in a Referer")
				}
			})
		}
	}
}

func TestNewTokenIsRandom(t *testing.T) {
	a, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewToken()
	if a == b || len(a) < 40 {
		t.Fatalf("tokens %q and %q", a, b)
	}
}

func TestSessionList(t *testing.T) {
	f := newFixture(t)
	f.tree(false)
	f.wide(3)
	ts := serve(t, f.root, Options{})
	list := getJSON[[]Summary](t, ts.URL+"/api/sessions?token="+testToken)
	if len(list) != 2 {
		t.Fatalf("%d roots listed, want 2 (children nest under their roots): %+v", len(list), list)
	}
	if list[0].ID != "wide" || list[1].ID != "root" {
		t.Errorf("order %s, %s: want newest first", list[0].ID, list[1].ID)
	}
	// The root's three children include the ACP child B, which keeps no
	// reins session (issue 28: main counted child sessions and said 2).
	if list[0].Children != 3 || list[1].Children != 3 {
		t.Errorf("children %d and %d, want 3 and 3", list[0].Children, list[1].Children)
	}
	r := list[1]
	if r.Prompt != "review the repo" || r.Last != "completed" || r.Turns != 1 || r.Model != "deepseek/deepseek-chat" || r.Running {
		t.Errorf("root summary %+v", r)
	}
	// The session's usage counts its children's (session.Tally): the
	// turn's and child A's; B and C reported none.
	if r.Usage == nil || r.Usage.InputTokens != 1100 || r.Usage.CostUSD == nil || math.Abs(*r.Usage.CostUSD-0.0015) > 1e-12 {
		t.Errorf("root usage %+v, want the turn's and child A's", r.Usage)
	}
}

// nodeByKey finds a node of the tree.
func nodeByKey(n *Node, key string) *Node {
	if n.Key == key {
		return n
	}
	for _, c := range n.Children {
		if m := nodeByKey(c, key); m != nil {
			return m
		}
	}
	return nil
}

func TestSessionTree(t *testing.T) {
	f := newFixture(t)
	f.tree(false)
	ts := serve(t, f.root, Options{})
	tree := getJSON[Tree](t, ts.URL+"/api/sessions/root?token="+testToken)
	if tree.Nodes != 4 || len(tree.Root.Children) != 3 {
		t.Fatalf("%d nodes, %d children: want 4 and 3", tree.Nodes, len(tree.Root.Children))
	}
	if len(tree.Versions) != 3 {
		t.Errorf("versions of %d logs, want 3 (root, child-a, child-c): %v", len(tree.Versions), tree.Versions)
	}
	tests := []struct {
		key, state, stop, diag, answer, provider string
		session                                  string
		background                               bool
		job                                      string
	}{
		{key: "root", state: "ended", stop: "completed", provider: "deepseek", session: "root"},
		{key: "child-a", state: "ended", stop: "max-tokens", answer: "partial findings: the parser", provider: "inprocess", session: "child-a"},
		{key: "root/run-b", state: "ended", stop: "error", diag: acpDiagnostic, provider: "acp"},
		{key: "child-c", state: "ended", stop: "completed", answer: hostile, provider: "inprocess", session: "child-c", background: true, job: "job-1 completed"},
	}
	for _, tt := range tests {
		n := nodeByKey(tree.Root, tt.key)
		if n == nil {
			t.Errorf("no node %s", tt.key)
			continue
		}
		job := ""
		if n.JobID != "" {
			job = n.JobID + " " + n.JobStatus
		}
		got := []any{n.State, n.StopReason, n.Diagnostic, n.Answer, n.Provider, n.Session, n.Background, job}
		want := []any{State(tt.state), tt.stop, tt.diag, tt.answer, tt.provider, tt.session, tt.background, tt.job}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: field %d = %v, want %v", tt.key, i, got[i], want[i])
			}
		}
	}
	a := nodeByKey(tree.Root, "child-a")
	if a.DurationMs != 3000 || a.Usage == nil || a.Usage.CostUSD == nil || *a.Usage.CostUSD != 0.0003 || a.Model != "deepseek/deepseek-chat" {
		t.Errorf("child-a: duration %d usage %+v model %q", a.DurationMs, a.Usage, a.Model)
	}
	if tree.Root.Usage == nil || tree.Root.Usage.InputTokens != 1100 || len(tree.Root.TurnMs) != 1 {
		t.Errorf("root usage %+v (the turn's and child A's), turn times %v", tree.Root.Usage, tree.Root.TurnMs)
	}
	resp, _ := get(t, ts.URL+"/api/sessions/nope?token="+testToken, nil)
	if resp.StatusCode != 404 {
		t.Errorf("unknown session: %d, want 404", resp.StatusCode)
	}
	for _, p := range []string{"/api/sessions/..%2F..%2Fetc/detail", "/api/sessions/%2E%2E/detail", "/api/sessions/a%2Fb"} {
		if resp, _ := get(t, ts.URL+p+"?token="+testToken, nil); resp.StatusCode != 404 {
			t.Errorf("%s: %d, want 404", p, resp.StatusCode)
		}
	}
}

// TestTreeStates: a child without subagent/end is running while its
// parent's log is held, and lost once the parent is gone; a root with an
// open turn is running, or interrupted when nobody holds it.
func TestTreeStates(t *testing.T) {
	f := newFixture(t)
	l := f.tree(true)
	add(t, l, session.TypeSubagentStart, session.SubagentStart{RunID: "run-d", Agent: "late", Provider: "acp", Label: "late"})
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	rd := NewReader(f.root)
	tree, err := rd.Tree("root")
	if err != nil {
		t.Fatal(err)
	}
	if tree.Root.State != StateRunning || tree.Root.StopReason != "" || tree.Root.End != nil {
		t.Errorf("held root: %s %q", tree.Root.State, tree.Root.StopReason)
	}
	if u := tree.Root.Usage; u == nil || u.InputTokens != 1100 || u.CostUSD == nil {
		t.Errorf("running root's usage %+v: want its open turn's steps so far", u)
	}
	if d := nodeByKey(tree.Root, "root/run-d"); d == nil || d.State != StateRunning {
		t.Fatalf("unsettled child of a running parent: %+v", d)
	}
	closeLog(t, l) // the writer goes away with the turn open (a killed reins)
	tree, err = rd.Tree("root")
	if err != nil {
		t.Fatal(err)
	}
	if tree.Root.State != StateEnded || tree.Root.StopReason != string(session.ReasonInterrupted) {
		t.Errorf("abandoned root: %s %q, want ended interrupted", tree.Root.State, tree.Root.StopReason)
	}
	if d := nodeByKey(tree.Root, "root/run-d"); d.State != StateLost {
		t.Errorf("unsettled child of a dead parent: %s, want lost", d.State)
	}
}

func TestSessionDetail(t *testing.T) {
	f := newFixture(t)
	f.tree(false)
	ts := serve(t, f.root, Options{})
	d := getJSON[Detail](t, ts.URL+"/api/sessions/root/detail?token="+testToken)
	kinds := map[ItemKind]int{}
	for _, it := range d.Items {
		kinds[it.Kind]++
	}
	for _, k := range []ItemKind{ItemTurn, ItemUser, ItemReasoning, ItemToolCall, ItemToolResult, ItemRetry, ItemChildStart, ItemChildEnd, ItemJob, ItemCompaction, ItemEvent, ItemTurnEnd, ItemHook} {
		if kinds[k] == 0 {
			t.Errorf("no %s item: %v", k, kinds)
		}
	}
	var sawEvent, sawCompaction bool
	for _, it := range d.Items {
		switch it.Kind {
		case ItemHook:
			// hook/run is shown as reins log shows it, not as raw data:
			// the fixed-form note is reins's, the hook's words are text.
			want := "$ ./guard.sh " + hostile + "\nto the model: check the parser\nto the user: " + hostile
			if it.Name != "PostToolUse Task" || it.Note != "block, exit 2, 1500 ms" || it.Text != want || it.CallID != "c1" || it.IsError {
				t.Errorf("hook item %+v", it)
			}
			if strings.Contains(it.Note, "<") {
				t.Errorf("hook-written text in the note %q", it.Note)
			}
		case ItemEvent:
			sawEvent = it.Name == "future/event" && strings.Contains(it.Text, "<b>unknown</b>")
		case ItemCompaction:
			sawCompaction = it.Text == "earlier work, summed up" && strings.Contains(it.Note, "1–5")
		}
	}
	if !sawEvent || !sawCompaction {
		t.Errorf("unknown event shown raw: %v; compaction: %v", sawEvent, sawCompaction)
	}
	spans := map[SpanKind][]Span{}
	for _, s := range d.Spans {
		spans[s.Kind] = append(spans[s.Kind], s)
	}
	req := spans[SpanRequest]
	if len(req) != 3 || req[0].Status != "RATE_LIMIT" || req[1].Status != "ok" {
		t.Errorf("requests %+v: want the failed attempt (RATE_LIMIT), its retry (ok) and step 2's", req)
	}
	if h := spans[SpanHook]; len(h) != 1 || h[0].Label != "PostToolUse Task" || h[0].Status != "block" || h[0].End.Sub(h[0].Start) != 1500*time.Millisecond {
		t.Errorf("hook spans %+v", h)
	}
	if len(spans[SpanWait]) != 1 || len(spans[SpanChild]) != 3 || len(spans[SpanStep]) != 2 || len(spans[SpanTool]) != 1 {
		t.Errorf("spans %v", spans)
	}
	for _, s := range d.Spans {
		if s.End == nil {
			t.Errorf("span %s %s left open in an ended session", s.Kind, s.Label)
		}
	}
}

// TestDetailBounds: one huge tool result is clipped and marked, and the
// oldest items beyond the bound are counted, not sent.
func TestDetailBounds(t *testing.T) {
	f := newFixture(t)
	l := f.create("big", "")
	add(t, l, session.TypeTurnStart, session.TurnStart{})
	add(t, l, session.TypeToolResult, session.ToolResult{CallID: "x", Content: strings.Repeat("é", maxText)})
	for range maxItems {
		add(t, l, session.TypeJobNotice, session.JobNotice{JobID: "j", Status: "completed"})
	}
	closeLog(t, l)
	d, err := NewReader(f.root).Detail("big")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Items) != maxItems || d.Omitted != 2 {
		t.Fatalf("%d items, %d omitted", len(d.Items), d.Omitted)
	}
	long, err := session.NewEvent(session.TypeToolResult, 0, time.Time{}, json.RawMessage(`{"content":"`+strings.Repeat("é", maxText)+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	d2 := buildDetail("x", &session.Tail{Events: []session.Event{long}})
	if it := d2.Items[0]; !it.Truncated || len(it.Text) > maxText || !strings.HasSuffix(it.Text, "é") {
		t.Errorf("clipped to %d bytes, truncated %v", len(it.Text), it.Truncated)
	}
}

var dataRE = regexp.MustCompile(`(?s)<script type="application/json" id="reins-data">.*?</script>`)

var nonceRE = regexp.MustCompile(`script-src 'nonce-([A-Za-z0-9_-]+)'`)

func TestPageCSP(t *testing.T) {
	f := newFixture(t)
	ts := serve(t, f.root, Options{})
	resp, body := get(t, ts.URL+"/?token="+testToken, nil)
	csp := resp.Header.Get("Content-Security-Policy")
	m := nonceRE.FindStringSubmatch(csp)
	if m == nil || !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Fatalf("CSP %q", csp)
	}
	if !bytes.Contains(body, []byte(`<script nonce="`+m[1]+`">`)) {
		t.Error("the page's script does not carry the policy's nonce")
	}
	_, body2 := get(t, ts.URL+"/?token="+testToken, nil)
	if bytes.Equal(body, body2) {
		t.Error("the nonce is the same on two loads")
	}
	assertSelfContained(t, body)
}

// assertSelfContained fails on anything that would load from elsewhere.
// The data block is JSON, which can hold any text (escaped for HTML).
func assertSelfContained(t *testing.T, page []byte) {
	t.Helper()
	page = dataRE.ReplaceAll(page, nil)
	for _, bad := range []string{" src=", "<link", "@import", "url(", "http://", "https://"} {
		if bytes.Contains(page, []byte(bad)) {
			t.Errorf("the page contains %q", bad)
		}
	}
}

// TestNoHTMLParsingInScript: the page builds its DOM from text only.
func TestNoHTMLParsingInScript(t *testing.T) {
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "createContextualFragment", "DOMParser", "srcdoc"} {
		if strings.Contains(appJS, bad) {
			t.Errorf("app.js uses %s", bad)
		}
	}
}

// readEvent reads one server-sent event: its name and data.
func readEvent(t *testing.T, br *bufio.Reader) (string, string) {
	t.Helper()
	var name, data string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && (name != "" || data != ""):
			return name, data
		case strings.HasPrefix(line, "event: "):
			name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data += line[len("data: "):]
		}
	}
}

// TestEventsTail: the stream sends the tree, then a new tree when the
// running session's log grows; a client that goes away ends its handler
// (goleak checks), and the streams are bounded.
func TestEventsTail(t *testing.T) {
	f := newFixture(t)
	l := f.tree(true)
	defer closeLog(t, l)
	ts := serve(t, f.root, Options{Poll: 20 * time.Millisecond, MaxStreams: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/api/sessions/root/events?token="+testToken, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	br := bufio.NewReader(resp.Body)
	name, data := readEvent(t, br)
	var tree Tree
	if name != "tree" || json.Unmarshal([]byte(data), &tree) != nil || tree.Nodes != 4 || tree.Root.State != StateRunning {
		t.Fatalf("first event %s: %.200s", name, data)
	}

	// A second live view is refused while the first is open.
	if resp2, _ := get(t, ts.URL+"/api/sessions/root/events?token="+testToken, nil); resp2.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("second stream: %d, want 503", resp2.StatusCode)
	}

	add(t, l, session.TypeSubagentStart, session.SubagentStart{RunID: "run-new", Agent: "late", Provider: "acp", Label: "new one"})
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	name, data = readEvent(t, br)
	if name != "tree" || json.Unmarshal([]byte(data), &tree) != nil || nodeByKey(tree.Root, "root/run-new") == nil {
		t.Fatalf("after growth %s: %.300s", name, data)
	}
	cancel()
	resp.Body.Close()
	// The slot frees when the handler has seen the client go.
	deadline := time.Now().Add(20 * time.Second)
	for {
		rctx, rcancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(rctx, "GET", ts.URL+"/api/sessions/root/events?token="+testToken, nil)
		resp, err := http.DefaultClient.Do(req)
		ok := err == nil && resp.StatusCode == 200
		if err == nil {
			resp.Body.Close()
		}
		rcancel()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stream's slot was not released after the client left")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStreamLife: a stream ends by itself after StreamLife.
func TestStreamLife(t *testing.T) {
	f := newFixture(t)
	f.tree(false)
	ts := serve(t, f.root, Options{Poll: 10 * time.Millisecond, StreamLife: 50 * time.Millisecond})
	resp, body := get(t, ts.URL+"/api/sessions/root/events?token="+testToken, nil) // returns only when the stream ends
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte("event: tree")) {
		t.Fatalf("%d %.200s", resp.StatusCode, body)
	}
}

func TestExport(t *testing.T) {
	f := newFixture(t)
	f.tree(false)
	var buf bytes.Buffer
	if err := Export(&buf, f.root, "root", time.Now()); err != nil {
		t.Fatal(err)
	}
	page := buf.Bytes()
	assertSelfContained(t, page)
	csp := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]+)">`).FindSubmatch(page)
	if csp == nil {
		t.Fatal("no CSP meta tag")
	}
	if !strings.Contains(string(csp[1]), "'"+hash(appJS)+"'") || !strings.Contains(string(csp[1]), "'"+hash(appCSS)+"'") || strings.Contains(string(csp[1]), "connect-src") {
		t.Errorf("CSP %s: want the script's and style's hashes and no network", csp[1])
	}
	if !bytes.Contains(page, []byte("<script>"+appJS+"</script>")) {
		t.Error("the script in the page is not the one hashed")
	}
	// Hostile text is data, escaped for HTML: only the page's own two
	// script elements exist.
	if n := bytes.Count(bytes.ToLower(page), []byte("<script")); n != 2 {
		t.Errorf("%d <script in the export, want 2", n)
	}
	if bytes.Contains(page, []byte("<img")) {
		t.Error("hostile <img> in the export unescaped")
	}
	m := regexp.MustCompile(`(?s)<script type="application/json" id="reins-data">(.*?)</script>`).FindSubmatch(page)
	if m == nil {
		t.Fatal("no data")
	}
	var d pageData
	if err := json.Unmarshal(m[1], &d); err != nil {
		t.Fatal(err)
	}
	if d.Mode != "export" || d.Tree == nil || d.Tree.Nodes != 4 || len(d.Details) != 3 {
		t.Fatalf("data: mode %s, details %d", d.Mode, len(d.Details))
	}
	if err := Export(io.Discard, f.root, "nope", time.Now()); err != ErrNoSession {
		t.Errorf("export of an unknown session: %v", err)
	}
}

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:80": true, "localhost:1": true, "[::1]:9": true, "127.0.0.1": true,
		"evil.example:80": false, "127.0.0.1.evil.example": false, "10.0.0.1:80": false, "": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("%q: %v", host, got)
		}
	}
}

// TestReaderCorruptTail: a corrupt line shows what came before it.
func TestReaderCorruptTail(t *testing.T) {
	f := newFixture(t)
	f.tree(false)
	p := f.root + "/root/" + session.FileName
	fh, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString("not json\n")
	fh.Close()
	rd := NewReader(f.root)
	tree, err := rd.Tree("root")
	if err != nil || tree.Nodes != 4 || tree.Root.Problem != corruptProblem {
		t.Fatalf("%v %+v", err, tree)
	}
	if d, err := rd.Detail("root"); err != nil || d.Problem != corruptProblem || len(d.Items) == 0 {
		t.Fatalf("detail of a corrupt log: %v %+v", err, d)
	}
}

// TestServeStopsStreams: when reins view is stopped (its context ends),
// Serve returns promptly even with a live stream open.
func TestServeStopsStreams(t *testing.T) {
	f := newFixture(t)
	l := f.tree(true)
	defer closeLog(t, l)
	ln, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ln.Addr().String(), "127.0.0.1:") {
		t.Errorf("listening on %s, want loopback", ln.Addr())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ln, NewServer(f.root, testToken, Options{Poll: 20 * time.Millisecond}).Handler())
	}()
	u := URL(ln, testToken, "root")
	if !strings.HasSuffix(u, "/?token="+testToken+"#s=root") {
		t.Errorf("URL %s", u)
	}
	resp, err := http.Get("http://" + ln.Addr().String() + "/api/sessions/root/events?token=" + testToken)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if name, _ := readEvent(t, bufio.NewReader(resp.Body)); name != "tree" {
		t.Fatalf("first event %q", name)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
}

// TestTreeRepeatedChildSession: a child session named twice (a continued
// child, or a log that points back at its parent) is read once; the tree
// stays finite and its keys unique.
func TestTreeRepeatedChildSession(t *testing.T) {
	f := newFixture(t)
	l := f.create("loop", "")
	add(t, l, session.TypeTurnStart, session.TurnStart{})
	f.child("kid", "loop", session.ReasonCompleted, "first")
	add(t, l, session.TypeSubagentStart, session.SubagentStart{RunID: "r1", ChildSession: "kid", Agent: "a", Provider: "inprocess"})
	add(t, l, session.TypeSubagentEnd, session.SubagentEnd{RunID: "r1", StopReason: "completed"})
	add(t, l, session.TypeSubagentStart, map[string]any{"runId": "r2", "childSession": "kid", "agent": "a", "provider": "inprocess", "continues": "kid"})
	add(t, l, session.TypeSubagentEnd, map[string]any{"runId": "r2", "stopReason": "completed", "continues": "kid"})
	add(t, l, session.TypeSubagentStart, session.SubagentStart{RunID: "r3", ChildSession: "loop", Agent: "a", Provider: "inprocess"})
	add(t, l, session.TypeSubagentStart, session.SubagentStart{RunID: "r4", ChildSession: "../etc", Agent: "a", Provider: "inprocess"})
	add(t, l, session.TypeTurnEnd, session.TurnEnd{Reason: "completed"})
	closeLog(t, l)
	tree, err := NewReader(f.root).Tree("loop")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	var walk func(n *Node)
	walk = func(n *Node) {
		if keys[n.Key] {
			t.Errorf("key %s twice", n.Key)
		}
		keys[n.Key] = true
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(tree.Root)
	if tree.Nodes != 5 || len(keys) != 5 {
		t.Fatalf("%d nodes, keys %v", tree.Nodes, keys)
	}
	if c := nodeByKey(tree.Root, "loop/r2"); c == nil || c.Continues != "kid" || c.Session != "kid" {
		t.Errorf("the continuation: %+v", c)
	}
	if c := nodeByKey(tree.Root, "loop/r4"); c == nil || c.Problem == "" || c.Session != "" {
		t.Errorf("a child id that is a path: %+v", c)
	}
	if c := nodeByKey(tree.Root, "loop/r3"); c == nil || len(c.Children) != 0 {
		t.Errorf("a child that names its parent: %+v", c)
	}
}

// TestMalformedEvents: events whose data has an odd shape (a log is outside
// input) are shown as far as they go and never break the view; those whose
// data does not decode as their type's payload at all never reach it (the
// log's reader refuses them, session.PayloadError).
func TestMalformedEvents(t *testing.T) {
	types := []string{session.TypeTurnStart, session.TypeTurnEnd, session.TypeStepStart, session.TypeStepEnd,
		session.TypeUserMessage, session.TypeAssistantMessage, session.TypeToolCall, session.TypeToolResult,
		session.TypeLLMRetry, session.TypeLLMRetryStarted, session.TypeSubagentStart, session.TypeSubagentEnd,
		session.TypeJobNotice, session.TypeContextCompacted, "x/y"}
	payloads := []string{`null`, `"text"`, `[1,2]`, `{"message":{"content":[{"type":"tool-result","content":"x"}]}}`,
		`{"message":{"content":[{"type":"mystery"}]},"usage":{"inputTokens":1}}`, `{"runId":"","childSession":"../../x"}`, `{}`}
	var events []session.Event
	for _, typ := range types {
		for _, p := range payloads {
			e, err := session.NewEvent(typ, int64(len(events)), time.Now(), json.RawMessage(p))
			if err != nil {
				continue
			}
			events = append(events, e)
		}
	}
	d := buildDetail("m", &session.Tail{Events: events})
	if len(d.Items) == 0 {
		t.Fatal("nothing shown")
	}
	// An answer with nothing to show, first in its log: its usage has no
	// entry to go on.
	answer, err := session.NewEvent(session.TypeAssistantMessage, 0, time.Time{}, json.RawMessage(payloads[4]))
	if err != nil {
		t.Fatal(err)
	}
	buildDetail("m", &session.Tail{Events: []session.Event{answer}})
	b := &treeBuilder{r: NewReader(t.TempDir()), tree: &Tree{Versions: map[string]int64{}}, seen: map[string]bool{}}
	n := &Node{Key: "m", Session: "m"}
	b.session(n, logged{Tail: &session.Tail{Events: events}}, func() bool { return false }, 0)
	if _, err := json.Marshal(n); err != nil {
		t.Fatal(err)
	}
}
