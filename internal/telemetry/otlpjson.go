package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// otlpJSON exports spans as OTLP/HTTP with the JSON encoding of the OTLP
// specification (ExportTraceServiceRequest; ids as hex, 64-bit integers
// as strings, enums as numbers), which every OTLP/HTTP collector accepts
// on /v1/traces. It is a few dozen lines of encoding/json over the recorded
// spans (span.go), where the official exporters would link gRPC and protobuf
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

func (e *otlpJSON) ExportSpans(ctx context.Context, spans []*SpanData) error {
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
		Status       *jsonStatus `json:"status,omitempty"`
	}
	jsonEvent struct {
		Time       string   `json:"timeUnixNano"`
		Name       string   `json:"name"`
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
func encodeSpans(spans []*SpanData) jsonRequest {
	type key struct {
		res   *Resource
		scope Scope
	}
	out := jsonRequest{ResourceSpans: []jsonResourceSpans{}} // [] when empty (the probe), never null
	resIdx := map[*Resource]int{}
	scopeIdx := map[key]int{}
	for _, s := range spans {
		ri, ok := resIdx[s.Resource]
		if !ok {
			ri = len(out.ResourceSpans)
			resIdx[s.Resource] = ri
			var rattrs []KeyValue
			if s.Resource != nil {
				rattrs = s.Resource.Attributes
			}
			out.ResourceSpans = append(out.ResourceSpans, jsonResourceSpans{Resource: jsonResource{Attributes: kvs(rattrs)}})
		}
		k := key{s.Resource, s.Scope}
		si, ok := scopeIdx[k]
		rs := &out.ResourceSpans[ri]
		if !ok {
			si = len(rs.ScopeSpans)
			scopeIdx[k] = si
			rs.ScopeSpans = append(rs.ScopeSpans, jsonScopeSpans{Scope: jsonScope{Name: s.Scope.Name, Version: s.Scope.Version}})
		}
		rs.ScopeSpans[si].Spans = append(rs.ScopeSpans[si].Spans, encodeSpan(s))
	}
	return out
}

func encodeSpan(s *SpanData) jsonSpan {
	sc := s.Context
	j := jsonSpan{
		TraceID: sc.TraceID.String(), SpanID: sc.SpanID.String(), TraceState: sc.State,
		Name: s.Name, Kind: int(s.Kind),
		Start:      strconv.FormatInt(s.Start.UnixNano(), 10),
		End:        strconv.FormatInt(s.End.UnixNano(), 10),
		Attributes: kvs(s.Attributes),
	}
	if s.Parent.IsValid() {
		j.ParentSpanID = s.Parent.String()
	}
	for _, e := range s.Events {
		j.Events = append(j.Events, jsonEvent{Time: strconv.FormatInt(e.Time.UnixNano(), 10), Name: e.Name, Attributes: kvs(e.Attributes)})
	}
	if s.Status == CodeError {
		j.Status = &jsonStatus{Code: int(CodeError), Message: s.StatusDescription}
	}
	return j
}

func kvs(attrs []KeyValue) []jsonKV {
	out := make([]jsonKV, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, jsonKV{Key: a.Key, Value: value(a.Value)})
	}
	return out
}

func value(v Value) jsonValue {
	switch v.Kind {
	case KindBool:
		b := v.Bool
		return jsonValue{Bool: &b}
	case KindInt64:
		s := strconv.FormatInt(v.Int, 10)
		return jsonValue{Int: &s}
	case KindFloat64:
		f := v.Float
		return jsonValue{Double: &f}
	case KindStringSlice:
		a := &jsonArrayKV{}
		for _, s := range v.Strings {
			a.Values = append(a.Values, value(Value{Kind: KindString, Str: s}))
		}
		return jsonValue{Array: a}
	}
	s := v.Str
	return jsonValue{String: &s}
}
