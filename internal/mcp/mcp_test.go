package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/reinsdev/reins/internal/mcpspec"
	"github.com/reinsdev/reins/internal/testutil"
	"github.com/reinsdev/reins/internal/tool"
)

func TestMain(m *testing.M) {
	mark := testutil.Mark("mcp")
	goleak.VerifyTestMain(m, goleak.Cleanup(testutil.ExitUnlessClean(mark)))
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		server, tool string
		full         string
		ok           bool
	}{
		{"everything", "echo", "mcp__everything__echo", true},
		{"fs", "read_text_file", "mcp__fs__read_text_file", true},
		{"fs", "a.b", "", false},
		{"fs", "", "", false},
		{"fs", "x\x1b[31m", "", false},
		{"fs", strings.Repeat("t", 60), "", false},
	} {
		got, ok := mcpspec.ToolName(tc.server, tc.tool)
		if got != tc.full || ok != tc.ok {
			t.Errorf("ToolName(%q, %q) = %q, %v; want %q, %v", tc.server, tc.tool, got, ok, tc.full, tc.ok)
		}
		if ok {
			s, n, sok := mcpspec.SplitToolName(got)
			if !sok || s != tc.server || n != tc.tool {
				t.Errorf("SplitToolName(%q) = %q, %q, %v", got, s, n, sok)
			}
		}
	}
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"everything", true}, {"my-server_2", true}, {"a__b", false}, {"", false},
		{"a b", false}, {"a/b", false}, {strings.Repeat("s", 41), false},
	} {
		if mcpspec.ValidName(tc.name) != tc.ok {
			t.Errorf("ValidName(%q) = %v, want %v", tc.name, !tc.ok, tc.ok)
		}
	}
	for _, n := range []string{"read", "mcp__x", "mcp____y", "mcp__a__b__c"} {
		s, tl, ok := mcpspec.SplitToolName(n)
		if n == "mcp__a__b__c" {
			if !ok || s != "a" || tl != "b__c" {
				t.Errorf("SplitToolName(%q) = %q, %q, %v", n, s, tl, ok)
			}
			continue
		}
		if ok {
			t.Errorf("SplitToolName(%q) accepted", n)
		}
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"KEY": "k1", "EMPTY": ""}
	getenv := func(k string) string { return env[k] }
	for in, want := range map[string]string{
		"plain":                    "plain",
		"Bearer ${KEY}":            "Bearer k1",
		"${MISSING}":               "",
		"${MISSING:-dflt}":         "dflt",
		"${EMPTY:-dflt}":           "dflt",
		"${KEY:-dflt}/${KEY}":      "k1/k1",
		"unterminated ${KEY":       "unterminated ${KEY",
		"$KEY is not an expansion": "$KEY is not an expansion",
	} {
		if got := mcpspec.Expand(in, getenv); got != want {
			t.Errorf("Expand(%q) = %q, want %q", in, got, want)
		}
	}
}

// memServer is a Go SDK server with one tool of each kind reins handles.
func memServer(t *testing.T, blocked chan<- struct{}) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "mem", Version: "1"}, nil)
	obj := map[string]any{"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}}
	s.AddTool(&sdk.Tool{Name: "echo", Description: "echoes", InputSchema: obj, Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var a struct{ Message string }
			json.Unmarshal(req.Params.Arguments, &a)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Echo: " + a.Message}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "write", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "wrote"}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "fails", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "no such thing"}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "mixed", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{
				Content: []sdk.Content{
					&sdk.TextContent{Text: "a picture:"},
					&sdk.ImageContent{MIMEType: "image/png", Data: []byte("12345")},
					&sdk.ResourceLink{URI: "file:///x", Name: "x"},
				},
				StructuredContent: map[string]any{"sum": 3},
			}, nil
		})
	s.AddTool(&sdk.Tool{Name: "block", InputSchema: map[string]any{"type": "object"}, Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			blocked <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		})
	s.AddTool(&sdk.Tool{Name: "bad.name", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return nil, nil })
	return s
}

