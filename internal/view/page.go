package view

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"
)

// The front end: plain JavaScript and CSS, no build step, no library, no
// network access of its own beyond the view's API. Both are inlined into
// the one HTML document, for the server and for an export alike.
var (
	//go:embed assets/app.js
	appJS string
	//go:embed assets/app.css
	appCSS string
)

// pageData is the JSON the page starts from. In an export it carries the
// whole tree and every session's detail; served, only the mode.
type pageData struct {
	Mode     string             `json:"mode"` // "live" or "export"
	Session  string             `json:"session,omitempty"`
	Exported *time.Time         `json:"exported,omitempty"`
	Tree     *Tree              `json:"tree,omitempty"`
	Details  map[string]*Detail `json:"details,omitempty"`
}

// servedCSP is the policy of the served page: its own inline script and
// style (by nonce), requests to its own origin only, nothing else.
func servedCSP(nonce string) string {
	return "default-src 'none'; script-src 'nonce-" + nonce + "'; style-src 'nonce-" + nonce + "'; " +
		"connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

// exportCSP is the policy of an exported file, in a meta tag: only the
// script and style it carries (by hash) and no network access at all.
func exportCSP() string {
	return "default-src 'none'; script-src '" + hash(appJS) + "'; style-src '" + hash(appCSS) + "'; " +
		"img-src 'none'; base-uri 'none'; form-action 'none'"
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// writePage writes the HTML document. nonce is empty for an export, whose
// policy is in a meta tag. The data is JSON, which encoding/json escapes
// for HTML (<, >, & as \u003c...), so no text in it can end its script
// element.
func writePage(w io.Writer, nonce string, data pageData) error {
	js, err := json.Marshal(data)
	if err != nil {
		return err
	}
	if strings.Contains(strings.ToLower(string(js)), "</script") {
		return errors.New("view: page data is not HTML-safe") // cannot happen with encoding/json
	}
	attr := ""
	if nonce != "" {
		attr = ` nonce="` + nonce + `"`
	}
	var b strings.Builder
	b.WriteString("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	if nonce == "" {
		b.WriteString(`<meta http-equiv="Content-Security-Policy" content="` + exportCSP() + `">` + "\n")
	}
	b.WriteString(`<meta name="referrer" content="no-referrer"><meta name="viewport" content="width=device-width, initial-scale=1">` + "\n")
	b.WriteString("<title>reins view</title>\n<style" + attr + ">" + appCSS + "</style></head>\n")
	b.WriteString(`<body><div id="top"></div><main id="main"><p class="muted">Loading…</p></main>` + "\n")
	b.WriteString(`<script type="application/json" id="reins-data">`)
	b.Write(js)
	b.WriteString("</script>\n<script" + attr + ">" + appJS + "</script>\n</body></html>\n")
	_, err = io.WriteString(w, b.String())
	return err
}

// Export writes the session id of the sessions directory root, its whole
// tree and the detail of every session in it, as one self-contained HTML
// file: no network access, no external script, font or style.
func Export(w io.Writer, root, id string, now time.Time) error {
	rd := NewReader(root)
	tree, err := rd.Tree(id)
	if err != nil {
		return err
	}
	details := map[string]*Detail{}
	var walk func(n *Node) error
	walk = func(n *Node) error {
		if n.Session != "" && details[n.Session] == nil {
			d, err := rd.Detail(n.Session)
			if err != nil && !errors.Is(err, ErrNoSession) {
				return err
			}
			if d != nil {
				details[n.Session] = d
			}
		}
		for _, c := range n.Children {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(tree.Root); err != nil {
		return err
	}
	ts := now.UTC()
	return writePage(w, "", pageData{Mode: "export", Session: id, Exported: &ts, Tree: tree, Details: details})
}
