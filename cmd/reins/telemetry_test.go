package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/sdkserver/sdkfake"
	"github.com/reinsdev/reins/internal/testutil"
)

// otlpSpan is what the trace tests read of an OTLP/JSON span.
type otlpSpan struct {
	TraceID      string `json:"traceId"`
	SpanID       string `json:"spanId"`
	ParentSpanID string `json:"parentSpanId"`
	Name         string `json:"name"`
	// PID and Placement are read from Jaeger only: the sending process's
	// process.pid and the span's reins.subagent.placement.
	PID       string `json:"-"`
	Placement string `json:"-"`
}

// collector is an OTLP/HTTP collector that keeps the spans it is sent
// (OTLP's JSON encoding, which reins sends).
type collector struct {
	mu    sync.Mutex
	spans []otlpSpan
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		ResourceSpans []struct {
			ScopeSpans []struct {
				Spans []otlpSpan `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	}
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &req) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			c.spans = append(c.spans, ss.Spans...)
		}
	}
	c.mu.Unlock()
	w.Write([]byte("{}"))
}

// checkTree checks that spans are one trace nested as the delegation tree
// of telemetryTreeScript: the parent's execute_tool spans hold a subagent
// span per child, and each child's own run span lies under its subagent
// span — for the reins child, across the process boundary.
func checkTree(t *testing.T, spans []otlpSpan) {
	t.Helper()
	byID := map[string]otlpSpan{}
	traces := map[string]bool{}
	for _, s := range spans {
		byID[s.SpanID] = s
		traces[s.TraceID] = true
	}
	if len(traces) != 1 {
		t.Errorf("%d traces, want 1", len(traces))
	}
	edges := map[string]int{}
	for _, s := range spans {
		edges[byID[s.ParentSpanID].Name+" > "+s.Name]++
	}
	for _, want := range []string{
		" > invoke_agent reins",
		"execute_tool subagent > subagent general",
		"execute_tool subagent > subagent helper",
		"subagent general > invoke_agent general",
		"subagent helper > invoke_agent reins", // the reins child's run, in the child process
		"turn > chat test",
	} {
		if edges[want] == 0 {
			t.Errorf("no span edge %q", want)
		}
	}
	if t.Failed() {
		t.Logf("edges: %v", edges)
	}
}

const telemetryTreeScript = `
replies:
  - match: delegate-now
    toolCalls:
      - {id: p1, name: subagent, arguments: {description: in process, prompt: "INPROC-TASK"}}
      - {id: p2, name: subagent, arguments: {description: reins child, agent: helper, prompt: "CHILD-TASK"}}
  - match: INPROC-TASK
    text: inproc done
  - match: CHILD-TASK
    text: child done
fallback:
  text: parent done
`

// TestTraceAcrossReinsChild: `reins run` traced to a collector through
// OTEL_EXPORTER_OTLP_ENDPOINT, with an in-process and a reins child: every
// span of both processes is one trace, nested as the delegation tree (the
// reins child continues it from TRACEPARENT).
func TestTraceAcrossReinsChild(t *testing.T) {
	col := &collector{}
	srv := httptest.NewServer(col)
	defer srv.Close()
	url, _ := startMock(t, telemetryTreeScript)
	mark := sdkfake.NewMark(t.Name())
	cwd, home := sdkWorkspace(t, mark, map[string]string{"helper": "---\nname: helper\ndescription: a reins child\nprovider: reins\n---\nYou help.\n"})
	cmd := reinsIn(t, cwd, home, mark, "run", "--json", "-m", "openai/test", "--base-url", url, "delegate-now")
	cmd.Env = append(cmd.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+srv.URL, "TRACEPARENT=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reins run: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(string(out), `"stopReason":"completed"`) {
		t.Fatalf("result %s", out)
	}
	col.mu.Lock()
	spans := append([]otlpSpan(nil), col.spans...)
	col.mu.Unlock()
	checkTree(t, spans)
	if t.Failed() {
		b, _ := os.ReadFile(home + "/logs/reins.log")
		t.Logf("host log:\n%s", b)
	}
	checkNoLeftovers(t, mark)
}

// jaegerPath is the Jaeger v2 all-in-one scripts/test builds once
// (tools/jaeger): $REINS_TEST_JAEGER, else the cache outside the
// repository.
func jaegerPath(t *testing.T) string {
	t.Helper()
	if os.Getenv("REINS_TEST_SKIP_JAEGER") == "1" || os.Getenv("REINS_TEST_SKIP_PEERS") == "1" {
		t.Skip("REINS_TEST_SKIP_JAEGER=1 or REINS_TEST_SKIP_PEERS=1: the Jaeger test is skipped")
	}
	p := os.Getenv("REINS_TEST_JAEGER")
	if p == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		p = filepath.Join(cache, "reins-test", "jaeger-v1.76.0", "jaeger")
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the Jaeger all-in-one is missing (%v): run scripts/test, which builds it once (or set REINS_TEST_SKIP_JAEGER=1)", err)
	}
	return p
}

// jaegerTreeScript is the delegation tree of TestJaegerTraceOfTheTree:
// the parent delegates, in one message, to an in-process child, a reins
// child, a pi child and an ACP child; the reins child (on the temporal
// engine, by its --config) delegates to a child that a `reins worker`
// runs through a real Temporal dev server.
const jaegerTreeScript = `
replies:
  - match: delegate-now
    toolCalls:
      - {id: p1, name: subagent, arguments: {description: in process, prompt: "INPROC-TASK"}}
      - {id: p2, name: subagent, arguments: {description: reins child, agent: helper, prompt: "CHILD-TASK"}}
      - {id: p3, name: subagent, arguments: {description: pi child, agent: pichild, prompt: "PI-TASK"}}
      - {id: p4, name: subagent, arguments: {description: acp child, agent: acpchild, prompt: "ACP-TASK"}}
  - match: INPROC-TASK
    text: inproc done
  - match: CHILD-TASK
    toolCalls:
      - {id: r1, name: subagent, arguments: {description: temporal child, prompt: "TEMPORAL-TASK"}}
  - match: TEMPORAL-TASK
    text: temporal done
  - match: PI-TASK
    text: pi done
fallback:
  text: parent done
`

// TestJaegerTraceOfTheTree is acceptance 1 of issue 33 against a real
// Jaeger v2 all-in-one bound to 127.0.0.1: one traced `reins run` whose
// children are in-process, a reins child, a real pi, the ACP TypeScript
// SDK's agent, and — under the reins child, whose engine is temporal — a
// child run by a real `reins worker` through a real Temporal dev server.
// The spans read back from Jaeger's query API are one trace with one root
// and no orphan, nested as the delegation tree across all four processes
// that export (parent, reins child, worker; pi and the ACP agent export
// none), and the ACP agent echoes the traceparent it was sent: its
// subagent span's context.
func TestJaegerTraceOfTheTree(t *testing.T) {
	bin := jaegerPath(t)
	nm := testutil.Peers(t)
	cfg, stopServer := temporalSetup(t)
	defer stopServer()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	j := exec.CommandContext(ctx, bin)
	j.Env = append(os.Environ(), "JAEGER_LISTEN_HOST=127.0.0.1")
	var jlog bytes.Buffer
	j.Stdout, j.Stderr = &jlog, &jlog
	if err := j.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		j.Wait()
	}()
	// Ready when its query API answers (bounded; a slow machine gets a
	// minute).
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get("http://127.0.0.1:16686/api/services")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("jaeger did not come up:\n%s", jlog.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	const otlp = "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318"

	url, _ := startMock(t, jaegerTreeScript)
	mark := sdkfake.NewMark(t.Name())
	// pi, offline, with the mock as its only provider.
	piDir := t.TempDir()
	models, _ := json.Marshal(map[string]any{"providers": map[string]any{"reins-mock": map[string]any{
		"baseUrl": url + "/v1", "api": "openai-completions", "apiKey": "mock-key",
		"compat": map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
		"models": []any{map[string]any{"id": "mock-model"}},
	}}})
	if err := os.WriteFile(filepath.Join(piDir, "models.json"), models, 0o644); err != nil {
		t.Fatal(err)
	}
	acpScript := filepath.Join(testutil.RepoRoot(t), "internal", "subagent", "acpchild", "testdata", "child.mjs")
	acpSDK := filepath.Join(nm, "@agentclientprotocol", "sdk", "dist", "v1", "stable", "acp.js")
	cwd, home := sdkWorkspace(t, mark, map[string]string{
		// The reins child reads the temporal engine's config from the
		// workspace (readable in its sandbox).
		"helper": "---\nname: helper\ndescription: a reins child on the temporal engine\nprovider: reins\nargs: [sdk, --config, temporal.yaml]\n---\nYou help.\n",
		"pichild": fmt.Sprintf("---\nname: pichild\ndescription: a pi child\nprovider: pi\nmodel: reins-mock/mock-model\nsandbox: {writable: [%q]}\nenv:\n  PI_CODING_AGENT_DIR: %q\n  PI_OFFLINE: \"1\"\n  HOME: %q\n  PATH: %q\n---\n",
			piDir, piDir, piDir, filepath.Join(nm, ".bin")+":"+os.Getenv("PATH")),
		"acpchild": fmt.Sprintf("---\nname: acpchild\ndescription: an ACP child\nprovider: acp\ncommand: node\nargs: [%q]\nenv:\n  ACP_SDK_PATH: %q\n  ACP_SCENARIO: trace_meta\n---\n", acpScript, acpSDK),
	})
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, "temporal.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}

	// The worker, traced to the same Jaeger, answers from the same mock.
	w := &workerProc{home: t.TempDir(), done: make(chan struct{})}
	w.cmd = reinsCmd(t, w.home, "worker", "--config", cfg, "--parallel", "4", "--root", os.TempDir(), "--base-url", url)
	w.cmd.Env = append(w.cmd.Env, otlp, "TRACEPARENT=")
	w.cmd.Stderr = &w.errb
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.cmd.Wait(); close(w.done) }()
	defer w.stop()

	// --sandbox off: the reins child's temporal engine dials the dev
	// server through its helper, which a confined child may not (the
	// network proxy passes HTTP, not Temporal's gRPC).
	cmd := reinsIn(t, cwd, home, mark, "run", "--json", "--sandbox", "off", "-m", "openai/test", "--base-url", url, "delegate-now")
	cmd.Env = append(cmd.Env, otlp, "TRACEPARENT=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reins run: %v\n%s\nworker: %s", err, stderr.String(), w.errb.Bytes())
	}
	var res runResult
	if err := json.Unmarshal(out, &res); err != nil || res.StopReason != "completed" {
		t.Fatalf("result %s: %v", out, err)
	}
	// The trace id, as `reins log` prints it: on the parent's turn/start.
	log, _ := os.ReadFile(filepath.Join(home, "sessions", res.SessionID, "session.jsonl"))
	m := regexp.MustCompile(`"traceId":"([0-9a-f]{32})"`).FindSubmatch(log)
	if m == nil {
		t.Fatalf("no traceId on the parent's turn/start:\n%s", log)
	}
	traceID := string(m[1])

	const (
		top = "invoke_agent reins / turn / execute_tool subagent / "
		// The reins child's run, in its own process; under it the
		// temporal child: its subagent span in the reins child (tsub),
		// then on the worker — continued from wire.Task.Trace — the
		// worker's run of it (the stand-in parent's subagent span) and
		// the child's own run.
		tsub     = top + "subagent helper / invoke_agent reins / turn / execute_tool subagent / subagent general"
		temporal = tsub + " / subagent general / invoke_agent general / turn / chat test"
	)
	want := []string{
		"invoke_agent reins / turn / chat test",
		top + "subagent general / invoke_agent general / turn / chat test",
		temporal,
		top + "subagent pichild",
		top + "subagent acpchild",
	}
	// Jaeger batches what it receives: poll its API until every path of
	// the tree is there (bounded).
	var spans []otlpSpan
	var paths map[string]int
	deadline = time.Now().Add(2 * time.Minute)
	for {
		spans = jaegerSpans(t, traceID)
		paths, _ = spanPaths(spans)
		missing := 0
		for _, p := range want {
			if paths[p] == 0 {
				missing++
			}
		}
		if missing == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("trace %s: %d spans from Jaeger", traceID, len(spans))
	_, problems := spanPaths(spans)
	for _, p := range problems {
		t.Error(p)
	}
	for _, p := range want {
		if paths[p] == 0 {
			t.Errorf("no span path %q", p)
		}
	}
	// Each child has exactly its one subagent span under the parent.
	for _, c := range []string{"general", "helper", "pichild", "acpchild"} {
		if n := paths[top+"subagent "+c]; n != 1 {
			t.Errorf("%d spans %q, want 1", n, top+"subagent "+c)
		}
	}
	// The processes: the parent's spans are the parent's, the reins
	// child's run is another process's, and the temporal child's run is
	// the worker's, under the reins child's subagent span (placement
	// temporal).
	byPath := map[string]otlpSpan{}
	for _, s := range spans {
		if p := pathOf(spans, s); paths[p] == 1 {
			byPath[p] = s
		}
	}
	parentPID, workerPID := fmt.Sprint(cmd.Process.Pid), fmt.Sprint(w.cmd.Process.Pid)
	for _, c := range []struct {
		path, pid, what string
	}{
		{"invoke_agent reins", parentPID, "the parent"},
		{top + "subagent helper", parentPID, "the parent"},
		{tsub + " / subagent general", workerPID, "the worker"},
		{tsub + " / subagent general / invoke_agent general", workerPID, "the worker"},
		{temporal, workerPID, "the worker"},
	} {
		if s, ok := byPath[c.path]; !ok || s.PID != c.pid {
			t.Errorf("span %q: pid %q, want %s's %s", c.path, s.PID, c.what, c.pid)
		}
	}
	if s := byPath[tsub]; s.Placement != "temporal" || s.PID == parentPID || s.PID == workerPID || s.PID == "" {
		t.Errorf("the temporal child's subagent span: placement %q, pid %q; want temporal, in the reins child (not %s or %s)", s.Placement, s.PID, parentPID, workerPID)
	}
	// The ACP agent echoed, from session/new's and session/prompt's
	// _meta and its environment, the context of its subagent span.
	var acpSpan string
	for _, s := range spans {
		if s.Name == "subagent acpchild" {
			acpSpan = "00-" + s.TraceID + "-" + s.SpanID + "-01"
		}
	}
	echoed := regexp.MustCompile(`(?:traceparent|env)\\*":\\*"(00-[0-9a-f]{32}-[0-9a-f]{16}-01)`).FindAllSubmatch(log, -1)
	if len(echoed) < 3 {
		t.Errorf("the ACP agent echoed %d trace contexts, want 3 or more (session/new, session/prompt, TRACEPARENT)", len(echoed))
	}
	for _, e := range echoed {
		if string(e[1]) != acpSpan {
			t.Errorf("the ACP agent got traceparent %s, want its subagent span's %s", e[1], acpSpan)
		}
	}
	if t.Failed() {
		for p, n := range paths {
			t.Logf("%d × %s", n, p)
		}
		hb, _ := os.ReadFile(filepath.Join(home, "logs", "reins.log"))
		wb, _ := os.ReadFile(filepath.Join(w.home, "logs", "reins.log"))
		t.Logf("host log:\n%s\nworker host log:\n%s\nworker stderr:\n%s", hb, wb, w.errb.Bytes())
	}
	w.stop()
	checkNoLeftovers(t, mark)
}

// pathOf is s's path as spanPaths names it.
func pathOf(spans []otlpSpan, s otlpSpan) string {
	byID := map[string]otlpSpan{}
	for _, x := range spans {
		byID[x.SpanID] = x
	}
	names := []string{s.Name}
	for hops := 0; s.ParentSpanID != "" && hops < 64; hops++ {
		p, ok := byID[s.ParentSpanID]
		if !ok {
			break
		}
		names = append([]string{p.Name}, names...)
		s = p
	}
	return strings.Join(names, " / ")
}

// spanPaths names each span by its ancestors' names from the root ("a /
// b / c") and counts the spans of each path; problems lists a trace other
// than the first, each orphan (a parent not among spans) and every root
// past the first.
func spanPaths(spans []otlpSpan) (map[string]int, []string) {
	byID := map[string]otlpSpan{}
	for _, s := range spans {
		byID[s.SpanID] = s
	}
	var problems []string
	roots := 0
	paths := map[string]int{}
	for _, s := range spans {
		if s.TraceID != spans[0].TraceID {
			problems = append(problems, "span "+s.Name+" in another trace "+s.TraceID)
		}
		names := []string{s.Name}
		cur := s
		for hops := 0; cur.ParentSpanID != "" && hops < 64; hops++ {
			p, ok := byID[cur.ParentSpanID]
			if !ok {
				problems = append(problems, "orphan span "+cur.Name+" (parent "+cur.ParentSpanID+" not in the trace)")
				break
			}
			names = append([]string{p.Name}, names...)
			cur = p
		}
		if s.ParentSpanID == "" {
			roots++
		}
		paths[strings.Join(names, " / ")]++
	}
	if roots != 1 {
		problems = append(problems, fmt.Sprintf("%d root spans, want 1", roots))
	}
	return paths, problems
}

// jaegerSpans reads one trace from Jaeger's query API as otlpSpans (a
// span's parent is its CHILD_OF reference).
func jaegerSpans(t *testing.T, traceID string) []otlpSpan {
	resp, err := http.Get("http://127.0.0.1:16686/api/traces/" + traceID)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	type tag struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	}
	var body struct {
		Data []struct {
			Spans []struct {
				TraceID       string `json:"traceID"`
				SpanID        string `json:"spanID"`
				OperationName string `json:"operationName"`
				References    []struct {
					RefType string `json:"refType"`
					SpanID  string `json:"spanID"`
				} `json:"references"`
				ProcessID string `json:"processID"`
				Tags      []tag  `json:"tags"`
			} `json:"spans"`
			Processes map[string]struct {
				Tags []tag `json:"tags"`
			} `json:"processes"`
		} `json:"data"`
	}
	tagOf := func(tags []tag, key string) string {
		for _, t := range tags {
			if t.Key == key {
				return fmt.Sprint(t.Value)
			}
		}
		return ""
	}
	if json.NewDecoder(resp.Body).Decode(&body) != nil {
		return nil
	}
	var out []otlpSpan
	for _, d := range body.Data {
		for _, s := range d.Spans {
			o := otlpSpan{TraceID: s.TraceID, SpanID: s.SpanID, Name: s.OperationName,
				PID: tagOf(d.Processes[s.ProcessID].Tags, "process.pid"), Placement: tagOf(s.Tags, "reins.subagent.placement")}
			for _, r := range s.References {
				if r.RefType == "CHILD_OF" {
					o.ParentSpanID = r.SpanID
				}
			}
			out = append(out, o)
		}
	}
	return out
}
