package harness

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/telemetry"
	"github.com/reinsdev/reins/internal/testutil"
)

// telemetryScript: the parent reads a file and delegates to an in-process
// child and a pi child in one message; the child answers; every text the
// model, a tool or a child writes carries the canary.
const telemetryScript = `
replies:
  - match: CHILD-TASK
    text: "child answer $CANARY"
    usage: {input: 7, output: 3}
  - match: delegate
    toolCalls:
      - id: call_read
        name: read
        arguments: {path: secret.txt}
      - id: call_child
        name: subagent
        arguments: {description: inner task, prompt: "CHILD-TASK $CANARY"}
      - id: call_pi
        name: subagent
        arguments: {description: pi task, prompt: "PI-TASK $CANARY", agent: leaky}
    usage: {input: 11, output: 5}
fallback:
  text: "parent done $CANARY"
  usage: {input: 13, output: 2}
`

// runTraced runs the telemetry scenario with spans kept in memory and
// returns them once telemetry has shut down.
func runTraced(t *testing.T, content bool) ([]*telemetry.SpanData, string, *Session) {
	t.Helper()
	canary := "CANARY" + randomHex(t)
	k, v, _ := strings.Cut(testutil.MarkChildren(t), "=")
	pi := filepath.Join(t.TempDir(), "pi")
	body := "#!/bin/bash\n" +
		"echo \"secret=" + canary + " TRACEPARENT=$TRACEPARENT\" >&2\n" +
		`echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"pi ` + canary + `"}],"stopReason":"error","errorMessage":"upstream said ` + canary + `"}}'` + "\n" +
		"exit 1\n"
	if err := os.WriteFile(pi, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	def := fmt.Sprintf("---\nname: leaky\ndescription: pi\nprovider: pi\ncommand: %q\nenv: {%s: %q}\n---\nYou leak.\n", pi, k, v)
	f := newFixture(t, strings.ReplaceAll(telemetryScript, "$CANARY", canary), map[string]string{
		".reins/agents/leaky.md": def,
		"secret.txt":             "file says " + canary,
	})
	mem := &keepSpans{}
	f.h.Telemetry = telemetry.Start(telemetry.Options{Settings: telemetry.Settings{Content: content}, Exporter: mem, Logf: f.h.Logf})
	s := f.session(t)
	res := s.Run(context.Background(), "delegate "+canary)
	if res.Reason != session.ReasonCompleted {
		t.Fatalf("parent run %+v", res)
	}
	s.Close()
	f.h.Close()
	mem.mu.Lock()
	defer mem.mu.Unlock()
	return mem.spans, canary, s
}

// keepSpans keeps the exported spans in memory.
type keepSpans struct {
	mu    sync.Mutex
	spans []*telemetry.SpanData
}

func (k *keepSpans) ExportSpans(_ context.Context, spans []*telemetry.SpanData) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.spans = append(k.spans, spans...)
	return nil
}

func (*keepSpans) Shutdown(context.Context) error { return nil }

// attrsText is every string a span carries: its name, status, attributes,
// its events' names and attributes, and its resource's attributes.
func attrsText(s *telemetry.SpanData) string {
	var b strings.Builder
	add := func(kv []telemetry.KeyValue) {
		for _, a := range kv {
			b.WriteString(a.Key + "=" + a.Value.Emit() + "\n")
		}
	}
	b.WriteString(s.Name + "\n" + s.StatusDescription + "\n")
	add(s.Attributes)
	for _, e := range s.Events {
		b.WriteString(e.Name + "\n")
		add(e.Attributes)
	}
	if s.Resource != nil {
		add(s.Resource.Attributes)
	}
	return b.String()
}

// TestTelemetryCanary is acceptance 3 of issue 33: a canary planted in the
// prompt, a tool's output, a child's prompt and answer, and a pi child's
// stderr and error message reaches no span unless telemetry.content is
// true — and, so the test can fail, with content: true it does.
func TestTelemetryCanary(t *testing.T) {
	for _, content := range []bool{false, true} {
		t.Run(fmt.Sprintf("content=%v", content), func(t *testing.T) {
			spans, canary, _ := runTraced(t, content)
			if len(spans) == 0 {
				t.Fatal("no spans")
			}
			leaks := 0
			for _, s := range spans {
				if txt := attrsText(s); strings.Contains(txt, canary) {
					leaks++
					if !content {
						t.Errorf("canary in span %q:\n%s", s.Name, txt)
					}
				}
			}
			if content && leaks == 0 {
				t.Error("content: true put the canary in no span: the test cannot see a leak")
			}
			t.Logf("%d spans, %d with the canary", len(spans), leaks)
		})
	}
}

