package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/tool"
)

// Result is a call's structuredContent: the result contract
// (docs/subagents.md) of the child run, or — stopReason "running" — the
// job a long call became.
type Result struct {
	// StopReason is one of the five stop reasons, or "running" while a
	// job's run goes on.
	StopReason string `json:"stopReason"`
	// Output is the text of the selected output, capped at
	// subagents.maxResultBytes with the marker naming child_output.
	Output string `json:"output"`
	// Diagnostic is the fixed diagnostic line (docs/subagents.md), never
	// a child's or provider's text.
	Diagnostic string    `json:"diagnostic,omitempty"`
	Child      string    `json:"child,omitempty"`
	SessionID  string    `json:"sessionId,omitempty"`
	Usage      llm.Usage `json:"usage"`
	// Job is the job to poll (job_output) when the call outlasted the
	// wait or asked for background.
	Job string `json:"job,omitempty"`
}

// StopRunning is Result.StopReason of a job still running.
const StopRunning = "running"

const resultSchema = `{"type":"object","properties":{` +
	`"stopReason":{"type":"string","enum":["completed","max-tokens","aborted","refusal","error","running"],"description":"How the child's run ended; running: it goes on as job (poll job_output)."},` +
	`"output":{"type":"string","description":"The child's answer (its last non-empty assistant message), capped; a cut one ends with a marker naming the child_output call that reads on."},` +
	`"diagnostic":{"type":"string","description":"Why a run that did not complete ended: one fixed line (provider, stage, category, stop reason, exit code)."},` +
	`"child":{"type":"string","description":"The child's id: reply continues it, child_output reads its output."},` +
	`"sessionId":{"type":"string","description":"The child's session (reins log SESSION, reins view)."},` +
	`"usage":{"type":"object","properties":{"inputTokens":{"type":"integer"},"outputTokens":{"type":"integer"},"cacheReadTokens":{"type":"integer"},"cacheWriteTokens":{"type":"integer"},"reasoningTokens":{"type":"integer"},"costUsd":{"type":"number"}}},` +
	`"job":{"type":"string","description":"The job to poll with job_output when stopReason is running."}},` +
	`"required":["stopReason","output","usage"]}`

