package view

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// The browser tests drive Debian's chromium (scripts/test installs it)
// headless through chromedp: the page is the real one, served by the real
// handler or opened from an exported file.

// newBrowser starts a headless chromium and returns its context; it is
// stopped (and waited for) when the test ends.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		testutil.MissingPeer(t, "chromium not found (Debian package chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // as root chromium refuses to start with its sandbox
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(bctx, 2*time.Minute*slack)
	t.Cleanup(func() {
		cancel()
		cancelBrowser()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// slack stretches every deadline of these tests: a deadline is there so a
// wait that never comes true fails with a message instead of hanging, not
// to judge speed, and on the shared 2-core machine at load 40 chromium's
// 30 s full-page screenshot of the 200-row export ran out
// (TestBrowserExport). The figures the tests name are what a quiet
// machine needs; slack is the headroom for a busy one.
const slack = 6

// within runs actions with a deadline of their own (d × slack), so that a
// wait that never comes true fails the test with a message, not a hang.
func within(t *testing.T, ctx context.Context, d time.Duration, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, d*slack)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// value runs one action that returns a value, with a deadline (d × slack).
func value[T any](t *testing.T, ctx context.Context, d time.Duration, what string, a chromedp.Action[T]) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, d*slack)
	defer cancel()
	v, err := chromedp.Run(c, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// waitTrue evaluates js until it is true, for at most 30 s × slack.
func waitTrue(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second * slack)
	for !value(t, ctx, 10*time.Second, what, chromedp.Evaluate[bool](js)) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, 30*time.Second*slack)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// css is a CSS selector of the first match.
func css(sel string) chromedp.CSS { return chromedp.CSS(sel) }

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png := value(t, ctx, 30*time.Second, "screenshot", chromedp.FullScreenshot(100))
	p := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s (%d bytes)", p, len(png))
}

type row struct {
	Key     string `json:"key"`
	Name    string `json:"name"`
	Outcome string `json:"outcome"`
	Diag    string `json:"diag"`
	Cost    string `json:"cost"`
}

const rowsJS = `Array.from(document.querySelectorAll('tr.node')).map(r => ({
	key: r.dataset.key, name: r.querySelector('.name').textContent,
	outcome: r.querySelector('.outcome').textContent, diag: r.querySelector('.diag').textContent,
	cost: r.children[6].textContent}))`

func rows(t *testing.T, ctx context.Context) map[string]row {
	t.Helper()
	rs := value(t, ctx, 10*time.Second, "reading the tree", chromedp.Evaluate[[]row](rowsJS))
	m := map[string]row{}
	for _, r := range rs {
		m[r.Key] = r
	}
	return m
}

// checkAcceptanceTree checks the three children of the fixture tree.
func checkAcceptanceTree(t *testing.T, rs map[string]row) {
	t.Helper()
	a, b, c := rs["child-a"], rs["root/run-b"], rs["child-c"]
	if a.Outcome != "max-tokens" || !strings.Contains(a.Name, "scanner: scan") || a.Cost != "$0.0003" {
		t.Errorf("max-tokens child: %+v", a)
	}
	if b.Outcome != "error" || b.Diag != acpDiagnostic || !strings.Contains(b.Name, "claude: review") {
		t.Errorf("crashed ACP child: %+v", b)
	}
	if c.Outcome != "completed" || !strings.Contains(c.Name, "background") || !strings.Contains(c.Name, "job job-1 completed") {
		t.Errorf("background job: %+v", c)
	}
}

// checkHostile checks that the hostile answer is on the page as text and
// that nothing it carries ran or became an element.
func checkHostile(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	type result struct {
		Pwned    bool `json:"pwned"`
		Elements int  `json:"elements"`
		Shown    int  `json:"shown"`
	}
	js := `({pwned: window.__pwned !== undefined,
		elements: document.querySelectorAll('main img, main script, main iframe').length +
			Array.from(document.querySelectorAll('main b')).filter(b => b.textContent === 'bold').length,
		shown: Array.from(document.querySelectorAll('main pre')).filter(p => p.textContent.includes(` + "`" + hostile + "`" + `)).length})`
	res := value(t, ctx, 10*time.Second, "reading the page", chromedp.Evaluate[result](js))
	if res.Pwned {
		t.Errorf("%s: the hostile text executed", where)
	}
	if res.Elements != 0 {
		t.Errorf("%s: the hostile text became %d element(s)", where, res.Elements)
	}
	if res.Shown == 0 {
		t.Errorf("%s: the hostile text is not shown as text", where)
	}
}