// TestTelemetryTreeInMemory checks the nesting of one traced run with an
// in-process and a pi child: one trace; the parent's run span holds its
// turns, their chat and execute_tool spans; each subagent span lies under
// its execute_tool span, and the in-process child's run under its
// subagent span; the pi child was given the subagent span as TRACEPARENT.
func TestTelemetryTreeInMemory(t *testing.T) {
	spans, _, s := runTraced(t, false)
	byID := map[string]*telemetry.SpanData{}
	traces := map[string]bool{}
	for _, sp := range spans {
		byID[sp.Context.SpanID.String()] = sp
		traces[sp.Context.TraceID.String()] = true
	}
	if len(traces) != 1 {
		t.Fatalf("%d traces, want 1", len(traces))
	}
	parentName := func(sp *telemetry.SpanData) string {
		p, ok := byID[sp.Parent.String()]
		if !ok {
			return ""
		}
		return p.Name
	}
	counts := map[string]int{}
	for _, sp := range spans {
		edge := parentName(sp) + " > " + sp.Name
		counts[edge]++
	}
	for _, want := range []string{
		" > invoke_agent reins",
		"invoke_agent reins > turn",
		"turn > chat test",
		"turn > execute_tool read",
		"turn > execute_tool subagent",
		"execute_tool subagent > subagent general",
		"execute_tool subagent > subagent leaky",
		"subagent general > invoke_agent general",
		"invoke_agent general > turn",
	} {
		if counts[want] == 0 {
			t.Errorf("no span edge %q; edges: %v", want, counts)
		}
	}
	// The trace id is on the parent's turn/start.
	var tid string
	for trace := range traces {
		tid = trace
	}
	events := loadEvents(t, s.Log.Path())
	found := false
	for _, e := range events {
		var ts session.TurnStart
		if e.Type == session.TypeTurnStart && e.Decode(&ts) == nil && ts.TraceID == tid {
			found = true
		}
	}
	if !found {
		t.Errorf("trace id %s on no turn/start of the parent", tid)
	}
	// The pi child got the subagent span's traceparent in its environment.
	var piSpan string
	for _, sp := range spans {
		if sp.Name == "subagent leaky" {
			piSpan = sp.Context.SpanID.String()
		}
	}
	var stderr string
	filepath.WalkDir(s.Log.Dir(), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "stderr.log" {
			stderr += readFile(path)
		}
		return err
	})
	if piSpan == "" || !strings.Contains(stderr, "TRACEPARENT=00-"+tid+"-"+piSpan+"-01") {
		t.Errorf("pi child's TRACEPARENT is not its subagent span %s of trace %s; stderr:\n%s", piSpan, tid, stderr)
	}
}

// TestTelemetryCollectorDown is acceptance 2 of issue 33: a collector that
// refuses connections, answers 500, or never answers changes no run's
// outcome; the harness closes (the process's exit) without waiting for it
// — with an hour's flush bound, Close returns while the silent collector
// still holds the request open, which it lets go only when the test ends —
// and the host log counts the dropped spans.
func TestTelemetryCollectorDown(t *testing.T) {
	refused := httptest.NewServer(http.NotFoundHandler())
	refusedURL := refused.URL
	refused.Close()
	var posts atomic.Int64
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		http.Error(w, "collector broke", http.StatusInternalServerError)
	}))
	defer failing.Close()
	hang := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		<-hang // holds the request whatever the client does
	}))
	defer silent.Close()
	defer silent.CloseClientConnections()
	defer close(hang)
	for _, tc := range []struct{ name, url string }{
		{"refused", refusedURL}, {"500", failing.URL}, {"silent", silent.URL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "replies:\n  - toolCalls: [{id: c1, name: read, arguments: {path: a.txt}}]\n  - text: done\n", map[string]string{"a.txt": "hello"})
			s, ok, err := telemetry.Resolve(func(k string) string {
				if k == "OTEL_EXPORTER_OTLP_ENDPOINT" {
					return tc.url
				}
				return ""
			}, f.h.Config.Telemetry)
			if err != nil || !ok {
				t.Fatalf("resolve: %v %v", ok, err)
			}
			f.h.Telemetry = telemetry.Start(telemetry.Options{Settings: s, Logf: f.h.Logf, ShutdownTimeout: time.Hour})
			sess := f.session(t)
			res := sess.Run(context.Background(), "go")
			if res.Reason != session.ReasonCompleted || res.Failure != nil {
				t.Fatalf("run %+v", res)
			}
			sess.Close()
			closed := make(chan struct{})
			go func() { f.h.Close(); close(closed) }()
			select {
			case <-closed:
			case <-time.After(2 * time.Minute):
				t.Fatal("the harness's close is held by the collector")
			}
			ended, exported, _ := f.h.Telemetry.Stats()
			if ended == 0 || exported != 0 {
				t.Errorf("ended %d, exported %d", ended, exported)
			}
			log := readFile(filepath.Join(f.h.Home, "logs", "reins.log"))
			if !strings.Contains(log, fmt.Sprintf("telemetry: %d spans ended, 0 exported, %d dropped", ended, ended)) {
				t.Errorf("host log does not count the dropped spans:\n%s", log)
			}
		})
	}
	if posts.Load() == 0 {
		t.Error("no export reached the 500 or the silent collector")
	}
}
