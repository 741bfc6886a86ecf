package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinsdev/reins/internal/tool"
)

// verdict is one hook's answer, read from its exit code and output as
// Claude Code reads it.
type verdict struct {
	block   bool   // exit 2, deny, decision block, continue: false
	reason  string // the block's reason (to the model, or the user for a prompt)
	perm    string // allow, deny, ask: the permission decision
	input   json.RawMessage
	context string // additionalContext
	toUser  string // stdout shown to the user, systemMessage, non-blocking stderr
	plain   string // exit 0's plain stdout (context for a prompt or a session start)
	halt    bool   // continue: false
	stopMsg string
}

// read turns o into a verdict; what its plain stdout means is the
// event's to say.
func read(o Outcome) verdict {
	var v verdict
	switch {
	case o.Problem != "" && o.Exit != 0:
		// A hook that hung, crashed or could not start decides nothing:
		// the turn goes on and the user is told (Claude Code's
		// non-blocking error).
		v.toUser = "hook " + o.Problem
		if s := text(o.Stderr); s != "" {
			v.toUser += ": " + s
		}
		return v
	case o.Exit == 2:
		v.block = true
		v.reason = text(o.Stderr)
		if v.reason == "" {
			v.reason = "(the hook gave no reason)"
		}
		return v
	case o.Exit != 0:
		v.toUser = fmt.Sprintf("hook exited %d", o.Exit)
		if s := text(o.Stderr); s != "" {
			v.toUser += ": " + s
		}
		return v
	}
	if o.Problem != "" { // invalid JSON: plain text, and the user is told
		v.toUser = "hook " + o.Problem
	}
	out := o.Output
	if out == nil {
		v.plain = text(o.Stdout)
		return v
	}
	hs := out.HookSpecific
	if out.Continue != nil && !*out.Continue {
		v.halt, v.block = true, true
		v.stopMsg = text(out.StopReason)
		v.reason = "a hook stopped the session's work (continue: false)"
	}
	switch out.Decision {
	case "block":
		v.block = true
		v.reason = text(out.Reason)
	case "approve": // Claude Code's older spelling of allow
		v.perm = "allow"
	}
	switch hs.PermissionDecision {
	case "allow", "deny", "ask":
		v.perm = hs.PermissionDecision
		if hs.PermissionDecisionReason != "" {
			v.reason = text(hs.PermissionDecisionReason)
		}
	}
	if len(hs.UpdatedInput) > 0 && string(hs.UpdatedInput) != "null" {
		v.input = hs.UpdatedInput
	}
	v.context = text(hs.AdditionalContext)
	if m := text(out.SystemMessage); m != "" {
		v.toUser = strings.TrimSpace(v.toUser + "\n" + m)
	}
	return v
}

