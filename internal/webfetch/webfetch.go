// Package webfetch provides the `webfetch` tool: a URL's page as text for
// the model (docs/agents.md). It keeps to the session's network policy
// (docs/sandbox.md): with the network off, only hosts of
// `sandbox.allowDomains` are fetched, the rule the proxy of confined
// processes applies (netproxy.Allowed); every address of a redirect is
// checked again. Like bash it needs workspace-write, so the interactive
// terminal asks before each fetch, and what it reads is bounded in size
// and time.
package webfetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/netproxy"
	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/tool"
)

// Name is the tool's name as the model sees it.
const Name = "webfetch"

const (
	// MaxBody is how much of a response is read; the rest is dropped and
	// the result says so.
	MaxBody = 1 << 20
	// MaxRedirects bounds the redirects followed.
	MaxRedirects = 5
	// DefaultTimeout and MaxTimeout bound one fetch, redirects included.
	DefaultTimeout = 30 * time.Second
	MaxTimeout     = 120 * time.Second
	// maxURL bounds the address the model sends.
	maxURL = 4096
)

// Refusal is why a URL is not fetched; the model gets its text.
type Refusal struct{ Reason string }

func (r *Refusal) Error() string { return r.Reason }

// Check says whether the policy p lets reins fetch u: http or https only,
// and with the network off (sandbox.network: off, confined) only a host
// that sandbox.allowDomains names. A nil error allows it.
func Check(p sandbox.Policy, u *url.URL) error {
	switch u.Scheme {
	case "http", "https":
	default:
		return &Refusal{fmt.Sprintf("scheme %q is not fetched (http or https only)", u.Scheme)}
	}
	host := u.Hostname()
	if host == "" {
		return &Refusal{"the URL has no host"}
	}
	if u.User != nil {
		return &Refusal{"a URL with user credentials is not fetched"}
	}
	if !p.Confined() || !p.DenyNetwork {
		return nil
	}
	if len(p.AllowDomains) == 0 {
		return &Refusal{fmt.Sprintf("the network is off for this session (sandbox.network: off) and %s is not in sandbox.allowDomains", host)}
	}
	if !netproxy.Allowed(host, p.AllowDomains) {
		return &Refusal{fmt.Sprintf("%s is not in sandbox.allowDomains; the network is off for this session", host)}
	}
	return nil
}

// transport is webfetch's own: no connection is kept alive once a fetch
// ends, so nothing of a fetch outlives its call, and a server's headers
// are bounded. Made on the first fetch, not at start-up: most processes
// never fetch.
var transport = lazy.Value[*http.Transport]{New: func() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true
	tr.MaxResponseHeaderBytes = 256 << 10
	return tr
}}

// Tool is the webfetch tool. Transport, when set, replaces its own
// transport; redirects are always checked by the policy.
type Tool struct {
	Transport http.RoundTripper
}

// New returns the webfetch tool.
func New() *Tool { return &Tool{} }

// Spec is what the model is shown.
func (*Tool) Spec() llm.ToolSpec {
	return llm.ToolSpec{
		Name: Name,
		Description: "Fetch a web page (http or https) and return it as text: HTML is converted to readable text with links kept, other text types are returned as they are. " +
			"At most 1 MiB is read; timeout is in seconds (default 30, max 120). The session's network policy applies: with the network off only the hosts of sandbox.allowDomains are fetched.",
		Parameters: json.RawMessage(`{
  "type": "object",
  "properties": {
    "url": {"type": "string", "description": "The http or https URL to fetch."},
    "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": 120, "description": "Timeout in seconds (default 30, max 120)."}
  },
  "required": ["url"],
  "additionalProperties": false
}`),
	}
}

// Needs is workspace-write, as bash's: it reaches outside the machine,
// so the terminal asks before it does.
func (*Tool) Needs() tool.Permission { return tool.WorkspaceWrite }

type args struct {
	URL     *string  `json:"url"`
	Timeout *float64 `json:"timeout"`
}