// checkHostileList: the hostile prompt of a listed session is text.
func checkHostileList(t *testing.T, ctx context.Context) {
	t.Helper()
	type result struct {
		Pwned    bool `json:"pwned"`
		Elements int  `json:"elements"`
		Shown    bool `json:"shown"`
	}
	res := value(t, ctx, 10*time.Second, "reading the list", chromedp.Evaluate[result](`({pwned: window.__pwned !== undefined,
		elements: document.querySelectorAll('main img, main script').length,
		shown: document.querySelector('main').textContent.includes('<script>window.__pwned=1</script>')})`))
	if res.Pwned || res.Elements != 0 || !res.Shown {
		t.Errorf("hostile prompt in the list: %+v", res)
	}
}

// checkNoStray fails on a JavaScript null or undefined drawn as text.
func checkNoStray(t *testing.T, ctx context.Context) {
	t.Helper()
	text := value(t, ctx, 10*time.Second, "reading the page", chromedp.Evaluate[string](`document.getElementById('top').textContent + document.querySelector('main').textContent`))
	for _, bad := range []string{"null", "undefined", "NaN", "[object"} {
		if strings.Contains(text, bad) {
			t.Errorf("the page shows %q", bad)
		}
	}
}

// TestBrowserLiveTree is acceptance 2 and 3 on the served page: the tree
// of a running session with a max-tokens child, a crashed ACP child and a
// background job; a node added to the log while the page is open appears
// without a reload; a hostile child answer shows as text and runs nothing.
func TestBrowserLiveTree(t *testing.T) {
	f := newFixture(t)
	l := f.tree(true)
	defer closeLog(t, l)
	// The server before the browser: cleanups run last first, so the
	// browser and its live stream are gone when the server closes.
	ts := serve(t, f.root, Options{Poll: 100 * time.Millisecond})
	ctx := newBrowser(t)

	within(t, ctx, 30*time.Second, "opening the page",
		chromedp.Navigate(ts.URL+"/?token="+testToken+"#s=root"),
		chromedp.WaitVisible(css(`tr[data-key="root/run-b"]`)))
	checkAcceptanceTree(t, rows(t, ctx))
	// Read in one evaluation: the header is redrawn on every poll, so a
	// node found by one DevTools call can be gone by the next ("No node
	// with given id found", CI at load 14).
	live := value(t, ctx, 10*time.Second, "reading the state", chromedp.Evaluate[string](`(document.querySelector('#top .live') || {}).textContent || ''`))
	if live != "live" {
		t.Errorf("running session not marked live: %q", live)
	}

	// The running session gains a node while the page is open.
	within(t, ctx, 5*time.Second, "marking the document", chromedp.Evaluate[chromedp.Void](`window.__sameDocument = 1`))
	add(t, l, session.TypeSubagentStart, session.SubagentStart{RunID: "run-live", ChildSession: "", Agent: "latecomer", Provider: "pi", Label: "joined live"})
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	within(t, ctx, 30*time.Second, "waiting for the new node", chromedp.WaitVisible(css(`tr[data-key="root/run-live"]`)))
	reloaded := value(t, ctx, 5*time.Second, "checking for a reload", chromedp.Evaluate[bool](`window.__sameDocument !== 1`))
	if reloaded {
		t.Error("the page reloaded instead of updating")
	}
	if r := rows(t, ctx)["root/run-live"]; r.Outcome != "running" {
		t.Errorf("the new node: %+v, want running", r)
	}
	// The selected session's conversation follows too.
	waitTrue(t, ctx, "the new child in the root's conversation",
		`Array.from(document.querySelectorAll('.detail .conv .k-subagent-start pre')).some(p => p.textContent === 'joined live')`)
	add(t, l, session.TypeSubagentEnd, session.SubagentEnd{RunID: "run-live", StopReason: string(session.ReasonRefusal)})
	l.Flush()
	within(t, ctx, 30*time.Second, "waiting for the new node's end",
		chromedp.WaitVisible(css(`tr[data-key="root/run-live"][data-stop="refusal"]`)))
	screenshot(t, ctx, "live-tree.png")

	// Hostile text: in the child's node, its conversation and the parent's.
	within(t, ctx, 30*time.Second, "selecting the hostile child",
		chromedp.Evaluate[chromedp.Void](`location.hash = 's=root&n=child-c'`),
		chromedp.WaitVisible(css(`.detail .conv .k-assistant`)))
	checkHostile(t, ctx, "child node")
	checkNoStray(t, ctx)
	screenshot(t, ctx, "hostile-child.png")
	within(t, ctx, 30*time.Second, "selecting the root",
		chromedp.Evaluate[chromedp.Void](`location.hash = 's=root&n=root'`),
		chromedp.WaitVisible(css(`.detail .conv .k-subagent-end`)))
	checkHostile(t, ctx, "parent's conversation")
	// The hook's run is an entry of its own, its hostile command and
	// text shown as text.
	waitTrue(t, ctx, "the hook's run in the root's conversation",
		`Array.from(document.querySelectorAll('.detail .conv .k-hook pre')).some(p => p.textContent.startsWith('$ ./guard.sh look: <script>window.__pwned=1</script>'))`)
}

