package llm

import (
	"bytes"
	"encoding/json"

	"github.com/reinsdev/reins/internal/jsonw"
	"github.com/reinsdev/reins/internal/llm/wirejson"
)

// The session log writes messages and chunks on every turn; these write
// the JSON json.Marshal writes for them without building encoding/json's
// reflective encoders first (package jsonw says why). TestAppendJSON
// holds them to json.Marshal with every field set, so a field added to a
// type and not here fails it.

// AppendJSON appends b's JSON.
func (b Block) AppendJSON(dst []byte) []byte {
	o := jsonw.Object{B: dst}
	o.String("type", string(b.Type))
	o.OmitString("text", b.Text)
	o.OmitString("signature", b.Signature)
	o.OmitString("id", b.ID)
	o.OmitString("name", b.Name)
	o.OmitString("arguments", b.Arguments)
	o.OmitString("callId", b.CallID)
	o.OmitString("content", b.Content)
	o.OmitBool("isError", b.IsError)
	if b.Image != nil {
		o.Key("image")
		o.B = b.Image.AppendJSON(o.B)
	}
	return o.End()
}

// AppendJSON appends im's JSON.
func (im Image) AppendJSON(dst []byte) []byte {
	o := jsonw.Object{B: dst}
	o.String("mediaType", im.MediaType)
	o.Key("data")
	o.B = jsonw.Bytes(o.B, im.Data)
	return o.End()
}

// AppendJSON appends m's JSON.
func (m Message) AppendJSON(dst []byte) []byte {
	o := jsonw.Object{B: dst}
	o.String("role", string(m.Role))
	o.Key("content")
	o.B = jsonw.Array(o.B, m.Content, func(dst []byte, b Block) []byte { return b.AppendJSON(dst) })
	return o.End()
}

// AppendJSON appends u's JSON; a NaN or infinite cost is
// jsonw.ErrUnsupported, as json.Marshal refuses it.
func (u Usage) AppendJSON(dst []byte) ([]byte, error) {
	o := jsonw.Object{B: dst}
	o.Int("inputTokens", int64(u.InputTokens))
	o.Int("outputTokens", int64(u.OutputTokens))
	o.OmitInt("cacheReadTokens", int64(u.CacheReadTokens))
	o.OmitInt("cacheWriteTokens", int64(u.CacheWriteTokens))
	o.OmitInt("reasoningTokens", int64(u.ReasoningTokens))
	if u.CostUSD != nil {
		o.Key("costUsd")
		var err error
		if o.B, err = jsonw.Float(o.B, *u.CostUSD); err != nil {
			return dst, err
		}
	}
	return o.End(), nil
}

// AppendJSON appends f's JSON.
func (f Finish) AppendJSON(dst []byte) []byte {
	o := jsonw.Object{B: dst}
	o.String("kind", string(f.Kind))
	o.OmitString("code", string(f.Code))
	o.OmitString("message", f.Message)
	o.OmitInt("retryAfterMs", int64(f.RetryAfter))
	return o.End()
}

// AppendJSON appends c's JSON; see Usage.AppendJSON for its error.
func (c Chunk) AppendJSON(dst []byte) ([]byte, error) {
	o := jsonw.Object{B: dst}
	o.String("type", string(c.Type))
	o.Int("index", int64(c.Index))
	if c.Block != nil {
		o.Key("block")
		o.B = c.Block.AppendJSON(o.B)
	}
	o.OmitString("delta", c.Delta)
	o.OmitString("signature", c.Signature)
	if c.Usage != nil {
		o.Key("usage")
		var err error
		if o.B, err = c.Usage.AppendJSON(o.B); err != nil {
			return dst, err
		}
	}
	if c.Finish != nil {
		o.Key("finish")
		o.B = c.Finish.AppendJSON(o.B)
	}
	return o.End(), nil
}

// AppendSchema appends t's schema (ToolSpec.Schema) as encoding/json
// writes a json.RawMessage: compacted, and with escapeHTML its <, >, &,
// U+2028 and U+2029 escaped (json.Marshal), without (an Encoder with
// SetEscapeHTML(false)). A valid schema is compacted by jsonw, without
// encoding/json's slower scanner; anything wirejson cannot vouch for goes
// through encoding/json, which also decides what is invalid.
func (t ToolSpec) AppendSchema(dst []byte, escapeHTML bool) ([]byte, error) {
	s := t.Schema()
	var r wirejson.Reader
	r.Reset(s)
	r.Skip()
	r.End()
	if r.Status == wirejson.OK {
		return jsonw.Compact(dst, s, escapeHTML), nil
	}
	if escapeHTML {
		b, err := json.Marshal(s)
		return append(dst, b...), err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, s); err != nil {
		return dst, err
	}
	return append(dst, buf.Bytes()...), nil
}

// AppendTools renders a tools array by hand, as the OpenAI wires send it:
// each tool is open, its name, its description when it has one, its
// parameters (AppendSchema), then close — chat completions nest the
// function in its tool, Responses does not — with HTML escaped or not
// (escapeHTML), as the adapter's reference encoder does.
func AppendTools(specs []ToolSpec, open, close string, escapeHTML bool) ([]byte, error) {
	str := jsonw.StringNoHTML
	if escapeHTML {
		str = jsonw.String
	}
	size := 2
	for _, t := range specs {
		size += len(t.Name) + len(t.Description) + len(t.Parameters) + 64
	}
	buf := append(make([]byte, 0, size), '[')
	for i, t := range specs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, open...)
		buf = str(buf, t.Name)
		if t.Description != "" {
			buf = append(buf, `,"description":`...)
			buf = str(buf, t.Description)
		}
		buf = append(buf, `,"parameters":`...)
		var err error
		if buf, err = t.AppendSchema(buf, escapeHTML); err != nil {
			return nil, err
		}
		buf = append(buf, close...)
	}
	return append(buf, ']'), nil
}
