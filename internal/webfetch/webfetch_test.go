package webfetch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/tool"
)

const page = `<!doctype html><html><head><title>The Page</title><style>body{color:red}</style>
<script>var secret = "SCRIPT-TEXT";</script></head>
<body><nav>Home</nav><h1>Heading  One</h1><p>First   para with a <a href="https://example.com/x">link</a>.</p>
<ul><li>alpha</li><li>beta</li></ul><pre>  keep
    spacing</pre><p>tail &amp; end</p></body></html>`

// server serves the page, a big body, a redirect chain and a binary.
func server(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		chunk := strings.Repeat("x", 64<<10)
		for range 40 { // 2.5 MiB
			if _, err := fmt.Fprint(w, chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:1/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("/bin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write([]byte{0, 1, 2})
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		w.Write([]byte("<p>caf\xe9</p>"))
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers; ends when the client gives up
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// fetch runs webfetch through a registry under workspace-write and the
// given network policy.
func fetch(t *testing.T, p sandbox.Policy, args string) tool.Result {
	t.Helper()
	env := &tool.Env{Workspace: t.TempDir(), Permission: tool.WorkspaceWrite, Sandbox: p}
	return tool.NewRegistry(New()).Run(context.Background(), env, Name, json.RawMessage(args))
}

func urlArgs(u string) string {
	b, _ := json.Marshal(map[string]string{"url": u})
	return string(b)
}

var networkOn = sandbox.Policy{}

func TestWebfetchHTMLToText(t *testing.T) {
	srv := server(t)
	res := fetch(t, networkOn, urlArgs(srv.URL+"/page"))
	if res.IsError {
		t.Fatal(res.Content)
	}
	for _, want := range []string{"(200 OK, text/html)", "# Heading One", "First para with a link (https://example.com/x).", "- alpha\n- beta", "  keep\n    spacing", "tail & end", "The Page"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("no %q in:\n%s", want, res.Content)
		}
	}
	for _, not := range []string{"SCRIPT-TEXT", "color:red", "<p>"} {
		if strings.Contains(res.Content, not) {
			t.Errorf("%q shown:\n%s", not, res.Content)
		}
	}
}

func TestWebfetchCapsTheBody(t *testing.T) {
	srv := server(t)
	env := &tool.Env{Workspace: t.TempDir(), Permission: tool.WorkspaceWrite, OutputCap: 4 << 20}
	res := tool.NewRegistry(New()).Run(context.Background(), env, Name, json.RawMessage(urlArgs(srv.URL+"/big")))
	if res.IsError {
		t.Fatal(res.Content[:200])
	}
	_, body, _ := strings.Cut(res.Content, "\n\n") // after the status line
	if n := strings.Count(body, "x"); n != MaxBody {
		t.Errorf("%d bytes of body, want %d", n, MaxBody)
	}
	if !strings.HasSuffix(res.Content, fmt.Sprintf("[body truncated: read the first %d bytes]", MaxBody)) {
		t.Errorf("no truncation mark: %q", res.Content[len(res.Content)-100:])
	}
	// Under the default result cap the registry cuts it further, and says so.
	res = fetch(t, networkOn, urlArgs(srv.URL+"/big"))
	if len(res.Content) > tool.DefaultOutputCap+100 || !strings.Contains(res.Content, "[output truncated") {
		t.Errorf("result of %d bytes not capped", len(res.Content))
	}
}

func TestWebfetchRefusals(t *testing.T) {
	srv := server(t)
	allow := func(d ...string) sandbox.Policy {
		return sandbox.Policy{DenyNetwork: true, AllowDomains: d}
	}
	for _, c := range []struct {
		name string
		p    sandbox.Policy
		args string
		want string
	}{
		{"file scheme", networkOn, urlArgs("file:///etc/passwd"), `scheme "file" is not fetched`},
		{"ftp scheme", networkOn, urlArgs("ftp://example.com/x"), `scheme "ftp" is not fetched`},
		{"credentials", networkOn, urlArgs("http://u:p@127.0.0.1/"), "user credentials"},
		{"network off", allow(), urlArgs(srv.URL + "/page"), "the network is off for this session (sandbox.network: off) and 127.0.0.1 is not in sandbox.allowDomains"},
		{"domain not allowed", allow("example.com", "*.example.org"), urlArgs(srv.URL + "/page"), "127.0.0.1 is not in sandbox.allowDomains"},
		{"redirect to a host not allowed", allow("127.0.0.1"), urlArgs(srv.URL + "/away"), "redirect to http://localhost:1/elsewhere: localhost is not in sandbox.allowDomains"},
		{"redirect loop", networkOn, urlArgs(srv.URL + "/loop"), fmt.Sprintf("more than %d redirects", MaxRedirects)},
		{"binary", networkOn, urlArgs(srv.URL + "/bin"), `content type "application/octet-stream" is not text`},
		{"no url", networkOn, `{}`, `missing required parameter "url"`},
		{"timeout", networkOn, `{"url":"http://127.0.0.1/","timeout":500}`, "timeout must be"},
	} {
		res := fetch(t, c.p, c.args)
		if !res.IsError || !strings.Contains(res.Content, c.want) {
			t.Errorf("%s: %+v, want an error with %q", c.name, res, c.want)
		}
	}
	// The allowed host is fetched with the network off.
	if res := fetch(t, allow("127.0.0.1"), urlArgs(srv.URL+"/page")); res.IsError {
		t.Errorf("allowed host refused: %s", res.Content)
	}
	// Full access is unconfined: the network policy does not bind it, as
	// it does not bind bash there.
	env := &tool.Env{Workspace: t.TempDir(), Permission: tool.FullAccess, Sandbox: allow()}
	if res := tool.NewRegistry(New()).Run(context.Background(), env, Name, json.RawMessage(urlArgs(srv.URL+"/page"))); res.IsError {
		t.Errorf("full-access fetch refused: %s", res.Content)
	}
}

// TestWebfetchAsks: like bash, a fetch asks the approval hook, and read-only
// mode refuses it.
func TestWebfetchAsks(t *testing.T) {
	srv := server(t)
	asked := 0
	env := &tool.Env{Workspace: t.TempDir(), Permission: tool.WorkspaceWrite, Ask: func(_ context.Context, name string, args json.RawMessage) tool.Answer {
		asked++
		return tool.Answer{}
	}}
	res := tool.NewRegistry(New()).Run(context.Background(), env, Name, json.RawMessage(urlArgs(srv.URL+"/page")))
	if asked != 1 || !res.IsError || !strings.Contains(res.Content, "not approved") {
		t.Errorf("asked %d times: %+v", asked, res)
	}
	env.Permission = tool.ReadOnly
	if res := tool.NewRegistry(New()).Run(context.Background(), env, Name, json.RawMessage(urlArgs(srv.URL+"/page"))); !res.IsError {
		t.Errorf("read-only fetch ran: %s", res.Content)
	}
}

func TestTextBounded(t *testing.T) {
	deep := strings.Repeat("<div><a href=x><script>", 10000) + "text"
	if got := Text(strings.NewReader(deep)); strings.Contains(got, "text") {
		t.Errorf("text inside an unclosed script shown: %.80q", got)
	}
	if got := Text(strings.NewReader("plain <b>bold</b>\n\n words")); got != "plain bold words" {
		t.Errorf("got %q", got)
	}
}

func TestWebfetchCharsetAndTimeout(t *testing.T) {
	srv := server(t)
	if res := fetch(t, networkOn, urlArgs(srv.URL+"/latin1")); res.IsError || !strings.Contains(res.Content, "café") {
		t.Errorf("latin-1 page: %+v", res)
	}
	// The server never answers: only the timeout can end the call.
	res := fetch(t, networkOn, `{"url":"`+srv.URL+`/hang","timeout":0.2}`)
	if !res.IsError || !strings.Contains(res.Content, "timed out after 200ms") {
		t.Errorf("hanging server: %+v", res)
	}
}