// TestBrowserListAndToken: the list links to a session; a page opened
// without the token shows nothing.
func TestBrowserListAndToken(t *testing.T) {
	f := newFixture(t)
	f.tree(false)
	f.wide(2) // its prompt is hostile
	ts := serve(t, f.root, Options{})
	ctx := newBrowser(t)
	within(t, ctx, 30*time.Second, "the list",
		chromedp.Navigate(ts.URL+"/?token="+testToken),
		chromedp.WaitVisible(css(`table.list a`)))
	checkHostileList(t, ctx)
	within(t, ctx, 30*time.Second, "list to session",
		chromedp.Click(css(`table.list a[href="#s=root"]`)),
		chromedp.WaitVisible(css(`tr[data-key="child-c"]`)))
	checkAcceptanceTree(t, rows(t, ctx))
	checkHostile(t, ctx, "session page")
	within(t, ctx, 30*time.Second, "no token", chromedp.Navigate(ts.URL+"/"))
	body := value(t, ctx, 30*time.Second, "no token", chromedp.Text(css(`body`)))
	if strings.Contains(body, "review") || !strings.Contains(body, "token") {
		t.Errorf("without the token: %q", body)
	}
}

// TestBrowserExport is acceptance 3 and 4 on exported files: the export
// of the fixture tree shows the tree and the hostile text as text, with
// no server; the export of a 200-child session opens in chromium, and the
// time until it is drawn is printed.
func TestBrowserExport(t *testing.T) {
	ctx := newBrowser(t)
	f := newFixture(t)
	f.tree(false)
	f.wide(200)
	dir := t.ArtifactDir()
	write := func(id string) string {
		p := filepath.Join(dir, id+".html")
		fh, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		if err := Export(fh, f.root, id, time.Now()); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tree := write("root")
	within(t, ctx, 30*time.Second, "opening the export",
		chromedp.Navigate("file://"+tree),
		chromedp.WaitVisible(css(`tr[data-key="root/run-b"]`)))
	checkAcceptanceTree(t, rows(t, ctx))
	within(t, ctx, 30*time.Second, "selecting the hostile child",
		chromedp.Evaluate[chromedp.Void](`location.hash = 's=root&n=child-c'`),
		chromedp.WaitVisible(css(`.detail .conv .k-assistant`)))
	checkHostile(t, ctx, "export")
	checkNoStray(t, ctx)

	wide := write("wide")
	fi, _ := os.Stat(wide)
	within(t, ctx, 10*time.Second, "blank page", chromedp.Navigate("about:blank"))
	start := time.Now()
	within(t, ctx, 60*time.Second, "opening the 200-child export",
		chromedp.Navigate("file://"+wide),
		chromedp.WaitVisible(css(`body[data-ready="1"]`)))
	took := time.Since(start)
	n := value(t, ctx, 10*time.Second, "counting nodes", chromedp.Evaluate[int](`document.querySelectorAll('tr.node').length`))
	msg := fmt.Sprintf("export of a 200-child session: %d bytes, %d tree rows, opened and drawn in chromium in %s", fi.Size(), n, took.Round(time.Millisecond))
	fmt.Println(msg)
	t.Log(msg)
	if n != 201 {
		t.Errorf("%d tree rows, want 201", n)
	}
	// The target is 2 s; only a gross regression fails here, because the
	// machine running the tests is shared.
	if took > 20*time.Second {
		t.Errorf("the export took %s to open", took)
	}
	screenshot(t, ctx, "export-200.png")
}