func (s *Server) addTools(srv *mcp.Server) {
	out := rawJSON(resultSchema)
	srv.AddTool(&mcp.Tool{
		Name:  "run",
		Title: "Run a task in a reins child agent",
		Description: "Give a task to a child agent and get its honest result. The child works in this server's workspace (or cwd within it) " +
			"under the server's permission mode. A run that outlasts 50 s (or background: true) returns a job: poll it with job_output.",
		InputSchema: rawJSON(`{"type":"object","properties":{` +
			`"prompt":{"type":"string","description":"The task."},` +
			`"agent":{"type":"string","description":"An agent definition of the workspace (reins agents); default general."},` +
			`"cwd":{"type":"string","description":"The child's workspace: a folder within the server's (relative to it, or absolute)."},` +
			`"model":{"type":"string","description":"The model, as reins run -m takes it; default the server's."},` +
			`"effort":{"type":"string","enum":["low","medium","high"],"description":"Reasoning effort."},` +
			`"permission":{"type":"string","enum":["read-only","workspace-write","full-access"],"description":"The child's mode, at most the server's --permission (default workspace-write)."},` +
			`"timeout":{"type":"number","minimum":0,"description":"Seconds before the child is stopped (aborted)."},` +
			`"background":{"type":"boolean","description":"Return a job at once instead of waiting."}},` +
			`"required":["prompt"],"additionalProperties":false}`),
		OutputSchema: out,
	}, s.resumable(s.runTool))
	srv.AddTool(&mcp.Tool{
		Name:        "reply",
		Title:       "Continue a reins child",
		Description: "Send a follow-up to a child (its id is the child field of an earlier result) with its whole conversation so far.",
		InputSchema: rawJSON(`{"type":"object","properties":{` +
			`"child":{"type":"string","description":"The child id."},` +
			`"prompt":{"type":"string","description":"The follow-up."}},` +
			`"required":["child","prompt"],"additionalProperties":false}`),
		OutputSchema: out,
	}, s.resumable(s.replyTool))
	srv.AddTool(&mcp.Tool{
		Name:        "child_output",
		Title:       "Read a child's result",
		Description: "Read a child's latest result from a byte offset (a cut result's marker names the call that reads on).",
		InputSchema: rawJSON(`{"type":"object","properties":{` +
			`"child":{"type":"string","description":"The child id."},` +
			`"offset":{"type":"integer","minimum":0,"description":"The byte offset to read from."}},` +
			`"required":["child","offset"],"additionalProperties":false}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, s.childOutputTool)
	srv.AddTool(&mcp.Tool{
		Name:        "job_output",
		Title:       "Wait for a job",
		Description: "The result of a job (a long or background run), waiting up to wait seconds (at most 50) for it to finish.",
		InputSchema: rawJSON(`{"type":"object","properties":{` +
			`"id":{"type":"string","description":"The job id."},` +
			`"wait":{"type":"number","minimum":0,"maximum":50,"description":"Seconds to wait for the job to finish (default 0)."}},` +
			`"required":["id"],"additionalProperties":false}`),
		OutputSchema: out,
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, s.resumable(s.jobOutputTool))
	srv.AddTool(&mcp.Tool{
		Name:        "job_kill",
		Title:       "Stop a job",
		Description: "Stop a job's child (its partial output stays readable by its child id).",
		InputSchema: rawJSON(`{"type":"object","properties":{` +
			`"id":{"type":"string","description":"The job id."}},` +
			`"required":["id"],"additionalProperties":false}`),
		OutputSchema: out,
	}, s.jobKillTool)
}

// usageError is a call refused before anything ran: isError, its text,
// and a contract result with stopReason error (a client validates
// structuredContent against the output schema).
func usageError(format string, args ...any) *mcp.CallToolResult {
	msg := "Error: " + fmt.Sprintf(format, args...)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}},
		StructuredContent: Result{StopReason: string(outcome.StopError)}}
}

func decode(req *mcp.CallToolRequest, v any) error {
	raw := req.Params.Arguments
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

type runArgs struct {
	Prompt     string   `json:"prompt"`
	Agent      string   `json:"agent"`
	Cwd        string   `json:"cwd"`
	Model      string   `json:"model"`
	Effort     string   `json:"effort"`
	Permission string   `json:"permission"`
	Timeout    *float64 `json:"timeout"`
	Background bool     `json:"background"`
}

func (s *Server) runTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a runArgs
	if err := decode(req, &a); err != nil {
		return usageError("run takes {prompt, agent?, cwd?, model?, effort?, permission?, timeout?, background?}: %v", err), nil
	}
	if strings.TrimSpace(a.Prompt) == "" {
		return usageError("run needs a prompt"), nil
	}
	perm := s.o.Permission
	if a.Permission != "" {
		p, err := tool.ParsePermission(a.Permission)
		if err != nil {
			return usageError("permission: %v", err), nil
		}
		if !s.o.Permission.Allows(p) {
			return usageError("permission %s is wider than this server's (%s): a caller may only narrow it", p, s.o.Permission), nil
		}
		perm = p
	}
	if a.Effort != "" {
		if _, err := llm.ParseEffort(a.Effort); err != nil {
			return usageError("effort: want low, medium or high"), nil
		}
	}
	var timeout time.Duration
	if a.Timeout != nil {
		if *a.Timeout < 0 {
			return usageError("timeout: want a positive number of seconds"), nil
		}
		timeout = time.Duration(*a.Timeout * float64(time.Second))
	}
	dir, err := s.workspace(ctx, req, a.Cwd)
	if err != nil {
		return usageError("%v", err), nil
	}
	model := a.Model
	if model == "" {
		model = s.o.Model
	}
	pl, err := s.place(placeKey{dir: dir, model: model, effort: a.Effort, perm: perm})
	if err != nil {
		return usageError("%v", err), nil
	}
	c, err := s.start(pl, subagent.Params{Prompt: a.Prompt, Agent: a.Agent}, timeout)
	if err != nil {
		return usageError("%v", err), nil
	}
	if a.Background {
		return s.jobStarted(ctx, c), nil
	}
	return s.await(ctx, req, c), nil
}

type replyArgs struct {
	Child  string `json:"child"`
	Prompt string `json:"prompt"`
}

func (s *Server) replyTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a replyArgs
	if err := decode(req, &a); err != nil || a.Child == "" {
		return usageError("reply takes {child, prompt}"), nil
	}
	if strings.TrimSpace(a.Prompt) == "" {
		return usageError("reply needs a prompt"), nil
	}
	pl := s.placeOf(a.Child)
	if pl == nil {
		return usageError("no child %q on this server (its id is the child field of a run's result)", clip(a.Child)), nil
	}
	c, err := s.start(pl, subagent.Params{Prompt: a.Prompt, Continue: a.Child}, 0)
	if err != nil {
		return usageError("%v", err), nil
	}
	return s.await(ctx, req, c), nil
}

type outputArgs struct {
	Child  string `json:"child"`
	Offset *int   `json:"offset"`
}

func (s *Server) childOutputTool(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a outputArgs
	if err := decode(req, &a); err != nil || a.Child == "" || a.Offset == nil {
		return textResult(`Error: child_output takes {"child": "child-…", "offset": N}`, true), nil
	}
	pl := s.placeOf(a.Child)
	if pl == nil {
		return textResult(fmt.Sprintf("Error: no child %q on this server", clip(a.Child)), true), nil
	}
	r := pl.sess.Subagents.SubagentOutput(a.Child, *a.Offset)
	return textResult(r.Content, r.IsError), nil
}

type jobArgs struct {
	ID   string   `json:"id"`
	Wait *float64 `json:"wait"`
}

func (s *Server) jobOutputTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a jobArgs
	if err := decode(req, &a); err != nil || a.ID == "" {
		return usageError(`job_output takes {"id": "job-N", "wait": seconds}`), nil
	}
	c := s.job(a.ID)
	if c == nil {
		return usageError("no job %q on this server", clip(a.ID)), nil
	}
	wait := time.Duration(0)
	if a.Wait != nil && *a.Wait > 0 {
		// At most MaxWait: a caller's request must never outlast its
		// client's timeout; a longer run is polled again.
		wait = min(time.Duration(*a.Wait*float64(time.Second)), s.maxWait)
	}
	return s.waitJob(ctx, req, c, wait), nil
}

// waitJob waits up to wait for a job's result (its running state when
// none came); questions its child asks meanwhile are put to the client.
func (s *Server) waitJob(ctx context.Context, req *mcp.CallToolRequest, c *call, wait time.Duration) *mcp.CallToolResult {
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		if res := s.putQuestions(ctx, req, c, false, wait); res != nil {
			return res
		}
		select {
		case <-c.done:
			return s.settled(c)
		case <-t.C:
		case <-ctx.Done():
		case <-c.asked:
			continue
		}
		select {
		case <-c.done:
			return s.settled(c)
		default:
			return s.running(c)
		}
	}
}

func (s *Server) jobKillTool(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a jobArgs
	if err := decode(req, &a); err != nil || a.ID == "" {
		return usageError(`job_kill takes {"id": "job-N"}`), nil
	}
	c := s.job(a.ID)
	if c == nil {
		return usageError("no job %q on this server", clip(a.ID)), nil
	}
	c.kill()
	return s.settled(c), nil
}

// await waits for a foreground call: its result, or — when it outlasts
// the wait — the job it becomes. The client's cancel (or its going away)
// tears the child down.
func (s *Server) await(ctx context.Context, req *mcp.CallToolRequest, c *call) *mcp.CallToolResult {
	reported := make(chan struct{})
	if tok := req.Params.GetProgressToken(); tok != nil {
		pctx, stop := context.WithCancel(ctx)
		defer stop()
		go func() {
			defer close(reported)
			s.progress(pctx, req, tok, c)
		}()
	} else {
		close(reported)
	}
	t := time.NewTimer(s.maxWait)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			<-reported // its last progress goes before the result
			return s.settled(c)
		case <-t.C:
			return s.jobStarted(ctx, c)
		case <-ctx.Done():
			// notifications/cancelled, or the client went away: the usual
			// ladder; the partial output stays readable by child id.
			s.o.Base.Logf("mcp serve: %s cancelled by the client", c.label)
			c.kill()
			s.o.Base.Logf("mcp serve: %s torn down", c.label)
			return s.settled(c)
		case <-c.asked:
			if res := s.putQuestions(ctx, req, c, true, s.maxWait); res != nil {
				return res
			}
		}
	}
}

// progressEvery bounds the rate of progress notifications.
const progressEvery = time.Second

// progress reports a foreground call to a client that asked (a
// progressToken): first the child's id, then its latest activity, at most
// once per progressEvery, until the call ends.
func (s *Server) progress(ctx context.Context, req *mcp.CallToolRequest, tok any, c *call) {
	select {
	case <-c.started:
	case <-ctx.Done():
		return
	}
	n := 0.0
	notify := func(msg string) {
		n++
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: n, Message: msg})
	}
	child, sess := c.ids()
	if child == "" {
		return // it ended before it started
	}
	notify(fmt.Sprintf("child %s started (session %s)", child, sess))
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	seen := 0
	report := func() {
		c.mu.Lock()
		act, seq := c.activity, c.actSeq
		c.mu.Unlock()
		if seq != seen && act != "" {
			seen = seq
			notify(fmt.Sprintf("child %s: %s", child, act))
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.done:
			report() // what it did last, before its result
			return
		case <-tick.C:
			report()
		}
	}
}

// jobStarted is the result of a call that goes on as a job.
func (s *Server) jobStarted(ctx context.Context, c *call) *mcp.CallToolResult {
	s.asJob(c)
	// The child id, when it is known soon: the caller can read or
	// continue it by id once the job is done.
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	select {
	case <-c.started:
	case <-t.C:
	case <-ctx.Done():
	}
	return s.running(c)
}

// running is the result of a job still running.
func (s *Server) running(c *call) *mcp.CallToolResult {
	child, sess := c.ids()
	c.mu.Lock()
	id := c.job
	c.mu.Unlock()
	text := fmt.Sprintf("Job %s is running. Wait for its result with job_output {\"id\": %q, \"wait\": 50}; stop it with job_kill.", id, id) + outcome.ChildLine(child)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: Result{StopReason: StopRunning, Child: child, SessionID: sess, Job: id}}
}

// settled is the result of a call that ended: the contract in
// structuredContent; in content the text a subagent tool result has
// (docs/subagents.md), capped, with the child line; isError unless it
// completed.
func (s *Server) settled(c *call) *mcp.CallToolResult {
	<-c.done
	c.mu.Lock()
	res, err, job := c.res, c.err, c.job
	c.mu.Unlock()
	child, sess := c.ids()
	if err != nil {
		// Refused before anything was published (an unknown agent, a
		// child that cannot be continued): the manager's own message.
		return usageError("%v", err)
	}
	res = outcome.Settle(res)
	mgr := c.place.sess.Subagents
	rendered, isErr := outcome.RenderText(res)
	text := llm.BlocksText(res.Output)
	if !isErr && strings.TrimSpace(rendered) == "" {
		// A completed answer with no text (reasoning only): say so,
		// never an empty success.
		note := "[the child's answer holds no text"
		if r := reasoning(res.Output); r != "" {
			note += "; only reasoning:]\n" + r
		} else {
			note += "]"
		}
		rendered, text = note, note
	}
	content := outcome.PageVia("child_output", child, rendered, 0, len(rendered), mgr.MaxResult())
	out := capOutput(child, text, rendered, mgr.MaxResult())
	sc := Result{StopReason: string(res.StopReason), Output: out, Diagnostic: res.Diagnostic, Child: child, SessionID: sess, Usage: res.Usage, Job: job}
	return &mcp.CallToolResult{IsError: res.StopReason != outcome.StopCompleted,
		Content: []mcp.Content{&mcp.TextContent{Text: content}}, StructuredContent: sc}
}

// capOutput is the selected output's text capped at max, a cut one
// ending with the marker whose offset reads on in the child's rendered
// result (what child_output pages through).
func capOutput(child, text, rendered string, max int) string {
	end := outcome.Cut(text, 0, max)
	if end == len(text) {
		return text
	}
	at := strings.Index(rendered, text)
	if at < 0 {
		at = 0
	}
	return text[:end] + outcome.Marker("child_output", child, at, at+end, len(rendered))
}

func reasoning(bs []llm.Block) string {
	var b strings.Builder
	for _, x := range bs {
		if x.Type == llm.BlockReasoning {
			b.WriteString(x.Text)
		}
	}
	return b.String()
}

func textResult(text string, isErr bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: isErr, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// clip bounds a caller-given id echoed in a message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// workspace is a call's cwd: the server's, or a folder within it (after
// symlinks); when the client declares roots, within one of them too —
// roots only narrow.
func (s *Server) workspace(ctx context.Context, req *mcp.CallToolRequest, cwd string) (string, error) {
	base := s.o.Base.Cwd
	dir := base
	if cwd != "" {
		dir = cwd
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(base, dir)
		}
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("cwd %q: no such folder", clip(cwd))
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("cwd %q is not a folder", clip(cwd))
	}
	realBase, err := filepath.EvalSymlinks(base)
	if err != nil {
		realBase = base
	}
	if !within(real, realBase) {
		return "", fmt.Errorf("cwd %q is outside this server's workspace %s", clip(cwd), base)
	}
	roots, err := clientRoots(ctx, req)
	if err != nil {
		return "", err
	}
	if roots != nil {
		ok := false
		for _, r := range roots {
			if within(real, r) {
				ok = true
				break
			}
		}
		if !ok {
			return "", fmt.Errorf("cwd %s is outside the client's roots", real)
		}
	}
	if real == realBase {
		return base, nil // the base harness's own folder
	}
	return real, nil
}

// clientRoots are the folders the client declared as its roots (nil: it
// declares none).
func clientRoots(ctx context.Context, req *mcp.CallToolRequest) ([]string, error) {
	ip := req.Session.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.RootsV2 == nil {
		return nil, nil
	}
	if ip.ProtocolVersion >= rootsGone {
		// Roots are deprecated from this version on, and a server may
		// not ask its client anything while serving a call (SEP-2322):
		// a client on it narrows by the cwd it passes.
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := req.Session.ListRoots(ctx, nil)
	if err != nil {
		return nil, errors.New("the client declares roots but did not list them")
	}
	out := []string{}
	for _, r := range res.Roots {
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme != "file" {
			continue
		}
		p := filepath.Clean(u.Path)
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		out = append(out, p)
	}
	return out, nil
}

// rootsGone is the first protocol version in which a server cannot list
// the client's roots while serving a call.
const rootsGone = "2026-07-28"

func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
