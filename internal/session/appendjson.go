package session

import (
	"encoding/json"

	"github.com/reinsdev/reins/internal/jsonw"
)

// The header and the events every turn appends write their own JSON, the
// bytes json.Marshal writes for them, without building encoding/json's
// reflective encoders first: in a short run that is most of what the log
// costs (package jsonw says why). TestAppendJSON holds each to
// json.Marshal with every field set. Other events go through
// json.Marshal.

// appender is an event's data that writes its own JSON.
type appender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

// marshalData is json.Marshal(data), by hand for an appender.
func marshalData(data any) ([]byte, error) {
	if a, ok := data.(appender); ok {
		return a.AppendJSON(make([]byte, 0, 128))
	}
	return json.Marshal(data)
}

// AppendJSON appends h's JSON.
func (h Header) AppendJSON(dst []byte) ([]byte, error) {
	o := jsonw.Object{B: dst}
	o.String("type", h.Type)
	o.Int("version", int64(h.Version))
	o.String("id", h.ID)
	o.Key("createdAt")
	var err error
	if o.B, err = jsonw.Time(o.B, h.CreatedAt); err != nil {
		return dst, err
	}
	o.String("cwd", h.Cwd)
	o.OmitString("parentSession", h.ParentSession)
	o.OmitString("origin", h.Origin)
	o.Int("delegationDepth", int64(h.DelegationDepth))
	o.OmitString("model", h.Model)
	o.OmitString("provider", h.Provider)
	o.OmitString("agent", h.Agent)
	o.OmitString("reinsVersion", h.ReinsVersion)
	o.OmitString("forkOf", h.ForkOf)
	return o.End(), nil
}

// AppendJSON appends d's JSON.
func (d TurnStart) AppendJSON(dst []byte) ([]byte, error) {
	o := jsonw.Object{B: dst}
	o.Int("turn", int64(d.Turn))
	o.OmitString("traceId", d.TraceID)
	return o.End(), nil
}

// AppendJSON appends d's JSON.
func (d TurnEnd) AppendJSON(dst []byte) ([]byte, error) {
	o := jsonw.Object{B: dst}
	o.Int("turn", int64(d.Turn))
	o.String("reason", string(d.Reason))
	o.OmitString("by", d.By)
	if d.Failure != nil {
		o.Key("failure")
		o.B = d.Failure.appendJSON(o.B)
	}
	if d.Usage != nil {
		o.Key("usage")
		var err error
		if o.B, err = d.Usage.AppendJSON(o.B); err != nil {
			return dst, err
		}
	}
	return o.End(), nil
}

func (f Failure) appendJSON(dst []byte) []byte {
	o := jsonw.Object{B: dst}
	o.String("code", string(f.Code))
	o.String("message", f.Message)
	return o.End()
}

// AppendJSON appends d's JSON.
func (d StepStart) AppendJSON(dst []byte) ([]byte, error) {
	o := jsonw.Object{B: dst}
	o.Int("turn", int64(d.Turn))
	o.Int("step", int64(d.Step))
	return o.End(), nil
}

// AppendJSON appends d's JSON.
func (d StepEnd) AppendJSON(dst []byte) ([]byte, error) { return StepStart(d).AppendJSON(dst) }

// AppendJSON appends d's JSON.
func (d UserMessage) AppendJSON(dst []byte) ([]byte, error) {
	o := jsonw.Object{B: dst}
	o.Key("message")
	o.B = d.Message.AppendJSON(o.B)
	o.OmitString("notice", d.Notice)
	return o.End(), nil
}

// AppendJSON appends d's JSON.
func (d AssistantChunk) AppendJSON(dst []byte) ([]byte, error) {
	o := jsonw.Object{B: dst}
	o.Int("turn", int64(d.Turn))
	o.Int("step", int64(d.Step))
	o.Key("chunk")
	var err error
	if o.B, err = d.Chunk.AppendJSON(o.B); err != nil {
		return dst, err
	}
	return o.End(), nil
}

// AppendJSON appends d's JSON.
func (d ToolCall) AppendJSON(dst []byte) ([]byte, error) {
	o := jsonw.Object{B: dst}
	o.Int("turn", int64(d.Turn))
	o.Int("step", int64(d.Step))
	o.String("callId", d.CallID)
	o.String("name", d.Name)
	o.String("arguments", d.Arguments)
	return o.End(), nil
}

// AppendJSON appends d's JSON.
func (d ToolResult) AppendJSON(dst []byte) ([]byte, error) {
	o := jsonw.Object{B: dst}
	o.Int("turn", int64(d.Turn))
	o.Int("step", int64(d.Step))
	o.String("callId", d.CallID)
	o.String("content", d.Content)
	o.Bool("isError", d.IsError)
	if d.Image != nil {
		o.Key("image")
		o.B = d.Image.AppendJSON(o.B)
	}
	return o.End(), nil
}

// AppendJSON appends d's JSON.
func (d AssistantMessage) AppendJSON(dst []byte) ([]byte, error) {
	o := jsonw.Object{B: dst}
	o.Int("turn", int64(d.Turn))
	o.Int("step", int64(d.Step))
	o.Key("message")
	o.B = d.Message.AppendJSON(o.B)
	if d.Usage != nil {
		o.Key("usage")
		var err error
		if o.B, err = d.Usage.AppendJSON(o.B); err != nil {
			return dst, err
		}
	}
	o.OmitBool("interrupted", d.Interrupted)
	return o.End(), nil
}
