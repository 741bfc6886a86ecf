package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// otlpJSON exports spans as OTLP/HTTP with the JSON encoding of the OTLP
// specification (ExportTraceServiceRequest; ids as hex, 64-bit integers
// as strings, enums as numbers), which every OTLP/HTTP collector accepts
// on /v1/traces. It is a few dozen lines of encoding/json over the SDK's
// ReadOnlySpan, where the official exporters would link gRPC and protobuf
// into every reins process (the package comment).
type otlpJSON struct {
	url     string
	headers map[string]string
	client  *http.Client
}

func newOTLPJSON(url string, headers map[string]string) *otlpJSON {
	return &otlpJSON{url: url, headers: headers, client: &http.Client{Timeout: ExportTimeout}}
}

// StatusError is a collector's answer other than 2xx; the body is not
// kept (only its status reaches the host log).
type StatusError struct{ Status int }

func (e *StatusError) Error() string {
	return fmt.Sprintf("collector answered HTTP %d", e.Status)
}

func (e *otlpJSON) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	body, err := json.Marshal(encodeSpans(spans))
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return fmt.Errorf("collector unreachable: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return &StatusError{Status: resp.StatusCode}
	}
	return nil
}

func (e *otlpJSON) Shutdown(context.Context) error {
	e.client.CloseIdleConnections()
	return nil
}

type (
	jsonRequest struct {
		ResourceSpans []jsonResourceSpans `json:"resourceSpans"`
	}
	jsonResourceSpans struct {
		Resource   jsonResource     `json:"resource"`
		ScopeSpans []jsonScopeSpans `json:"scopeSpans"`
	}
	jsonResource struct {
		Attributes []jsonKV `json:"attributes"`
	}
	jsonScopeSpans struct {
		Scope jsonScope  `json:"scope"`
		Spans []jsonSpan `json:"spans"`
	}
	jsonScope struct {
		Name    string `json:"name"`
		Version string `json:"version,omitempty"`
	}
	jsonSpan struct {
		TraceID      string      `json:"traceId"`
		SpanID       string      `json:"spanId"`
		TraceState   string      `json:"traceState,omitempty"`
		ParentSpanID string      `json:"parentSpanId,omitempty"`
		Name         string      `json:"name"`
		Kind         int         `json:"kind"`
		Start        string      `json:"startTimeUnixNano"`
		End          string      `json:"endTimeUnixNano"`
		Attributes   []jsonKV    `json:"attributes,omitempty"`
		Events       []jsonEvent `json:"events,omitempty"`
		Links        []jsonLink  `json:"links,omitempty"`
		Status       *jsonStatus `json:"status,omitempty"`
		DroppedAttrs int         `json:"droppedAttributesCount,omitempty"`
	}
	jsonEvent struct {
		Time       string   `json:"timeUnixNano"`
		Name       string   `json:"name"`
		Attributes []jsonKV `json:"attributes,omitempty"`
	}
	jsonLink struct {
		TraceID    string   `json:"traceId"`
		SpanID     string   `json:"spanId"`
		Attributes []jsonKV `json:"attributes,omitempty"`
	}
	jsonStatus struct {
		Code    int    `json:"code"`
		Message string `json:"message,omitempty"`
	}
	jsonKV struct {
		Key   string    `json:"key"`
		Value jsonValue `json:"value"`
	}
	jsonValue struct {
		String *string      `json:"stringValue,omitempty"`
		Bool   *bool        `json:"boolValue,omitempty"`
		Int    *string      `json:"intValue,omitempty"`
		Double *float64     `json:"doubleValue,omitempty"`
		Array  *jsonArrayKV `json:"arrayValue,omitempty"`
	}
	jsonArrayKV struct {
		Values []jsonValue `json:"values"`
	}
)

