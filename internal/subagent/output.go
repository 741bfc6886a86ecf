package subagent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/tool"
)

// childDone records the rendered result of a child's run, which
// subagent_output pages through, and frees the child for a continuation.
// The manager holds at most maxHeldOutput of it per child and maxHeldTotal
// in all (oldest first out); the full output is in the child's log.
func (m *Manager) childDone(req Request, content string) {
	if req.ChildID == "" {
		return
	}
	k := &m.kids
	k.mu.Lock()
	defer k.mu.Unlock()
	c := k.entry(req)
	c.busy = false
	k.hold(c, content)
}

// hold keeps content as c's latest output (at most maxHeldOutput of it,
// maxHeldTotal over all children, the oldest dropped first). k.mu is held.
func (k *children) hold(c *childEntry, content string) {
	held := content[:outcome.Cut(content, 0, maxHeldOutput)]
	k.held += len(held) - len(c.output)
	k.seq++
	c.output, c.size, c.seq = held, len(content), k.seq
	for k.held > maxHeldTotal {
		var oldest *childEntry
		for _, o := range k.byID {
			if o != c && o.output != "" && (oldest == nil || o.seq < oldest.seq) {
				oldest = o
			}
		}
		if oldest == nil {
			break
		}
		k.held -= len(oldest.output)
		oldest.output = ""
	}
}

func (m *Manager) maxResult() int {
	if n := m.Limits.MaxResultBytes; n > 0 {
		return n
	}
	return config.DefaultMaxResultBytes
}

// present is a child's tool result as the parent's model sees it: the
// rendered output up to subagents.maxResultBytes, then — when cut — a
// marker with the full size and the subagent_output call that reads on,
// and last the line naming the child.
func (m *Manager) present(req Request, r tool.Result) tool.Result {
	m.childDone(req, r.Content)
	r.Content = m.page(req.ChildID, r.Content, 0, len(r.Content))
	r.Paged = true
	return r
}

// page renders the piece of content from off under this manager's cap
// (outcome.Page).
func (m *Manager) page(id, content string, off, size int) string {
	return outcome.PageVia(cmp.Or(m.OutputTool, "subagent_output"), id, content, off, size, m.maxResult())
}

// MaxResult is the cap of a child's result as its caller sees it
// (subagents.maxResultBytes).
func (m *Manager) MaxResult() int { return m.maxResult() }

// SubagentOutput is the subagent_output tool: the piece of a child's
// latest output from offset.
func (m *Manager) SubagentOutput(id string, offset int) tool.Result {
	m.init()
	k := &m.kids
	k.mu.Lock()
	c := k.byID[id]
	if c == nil {
		k.mu.Unlock()
		return tool.Errorf("Error: no child %q in this session", clipID(id))
	}
	if c.busy {
		k.mu.Unlock()
		return tool.Errorf("Error: child %s is still running; its output is read when it finished", id)
	}
	out, size := c.output, c.size
	k.mu.Unlock()
	switch {
	case offset < 0 || offset > size:
		return tool.Errorf("Error: offset %d is outside the output of child %s (%d bytes)", offset, id, size)
	case offset == size:
		return tool.Result{Content: fmt.Sprintf("(end of output: %d bytes)", size) + outcome.ChildLine(id)}
	case offset >= len(out):
		return tool.Errorf("Error: the output of child %s from byte %d is no longer held in memory; it is in the child's session log", id, offset)
	}
	return tool.Result{Content: m.page(id, out, offset, size), Paged: true}
}

type outputTool struct{ m *Manager }

func (outputTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{
		Name:        "subagent_output",
		Description: "Read more of a subagent's output when its result was cut: the piece that starts at offset (the result's marker says which).",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"child":{"type":"string","description":"The child id, from the child: line of its result."},` +
			`"offset":{"type":"integer","minimum":0,"description":"The byte offset to read from."}},` +
			`"required":["child","offset"],"additionalProperties":false}`),
	}
}

func (outputTool) Needs() tool.Permission { return tool.ReadOnly }

func (t outputTool) Run(_ context.Context, _ *tool.Env, args json.RawMessage) tool.Result {
	var p struct {
		Child  string `json:"child"`
		Offset *int   `json:"offset"`
	}
	if err := json.Unmarshal(args, &p); err != nil || p.Child == "" || p.Offset == nil {
		return tool.Errorf("Error: subagent_output needs {\"child\": \"child-…\", \"offset\": N}")
	}
	return t.m.SubagentOutput(p.Child, *p.Offset)
}
