package subagent

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/reinsdev/reins/internal/jsonw"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/tool"
)

// Tools returns the model-facing delegation tools backed by m: subagent,
// job_output, job_list and job_kill. They need no more than read-only
// access themselves (a child inherits the parent's mode), so calls in one
// assistant message run concurrently, up to the manager's maxParallel.
func (m *Manager) Tools() []tool.Tool {
	return []tool.Tool{
		subagentTool{m},
		outputTool{m},
		worktreeTool{m},
		jobTool{m, "job_output", "Read the output of a background subagent job (its status while it runs).", true, func(id string) tool.Result { return m.JobOutput(id) }},
		jobTool{m, "job_list", "List the background subagent jobs and their status.", false, nil},
		jobTool{m, "job_kill", "Stop a running background subagent job.", true, func(id string) tool.Result { return m.JobKill(id) }},
	}
}

type subagentTool struct{ m *Manager }

func (t subagentTool) Spec() llm.ToolSpec {
	var names, lines []string
	for _, a := range t.m.Agents.List() {
		names = append(names, a.Name)
		d := a.Description
		if d == "" {
			d = "(no description)"
		}
		lines = append(lines, a.Name+": "+d)
	}
	// The key says both lists unambiguously: each string after its length.
	var key []byte
	for _, list := range [][]string{names, lines} {
		for _, s := range list {
			key = append(strconv.AppendInt(key, int64(len(s)), 10), ':')
			key = append(key, s...)
		}
		key = append(key, ';')
	}
	return t.m.spec.get(string(key), func() llm.ToolSpec { return subagentSpec(names, lines) })
}

// specCache keeps the subagent tool's spec for the agent list it was made
// from: every request of a turn asks for it, and the schema's encoding
// (a map, sorted by encoding/json) cost 30–45 µs each time.
type specCache struct {
	mu   sync.Mutex
	key  string
	spec *llm.ToolSpec
}

func (c *specCache) get(key string, make func() llm.ToolSpec) llm.ToolSpec {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.spec == nil || c.key != key {
		s := make()
		c.key, c.spec = key, &s
	}
	s := *c.spec
	s.Parameters = slices.Clone(s.Parameters) // the caller's to change
	return s
}

// subagentSpec is the subagent tool's spec; its schema is written by hand,
// byte for byte what json.Marshal writes for subagentSchema's map
// (TestSubagentSchemaMatchesMarshal), without encoding/json's reflection
// over maps, which every session would pay once.
func subagentSpec(names, lines []string) llm.ToolSpec {
	b := make([]byte, 0, 2048)
	b = append(b, `{"additionalProperties":false,"properties":{"agent":{"description":`...)
	b = jsonw.String(b, agentDescription+strings.Join(lines, "\n"))
	b = append(b, `,"enum":`...)
	b = jsonw.Array(b, names, jsonw.String)
	b = append(b, `,"type":"string"},"continue":{"description":`...)
	b = jsonw.String(b, continueDescription)
	b = append(b, `,"type":"string"},"description":{"description":`...)
	b = jsonw.String(b, descriptionDescription)
	b = append(b, `,"type":"string"},"fork":{"description":`...)
	b = jsonw.String(b, forkDescription)
	b = append(b, `,"type":"boolean"},"isolation":{"description":`...)
	b = jsonw.String(b, isolationDescription)
	b = append(b, `,"enum":["worktree"],"type":"string"},"prompt":{"description":`...)
	b = jsonw.String(b, promptDescription)
	b = append(b, `,"type":"string"},"run_in_background":{"description":`...)
	b = jsonw.String(b, backgroundDescription)
	b = append(b, `,"type":"boolean"}},"required":["description","prompt"],"type":"object"}`...)
	raw := json.RawMessage(b)
	return llm.ToolSpec{
		Name: "subagent",
		Description: "Delegate a self-contained task to a subagent that works on its own and reports back. " +
			"Several subagent calls in one message run in parallel. The result is the subagent's final answer; " +
			"if it did not finish, the result says why and includes its partial output. Its last line names the child (child: <id>): " +
			"pass it as continue to send that child a follow-up. A long answer is cut; its marker says how to read the rest with subagent_output.",
		Parameters: raw,
	}
}

// The subagent schema's descriptions.
const (
	descriptionDescription = "A short (3-5 word) description of the task, for display."
	promptDescription      = "The complete task for the subagent. It sees nothing of this conversation, so include every detail it needs."
	agentDescription       = "The agent definition to run (default general). Available:\n"
	backgroundDescription  = "Return at once and run the subagent as a background job; you are told when it finishes. Default false."
	continueDescription    = "A child id (the last line of a subagent result, child: <id>) to send prompt to as a follow-up: that child keeps its whole earlier conversation. Only children this conversation started."
	forkDescription        = "Start the child with a copy of this conversation so far instead of a blank one (the prompt can then be short). Default false."
	isolationDescription   = "worktree: the child works in its own git worktree (branch reins/<child-id>) made from the current working tree, so parallel writers never collide; its result says what it changed and whether it merges. Apply or discard its work with the worktree tool."
)

func (subagentTool) Needs() tool.Permission { return tool.ReadOnly }

// Admit admits a background call under maxBackgroundJobs, in the model's
// call order (tool.Admitter); a foreground call needs no admission.
func (t subagentTool) Admit(ctx context.Context, args json.RawMessage) (context.Context, func()) {
	var p Params
	if json.Unmarshal(args, &p) != nil || !p.RunInBackground {
		return ctx, func() {}
	}
	if _, _, err := t.m.resolve(p); err != nil {
		return ctx, func() {} // Delegate answers with the error; no slot taken
	}
	return t.m.admitJob(ctx, p)
}

func (t subagentTool) Run(ctx context.Context, _ *tool.Env, args json.RawMessage) tool.Result {
	var p Params
	if err := json.Unmarshal(args, &p); err != nil {
		return tool.Errorf("Error: invalid subagent arguments: want {description, prompt, agent?, run_in_background?, continue?, fork?, isolation?}")
	}
	return t.m.Delegate(ctx, p)
}

type jobTool struct {
	m     *Manager
	name  string
	desc  string
	hasID bool
	run   func(id string) tool.Result
}

func (t jobTool) Spec() llm.ToolSpec {
	params := `{"type":"object","properties":{},"additionalProperties":false}`
	if t.hasID {
		params = `{"type":"object","properties":{"id":{"type":"string","description":"The job id, such as job-1."}},"required":["id"],"additionalProperties":false}`
	}
	return llm.ToolSpec{Name: t.name, Description: t.desc, Parameters: json.RawMessage(params)}
}

func (jobTool) Needs() tool.Permission { return tool.ReadOnly }

func (t jobTool) Run(_ context.Context, _ *tool.Env, args json.RawMessage) tool.Result {
	if !t.hasID {
		return t.m.JobList()
	}
	var p struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(args, &p); err != nil || p.ID == "" {
		return tool.Errorf("Error: %s needs {\"id\": \"job-N\"}", t.name)
	}
	return t.run(p.ID)
}