// encodeSpans groups spans by resource and scope, as OTLP nests them.
func encodeSpans(spans []sdktrace.ReadOnlySpan) jsonRequest {
	type key struct {
		res   attribute.Distinct
		scope string
	}
	out := jsonRequest{ResourceSpans: []jsonResourceSpans{}} // [] when empty (the probe), never null
	resIdx := map[attribute.Distinct]int{}
	scopeIdx := map[key]int{}
	for _, s := range spans {
		var rd attribute.Distinct
		var rattrs []attribute.KeyValue
		if r := s.Resource(); r != nil {
			rd, rattrs = r.Equivalent(), r.Attributes()
		}
		ri, ok := resIdx[rd]
		if !ok {
			ri = len(out.ResourceSpans)
			resIdx[rd] = ri
			out.ResourceSpans = append(out.ResourceSpans, jsonResourceSpans{Resource: jsonResource{Attributes: kvs(rattrs)}})
		}
		sc := s.InstrumentationScope()
		k := key{rd, sc.Name + "\x00" + sc.Version}
		si, ok := scopeIdx[k]
		rs := &out.ResourceSpans[ri]
		if !ok {
			si = len(rs.ScopeSpans)
			scopeIdx[k] = si
			rs.ScopeSpans = append(rs.ScopeSpans, jsonScopeSpans{Scope: jsonScope{Name: sc.Name, Version: sc.Version}})
		}
		rs.ScopeSpans[si].Spans = append(rs.ScopeSpans[si].Spans, encodeSpan(s))
	}
	return out
}

func encodeSpan(s sdktrace.ReadOnlySpan) jsonSpan {
	sc := s.SpanContext()
	j := jsonSpan{
		TraceID: sc.TraceID().String(), SpanID: sc.SpanID().String(), TraceState: sc.TraceState().String(),
		Name: s.Name(), Kind: int(s.SpanKind()),
		Start:        strconv.FormatInt(s.StartTime().UnixNano(), 10),
		End:          strconv.FormatInt(s.EndTime().UnixNano(), 10),
		Attributes:   kvs(s.Attributes()),
		DroppedAttrs: s.DroppedAttributes(),
	}
	if p := s.Parent(); p.SpanID().IsValid() {
		j.ParentSpanID = p.SpanID().String()
	}
	for _, e := range s.Events() {
		j.Events = append(j.Events, jsonEvent{Time: strconv.FormatInt(e.Time.UnixNano(), 10), Name: e.Name, Attributes: kvs(e.Attributes)})
	}
	for _, l := range s.Links() {
		j.Links = append(j.Links, jsonLink{TraceID: l.SpanContext.TraceID().String(), SpanID: l.SpanContext.SpanID().String(), Attributes: kvs(l.Attributes)})
	}
	// OTLP's status codes: 0 unset, 1 ok, 2 error (the SDK's: 0, 2, 1).
	switch st := s.Status(); st.Code {
	case codes.Error:
		j.Status = &jsonStatus{Code: 2, Message: st.Description}
	case codes.Ok:
		j.Status = &jsonStatus{Code: 1}
	}
	return j
}

func kvs(attrs []attribute.KeyValue) []jsonKV {
	out := make([]jsonKV, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, jsonKV{Key: string(a.Key), Value: value(a.Value)})
	}
	return out
}

func value(v attribute.Value) jsonValue {
	switch v.Type() {
	case attribute.BOOL:
		b := v.AsBool()
		return jsonValue{Bool: &b}
	case attribute.INT64:
		s := strconv.FormatInt(v.AsInt64(), 10)
		return jsonValue{Int: &s}
	case attribute.FLOAT64:
		f := v.AsFloat64()
		return jsonValue{Double: &f}
	case attribute.STRINGSLICE:
		a := &jsonArrayKV{}
		for _, s := range v.AsStringSlice() {
			a.Values = append(a.Values, value(attribute.StringValue(s)))
		}
		return jsonValue{Array: a}
	case attribute.INT64SLICE:
		a := &jsonArrayKV{}
		for _, n := range v.AsInt64Slice() {
			a.Values = append(a.Values, value(attribute.Int64Value(n)))
		}
		return jsonValue{Array: a}
	case attribute.BOOLSLICE:
		a := &jsonArrayKV{}
		for _, b := range v.AsBoolSlice() {
			a.Values = append(a.Values, value(attribute.BoolValue(b)))
		}
		return jsonValue{Array: a}
	case attribute.FLOAT64SLICE:
		a := &jsonArrayKV{}
		for _, f := range v.AsFloat64Slice() {
			a.Values = append(a.Values, value(attribute.Float64Value(f)))
		}
		return jsonValue{Array: a}
	}
	s := v.Emit()
	return jsonValue{String: &s}
}
