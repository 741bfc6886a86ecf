package hooks

import (
	"context"
	"strings"
)

// The events besides the tool calls' (docs/hooks.md). Each runs the hooks
// whose matcher matches the event's match value (SessionStart's source,
// SessionEnd's reason, PreCompact's trigger, Notification's type; all for
// UserPromptSubmit and Stop) and records every run.

// eventRun runs event's matching hooks and reads their verdicts; record
// is called with each to say what reached the model and the user.
func (r *Runner) eventRun(ctx context.Context, event Event, match string, input map[string]any) ([]Outcome, []verdict) {
	hooks := r.Set.For(event, match)
	if len(hooks) == 0 {
		return nil, nil
	}
	outs := r.run(ctx, event, hooks, input)
	vs := make([]verdict, len(outs))
	for i, o := range outs {
		vs[i] = read(o)
		if vs[i].halt {
			r.halt(vs[i].stopMsg)
		}
	}
	return outs, vs
}

func plainToUser(o Outcome, v verdict) string {
	s := v.toUser
	if v.plain != "" && (o.Output == nil || !o.Output.SuppressOutput) {
		s = strings.TrimSpace(s + "\n" + v.plain)
	}
	return s
}

// UserPromptSubmit runs before a prompt reaches the model. block says a
// hook refused the prompt (exit 2, decision block, continue: false): it
// is not sent, and the reason goes to the user only. context is what the
// hooks add for the model: additionalContext and exit 0's plain stdout.
func (r *Runner) UserPromptSubmit(ctx context.Context, prompt string) (block bool, context string) {
	outs, vs := r.eventRun(ctx, UserPromptSubmit, "", map[string]any{"prompt": prompt})
	var ctxs []string
	for i, v := range vs {
		decision, toModel, toUser := "", "", v.toUser
		if v.block {
			block, decision = true, "block"
			toUser = strings.TrimSpace(toUser + "\n" + v.reason + "\n" + v.stopMsg)
		} else {
			for _, c := range []string{v.context, v.plain} {
				if c != "" {
					ctxs = append(ctxs, c)
					toModel = strings.TrimSpace(toModel + "\n" + c)
				}
			}
		}
		r.record(UserPromptSubmit, "", "", outs[i], decision, toModel, toUser, nil)
	}
	if block {
		return true, ""
	}
	return false, strings.Join(ctxs, "\n")
}

// Stop runs when the model would end its turn (SubagentStop in a child,
// matched against its agent type). A hook that blocks (exit 2 with
// stderr, decision block with a reason) continues the turn: reason is the
// model's next message. active says a Stop hook already continued this
// turn (stop_hook_active); last is the model's final text
// (last_assistant_message).
func (r *Runner) Stop(ctx context.Context, active bool, last string) (reason string) {
	ev, match := Stop, ""
	input := map[string]any{"stop_hook_active": active, "last_assistant_message": last}
	if r.Subagent {
		ev, match = SubagentStop, r.Agent.Type
		input["agent_transcript_path"] = r.Agent.Transcript
	}
	outs, vs := r.eventRun(ctx, ev, match, input)
	var reasons []string
	for i, v := range vs {
		decision, toModel := "", ""
		if v.block && !v.halt {
			decision, toModel = "block", v.reason
			reasons = append(reasons, v.reason)
		}
		r.record(ev, "", "", outs[i], decision, toModel, plainToUser(outs[i], v), nil)
	}
	if _, halted := r.Halted(); halted {
		return "" // continue: false wins: the turn ends
	}
	return strings.Join(reasons, "\n")
}

// SessionStart runs when a session starts (source startup) or resumes
// (resume); what the hooks add (additionalContext, plain stdout) is
// returned for the model.
func (r *Runner) SessionStart(ctx context.Context, source string) string {
	outs, vs := r.eventRun(ctx, SessionStart, source, map[string]any{"source": source})
	var ctxs []string
	for i, v := range vs {
		toModel := ""
		for _, c := range []string{v.context, v.plain} {
			if c != "" {
				ctxs = append(ctxs, c)
				toModel = strings.TrimSpace(toModel + "\n" + c)
			}
		}
		r.record(SessionStart, "", "", outs[i], "", toModel, v.toUser, nil)
	}
	return strings.Join(ctxs, "\n")
}

// SessionEnd runs when a session ends; nothing it says reaches the model.
func (r *Runner) SessionEnd(ctx context.Context, reason string) {
	outs, vs := r.eventRun(ctx, SessionEnd, reason, map[string]any{"reason": reason})
	for i, v := range vs {
		r.record(SessionEnd, "", "", outs[i], "", "", plainToUser(outs[i], v), nil)
	}
}

// PreCompact runs before the history is summarized (trigger manual for
// `reins compact` and /compact, auto otherwise).
func (r *Runner) PreCompact(ctx context.Context, trigger string) {
	outs, vs := r.eventRun(ctx, PreCompact, trigger, map[string]any{"trigger": trigger, "custom_instructions": ""})
	for i, v := range vs {
		r.record(PreCompact, "", "", outs[i], "", "", plainToUser(outs[i], v), nil)
	}
}

// Notification runs when reins waits for the user (a permission
// question: type permission_prompt).
func (r *Runner) Notification(ctx context.Context, message, typ string) {
	outs, vs := r.eventRun(ctx, Notification, typ, map[string]any{"message": message, "notification_type": typ})
	for i, v := range vs {
		r.record(Notification, "", "", outs[i], "", "", plainToUser(outs[i], v), nil)
	}
}
