package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/mcpspec"
	"github.com/reinsdev/reins/internal/tool"
)

// Tool is one server tool as a reins tool: mcp__<server>__<tool>, with the
// server's input schema. A tool the server annotates read-only needs only
// read-only mode (and so runs alongside the other read-only calls of a
// message); any other needs workspace-write, since reins cannot see what
// it changes.
type Tool struct {
	c        *conn
	name     string // the server's own name of the tool
	spec     llm.ToolSpec
	readOnly bool
}

var _ tool.Tool = (*Tool)(nil)

// newTool checks and adapts one listed tool.
func newTool(c *conn, t *toolInfo) (*Tool, error) {
	full, ok := mcpspec.ToolName(c.srv.Name, t.Name)
	if !ok {
		return nil, errors.New("its name is not one models accept (letters, digits, '_' and '-', 64 bytes with the prefix)")
	}
	// The schema re-encoded (compact, keys sorted), so what the model is
	// sent does not depend on the server's layout.
	schema, err := []byte(nil), error(nil)
	if n := len(t.InputSchema); n > maxSchema {
		schema = t.InputSchema
	} else if n > 0 {
		var raw any
		if err = json.Unmarshal(t.InputSchema, &raw); err == nil {
			schema, err = json.Marshal(raw)
		}
	}
	if err != nil || len(schema) > maxSchema {
		return nil, fmt.Errorf("its input schema is not usable (%d bytes, limit %d)", len(schema), maxSchema)
	}
	var obj map[string]any
	if json.Unmarshal(schema, &obj) != nil || obj == nil {
		schema = []byte(`{"type":"object"}`)
	}
	desc := t.Description
	if desc == "" && t.Annotations != nil {
		desc = t.Annotations.Title
	}
	if desc == "" {
		desc = t.Title
	}
	desc = tool.Cap(desc, maxDescription)
	return &Tool{
		c: c, name: t.Name, readOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint,
		spec: llm.ToolSpec{Name: full, Description: desc, Parameters: schema},
	}, nil
}

// Spec is the tool as the model sees it.
func (t *Tool) Spec() llm.ToolSpec { return t.spec }

// Needs is read-only for a tool annotated readOnlyHint, else workspace-write.
func (t *Tool) Needs() tool.Permission {
	if t.readOnly {
		return tool.ReadOnly
	}
	return tool.WorkspaceWrite
}

// Server is the name of the tool's server.
func (t *Tool) Server() string { return t.c.srv.Name }

// Run calls the tool. The result's content is the server's; every failure
// of the server or the transport is a fixed text.
func (t *Tool) Run(ctx context.Context, _ *tool.Env, args json.RawMessage) tool.Result {
	// No arguments (or JSON null) is an empty object: servers validate
	// arguments as a record and refuse null.
	arguments := map[string]any{}
	if s := bytes.TrimSpace(args); len(s) > 0 {
		if err := json.Unmarshal(s, &arguments); err != nil {
			return tool.Errorf("invalid arguments: want a JSON object (%v)", err)
		}
		if arguments == nil {
			arguments = map[string]any{}
		}
	}
	t.c.mu.Lock()
	cs, state := t.c.session, t.c.state
	t.c.mu.Unlock()
	if state != StateRunning || cs == nil || t.c.stopped() {
		return failed(&Error{Server: t.c.srv.Name, Failure: FailStopped})
	}
	to := t.c.m.opts.CallTimeout
	cctx, cancel := context.WithTimeoutCause(ctx, to, errCallTimeout)
	defer cancel()
	res, err := cs.callTool(cctx, t.name, arguments)
	if err != nil {
		t.c.m.logf("mcp server %s: call %s: %v", t.c.srv.Name, t.name, err)
		var we *rpcError
		switch {
		case ctx.Err() != nil:
			return failed(&Error{Server: t.c.srv.Name, Failure: FailCancelled})
		case errors.Is(context.Cause(cctx), errCallTimeout):
			return failed(&Error{Server: t.c.srv.Name, Failure: FailCallTimeout, Timeout: to})
		case errors.As(err, &we) && !t.c.stopped():
			return failed(&Error{Server: t.c.srv.Name, Failure: FailProtocol, Code: we.Code})
		}
		return failed(&Error{Server: t.c.srv.Name, Failure: FailStopped})
	}
	return tool.Result{Content: Render(res), IsError: res.IsError}
}

var errCallTimeout = errors.New("mcp: call timeout")

func failed(e *Error) tool.Result { return tool.Result{Content: e.Error(), IsError: true} }

// Render turns a call result into the text the model reads: text content
// as it is, images, audio and binary resources as markers naming their
// type and size, resource links by URI, and structured content as JSON
// when there is no text part: servers repeat their structured result as
// text (the spec asks them to) or summarise it there, and the model needs
// it once.
func Render(res *CallResult) string {
	var parts []string
	hasText := false
	for _, v := range res.Content {
		switch v.Type {
		case ContentText:
			parts = append(parts, v.Text)
			hasText = true
		case ContentImage:
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes]", mimeText(v.MIMEType), len(v.Data)))
		case ContentAudio:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes]", mimeText(v.MIMEType), len(v.Data)))
		case ContentResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link: %s]", v.URI))
		case ContentResource:
			r := v.Resource
			switch {
			case r == nil:
			case r.Blob != nil:
				parts = append(parts, fmt.Sprintf("[resource %s: %s, %d bytes]", r.URI, mimeText(r.MIMEType), len(r.Blob)))
			default:
				parts = append(parts, fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text))
			}
		default:
			parts = append(parts, "[content of an unsupported type]")
		}
	}
	if sc := bytes.TrimSpace(res.StructuredContent); len(sc) > 0 && !bytes.Equal(sc, []byte("null")) && !hasText {
		// Re-encoded (compact, keys sorted), as the value it is.
		var v any
		if json.Unmarshal(sc, &v) == nil {
			if js, err := json.Marshal(v); err == nil {
				parts = append(parts, string(js))
			}
		}
	}
	if len(parts) == 0 {
		if res.IsError {
			return "the tool failed and said nothing"
		}
		return "(no content)"
	}
	return strings.Join(parts, "\n")
}

// mimeText bounds a MIME type for a marker.
func mimeText(s string) string {
	if s == "" {
		return "unknown type"
	}
	if len(s) > 64 || !utf8.ValidString(s) {
		return "unknown type"
	}
	return s
}

// unavailable stands in for a tool a session was given by name whose
// server failed: the model, told the tool exists, gets the server's fixed
// failure text when it calls it.
type unavailable struct {
	name string
	err  *Error
}

// Unavailable is a stand-in for the MCP tool name (mcp__<server>__<tool>)
// whose server failed with err: every call is err's fixed text.
func Unavailable(name string, err *Error) tool.Tool { return &unavailable{name: name, err: err} }

func (u *unavailable) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: u.name, Description: "Unavailable: " + u.err.Error(), Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (u *unavailable) Needs() tool.Permission { return tool.ReadOnly }

func (u *unavailable) Run(context.Context, *tool.Env, json.RawMessage) tool.Result {
	return failed(u.err)
}