// PreToolUse runs the PreToolUse hooks matching the call (under Claude
// Code's tool name; apply_patch's each file it writes) and combines their
// answers as Claude Code does: deny over ask over allow.
func (r *Runner) PreToolUse(ctx context.Context, name string, args json.RawMessage) tool.PreVerdict {
	var pv tool.PreVerdict
	if !r.Set.Has(PreToolUse) {
		return pv
	}
	callID := tool.CallID(ctx)
	calls := ToClaude(r.Cwd, name, args)
	var reasons, contexts []string
	deny, ask, allow := false, false, false
	var rewrite json.RawMessage
	for _, c := range calls {
		hooks := r.Set.For(PreToolUse, c.Tool)
		if len(hooks) == 0 {
			continue
		}
		outs := r.run(ctx, PreToolUse, hooks, map[string]any{"tool_name": c.Tool, "tool_input": c.Input, "tool_use_id": callID})
		for _, o := range outs {
			v := read(o)
			decision, toModel := v.perm, ""
			if v.block && v.perm == "" {
				decision = "deny"
			}
			switch decision {
			case "deny":
				deny = true
				toModel = v.reason
				reasons = append(reasons, v.reason)
			case "ask":
				ask = true
			case "allow":
				allow = true
			}
			if v.halt {
				r.halt(v.stopMsg)
			}
			if v.context != "" {
				contexts = append(contexts, v.context)
				toModel = strings.TrimSpace(toModel + "\n" + v.context)
			}
			if v.input != nil && rewrite == nil {
				rewrite = v.input
				if len(calls) > 1 {
					rewrite = json.RawMessage("[]") // marks an untranslatable rewrite
				}
			}
			toUser := v.toUser
			if v.plain != "" && (o.Output == nil || !o.Output.SuppressOutput) {
				toUser = strings.TrimSpace(toUser + "\n" + v.plain)
			}
			r.record(PreToolUse, c.Tool, callID, o, decision, toModel, toUser, v.input)
		}
	}
	if len(contexts) > 0 {
		pv.Context = "[PreToolUse hook context]\n" + strings.Join(contexts, "\n")
	}
	switch {
	case deny:
		pv.Block = true
		pv.Reason = fmt.Sprintf("the %s call was blocked by a PreToolUse hook: %s", name, strings.Join(reasons, "\n"))
		return pv
	case ask:
		pv.Ask = true
	case allow:
		pv.Allow = true
	}
	if rewrite != nil {
		back, err := FromClaude(r.Cwd, name, rewrite)
		if len(calls) > 1 || err != nil {
			pv.Block = true
			pv.Reason = fmt.Sprintf("the %s call was blocked by a PreToolUse hook: the hook rewrote its input (updatedInput) and reins cannot apply the rewrite to %s; make the change with write or edit instead", name, name)
			return pv
		}
		pv.Args = back
	}
	return pv
}

// PostToolUse runs the PostToolUse hooks matching a call that ran and
// succeeded (as Claude Code: a failed call has none), and adds what they
// give the model to its result: exit 2's stderr, a block's reason,
// additionalContext.
func (r *Runner) PostToolUse(ctx context.Context, name string, args json.RawMessage, res tool.Result) tool.Result {
	if res.IsError || !r.Set.Has(PostToolUse) {
		return res
	}
	callID := tool.CallID(ctx)
	var feedback []string
	for _, c := range ToClaude(r.Cwd, name, args) {
		hooks := r.Set.For(PostToolUse, c.Tool)
		if len(hooks) == 0 {
			continue
		}
		outs := r.run(ctx, PostToolUse, hooks, map[string]any{
			"tool_name": c.Tool, "tool_input": c.Input, "tool_use_id": callID,
			"tool_response": toolResponse(c, res),
		})
		for _, o := range outs {
			v := read(o)
			decision, toModel := "", ""
			if v.block {
				decision, toModel = "block", v.reason
			}
			if v.halt {
				r.halt(v.stopMsg)
			}
			if v.context != "" {
				toModel = strings.TrimSpace(toModel + "\n" + v.context)
			}
			if toModel != "" {
				feedback = append(feedback, toModel)
			}
			toUser := v.toUser
			if v.plain != "" && (o.Output == nil || !o.Output.SuppressOutput) {
				toUser = strings.TrimSpace(toUser + "\n" + v.plain)
			}
			r.record(PostToolUse, c.Tool, callID, o, decision, toModel, toUser, nil)
		}
	}
	if len(feedback) > 0 {
		res.Content = strings.TrimRight(res.Content, "\n") + "\n[PostToolUse hook feedback]\n" + strings.Join(feedback, "\n")
	}
	return res
}

// toolResponse is the tool_response a PostToolUse hook reads: the
// result's text, and the fields of Claude Code's own responses hooks
// commonly read (filePath and success for the file tools, stdout for
// Bash).
func toolResponse(c Call, res tool.Result) map[string]any {
	out := map[string]any{"content": res.Content, "success": !res.IsError}
	var in map[string]any
	_ = json.Unmarshal(c.Input, &in)
	switch c.Tool {
	case "Write", "Edit", "MultiEdit", "Read":
		if p, ok := in["file_path"].(string); ok {
			out["filePath"] = p
		}
	case "Bash":
		out["stdout"], out["stderr"], out["interrupted"] = res.Content, "", false
	}
	return out
}