// Run fetches one URL.
func (t *Tool) Run(ctx context.Context, env *tool.Env, raw json.RawMessage) tool.Result {
	var a args
	s := strings.TrimSpace(string(raw))
	if s == "" {
		s = "{}"
	}
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		return tool.Errorf("invalid arguments: %v", err)
	}
	if a.URL == nil || strings.TrimSpace(*a.URL) == "" {
		return tool.Errorf("missing required parameter %q", "url")
	}
	if len(*a.URL) > maxURL {
		return tool.Errorf("the URL is %d bytes; at most %d", len(*a.URL), maxURL)
	}
	timeout := DefaultTimeout
	if a.Timeout != nil {
		if *a.Timeout <= 0 || *a.Timeout > MaxTimeout.Seconds() {
			return tool.Errorf("timeout must be above 0 and at most %g seconds", MaxTimeout.Seconds())
		}
		timeout = time.Duration(*a.Timeout * float64(time.Second))
	}
	u, err := url.Parse(strings.TrimSpace(*a.URL))
	if err != nil {
		return tool.Errorf("invalid URL: %v", err)
	}
	policy := env.Policy()
	if err := Check(policy, u); err != nil {
		return tool.Errorf("webfetch refused %s: %v", u.Redacted(), err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rt := t.Transport
	if rt == nil {
		rt = transport.Get()
	}
	client := &http.Client{
		Transport: rt,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return &Refusal{fmt.Sprintf("more than %d redirects", MaxRedirects)}
			}
			if err := Check(policy, req.URL); err != nil {
				return &Refusal{fmt.Sprintf("redirect to %s: %v", req.URL.Redacted(), err)}
			}
			return nil
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return tool.Errorf("invalid URL: %v", err)
	}
	req.Header.Set("User-Agent", "reins-webfetch")
	req.Header.Set("Accept", "text/html, text/plain, text/markdown, application/json, */*;q=0.5")
	resp, err := client.Do(req)
	if err != nil {
		var ref *Refusal
		var uerr *url.Error
		switch {
		case errors.As(err, &ref):
			return tool.Errorf("webfetch refused %v", ref)
		case ctx.Err() == context.DeadlineExceeded:
			return tool.Errorf("webfetch %s: timed out after %s", u.Redacted(), timeout)
		case errors.As(err, &uerr):
			return tool.Errorf("webfetch %s: %v", u.Redacted(), uerr.Err)
		}
		return tool.Errorf("webfetch %s: %v", u.Redacted(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return tool.Errorf("webfetch %s: reading the body: %v", u.Redacted(), err)
	}
	cut := len(body) > MaxBody
	if cut {
		body = body[:MaxBody]
	}
	header := resp.Header.Get("Content-Type")
	ct, _, _ := mime.ParseMediaType(header)
	var text, note string
	switch {
	case ct == "text/html" || ct == "application/xhtml+xml" || (ct == "" && looksHTML(body)):
		cs, bom := sniff(body, header, true)
		text, note = toUTF8(body, cs, bom)
		text = strings.ToValidUTF8(htmlText(text), "\uFFFD")
	case strings.HasPrefix(ct, "text/") || ct == "application/json" || strings.HasSuffix(ct, "+json") || strings.HasSuffix(ct, "+xml") || ct == "application/xml" || ct == "":
		// Text other than HTML is decoded only in an encoding it
		// declares (a BOM, the header's charset); else it must be UTF-8.
		cs, bom := sniff(body, header, false)
		if cs == "" && !cut && !utf8.Valid(body) {
			return tool.Errorf("webfetch %s: the %s body is not UTF-8 text", u.Redacted(), ct)
		}
		if cs == "" {
			cs = csUTF_8
		}
		text, note = toUTF8(body, cs, bom)
	default:
		return tool.Errorf("webfetch %s: content type %q is not text (%s)", u.Redacted(), ct, resp.Status)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s  (%s", resp.Request.URL.Redacted(), resp.Status)
	if ct != "" {
		fmt.Fprintf(&b, ", %s", ct)
	}
	b.WriteString(")\n")
	if note != "" {
		b.WriteString(note + "\n")
	}
	b.WriteString("\n")
	b.WriteString(text)
	if cut {
		fmt.Fprintf(&b, "\n\n[body truncated: read the first %d bytes]", MaxBody)
	}
	return tool.Result{Content: b.String(), IsError: resp.StatusCode >= 400}
}

// looksHTML sniffs an untyped body.
func looksHTML(b []byte) bool {
	return strings.HasPrefix(http.DetectContentType(b), "text/html")
}