// memManager is a manager whose one server "mem" is memServer, the Go
// SDK's server (the tests' only use of the SDK) over in-memory pipes
// spoken as stdio.
func memManager(t *testing.T, opts Options) (*Manager, chan struct{}, *logSink) {
	blocked := make(chan struct{}, 1)
	srv := memServer(t, blocked)
	log := &logSink{}
	opts.Logf = log.logf
	m := NewManager([]mcpspec.Server{{Name: "mem", Command: "unused", Source: "test"}}, opts)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	m.dial = func(mcpspec.Server) (io.ReadCloser, io.WriteCloser) {
		toClient, fromServer := io.Pipe()
		toServer, fromClient := io.Pipe()
		ss, err := srv.Connect(ctx, &sdk.IOTransport{Reader: toServer, Writer: fromServer}, nil)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			ss.Wait()
			toServer.Close()
			fromServer.Close()
		})
		return toClient, fromClient
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
		cancel()
		wg.Wait()
	})
	return m, blocked, log
}

type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (l *logSink) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, strings.TrimSpace(sprintf(format, args...)))
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func byName(ts []*Tool) map[string]*Tool {
	out := map[string]*Tool{}
	for _, t := range ts {
		out[t.Spec().Name] = t
	}
	return out
}

func TestInMemory(t *testing.T) {
	m, blocked, log := memManager(t, Options{})
	if st, _ := m.Status("mem"); st != StateIdle {
		t.Fatalf("before use: %s, want %s (servers start lazily)", st, StateIdle)
	}
	ts, err := m.Tools("mem")
	if err != nil {
		t.Fatal(err)
	}
	tools := byName(ts)
	var names []string
	for _, tl := range ts {
		names = append(names, tl.Spec().Name)
	}
	want := []string{"mcp__mem__block", "mcp__mem__echo", "mcp__mem__fails", "mcp__mem__mixed", "mcp__mem__write"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("tools %v, want %v (bad.name dropped)", names, want)
	}
	if !strings.Contains(log.String(), `tool "bad.name" not offered`) {
		t.Errorf("the dropped tool is not in the host log:\n%s", log)
	}
	if tools["mcp__mem__echo"].Needs() != tool.ReadOnly || tools["mcp__mem__write"].Needs() != tool.WorkspaceWrite {
		t.Errorf("needs: echo %s, write %s", tools["mcp__mem__echo"].Needs(), tools["mcp__mem__write"].Needs())
	}
	if !strings.Contains(string(tools["mcp__mem__echo"].Spec().Parameters), `"message"`) {
		t.Errorf("echo's schema: %s", tools["mcp__mem__echo"].Spec().Parameters)
	}
	// Through the registry, as the loop runs them: under read-only the
	// read-only tool runs (and may run alongside others), the other is
	// refused.
	reg := tool.NewRegistry(tools["mcp__mem__echo"], tools["mcp__mem__write"])
	env := &tool.Env{Permission: tool.ReadOnly}
	ctx := context.Background()
	if !reg.Concurrent("mcp__mem__echo") || reg.Concurrent("mcp__mem__write") {
		t.Error("only the read-only tool may run concurrently")
	}
	if res := reg.Run(ctx, env, "mcp__mem__write", nil); !res.IsError || !strings.Contains(res.Content, "not permitted in read-only mode") {
		t.Errorf("write under read-only: %+v", res)
	}
	if res := reg.Run(ctx, &tool.Env{Permission: tool.WorkspaceWrite}, "mcp__mem__write", nil); res.IsError || res.Content != "wrote" {
		t.Errorf("write under workspace-write: %+v", res)
	}
	for _, tc := range []struct {
		tool, args, want string
		isErr            bool
	}{
		{"mcp__mem__echo", `{"message":"hi"}`, "Echo: hi", false},
		{"mcp__mem__echo", ``, "Echo: ", false},
		{"mcp__mem__echo", `[1]`, "invalid arguments", true},
		{"mcp__mem__fails", `{}`, "no such thing", true},
		{"mcp__mem__mixed", `{}`, "a picture:\n[image: image/png, 5 bytes]\n[resource link: file:///x]", false},
	} {
		res := tools[tc.tool].Run(ctx, env, json.RawMessage(tc.args))
		if !strings.Contains(res.Content, tc.want) || res.IsError != tc.isErr {
			t.Errorf("%s(%s) = %+v, want %q (isError %v)", tc.tool, tc.args, res, tc.want, tc.isErr)
		}
	}

	// A call cancelled mid-way ends with the fixed text, and the server
	// sees the cancellation (its handler returns).
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan tool.Result)
	go func() { done <- tools["mcp__mem__block"].Run(cctx, env, nil) }()
	<-blocked
	cancel()
	select {
	case res := <-done:
		if !res.IsError || res.Content != (&Error{Server: "mem", Failure: FailCancelled}).Error() {
			t.Errorf("cancelled call: %+v", res)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a cancelled call did not return")
	}
	if st, _ := m.Status("mem"); st != StateRunning {
		t.Errorf("after the calls: %s", st)
	}
}

// A call that outlives CallTimeout ends with its fixed text.
func TestCallTimeout(t *testing.T) {
	m, blocked, _ := memManager(t, Options{CallTimeout: 100 * time.Millisecond})
	ts, err := m.Tools("mem")
	if err != nil {
		t.Fatal(err)
	}
	go func() { <-blocked }()
	res := byName(ts)["mcp__mem__block"].Run(context.Background(), &tool.Env{}, nil)
	if !res.IsError || !strings.Contains(res.Content, "did not finish within 100ms") {
		t.Errorf("timed-out call: %+v", res)
	}
}

// After Close nothing starts and a tool taken before is a fixed error.
func TestClosed(t *testing.T) {
	m, _, _ := memManager(t, Options{})
	ts, err := m.Tools("mem")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	res := byName(ts)["mcp__mem__echo"].Run(context.Background(), &tool.Env{}, json.RawMessage(`{"message":"x"}`))
	if !res.IsError || res.Content != (&Error{Server: "mem", Failure: FailStopped}).Error() {
		t.Errorf("call after close: %+v", res)
	}
	if _, err := m.Tools("mem"); err == nil {
		t.Error("Tools after Close succeeded")
	}
	if _, err := m.Tools("nope"); err == nil || err.Error() != "MCP server nope is not configured for this session" {
		t.Errorf("unknown server: %v", err)
	}
}

func TestRender(t *testing.T) {
	sc := json.RawMessage(`{"a":1}`)
	for _, tc := range []struct {
		res  *CallResult
		want string
	}{
		{&CallResult{}, "(no content)"},
		{&CallResult{IsError: true}, "the tool failed and said nothing"},
		{&CallResult{StructuredContent: sc}, `{"a":1}`},
		// A text part stands for the structured value: it is not repeated.
		{&CallResult{Content: []Content{{Type: ContentText, Text: "three"}}, StructuredContent: sc}, "three"},
		{&CallResult{Content: []Content{{Type: ContentImage, MIMEType: "image/png"}}, StructuredContent: sc}, "[image: image/png, 0 bytes]\n{\"a\":1}"},
		{&CallResult{Content: []Content{{Type: ContentAudio, MIMEType: "audio/wav", Data: []byte("abc")}}}, "[audio: audio/wav, 3 bytes]"},
		{&CallResult{Content: []Content{{Type: ContentImage, MIMEType: strings.Repeat("x", 100), Data: []byte("a")}}}, "[image: unknown type, 1 bytes]"},
		{&CallResult{Content: []Content{{Type: ContentResource, Resource: &ResourceContents{URI: "r://1", Text: "body"}}}}, "[resource r://1]\nbody"},
		{&CallResult{Content: []Content{{Type: ContentResource, Resource: &ResourceContents{URI: "r://2", MIMEType: "application/gzip", Blob: []byte("zz")}}}}, "[resource r://2: application/gzip, 2 bytes]"},
	} {
		if got := Render(tc.res); got != tc.want {
			t.Errorf("Render = %q, want %q", got, tc.want)
		}
	}
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
