package subagent

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// keepProvider's runs answer their prompt, can be kept (Again) and resumed
// cold (Continue); it counts what happened to them.
type keepProvider struct {
	mu                        sync.Mutex
	started, again, continued int
	disposed                  atomic.Int32
	sessions                  []string // ChildSession of each cold resume
	answer                    func(req Request) string
	block                     chan struct{} // when set, Wait waits for it
}

func (p *keepProvider) run(req Request) *keepRun {
	a := "answer to " + req.Prompt
	if p.answer != nil {
		a = p.answer(req)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return &keepRun{p: p, out: a, block: p.block}
}

func (p *keepProvider) Start(_ context.Context, req Request) (Run, error) {
	p.mu.Lock()
	p.started++
	p.mu.Unlock()
	return p.run(req), nil
}

func (p *keepProvider) Continue(_ context.Context, req Request) (Run, error) {
	p.mu.Lock()
	p.continued++
	p.sessions = append(p.sessions, req.ChildSession)
	p.mu.Unlock()
	return p.run(req), nil
}

type keepRun struct {
	p     *keepProvider
	out   string
	block chan struct{}
}

func (*keepRun) Session() string { return "child-session-1" }
func (r *keepRun) Wait(context.Context) outcome.Result {
	if r.block != nil {
		<-r.block
	}
	return outcome.Result{StopReason: outcome.StopCompleted, Output: []llm.Block{{Type: llm.BlockText, Text: r.out}}}
}
func (*keepRun) Cancel()          {}
func (r *keepRun) Dispose() error { r.p.disposed.Add(1); return nil }
func (r *keepRun) Again(_ context.Context, req Request) (Run, error) {
	r.p.mu.Lock()
	r.p.again++
	r.p.mu.Unlock()
	return r.p.run(req), nil
}

func managerWith(t *testing.T, prov Provider, limits config.Subagents) *Manager {
	t.Helper()
	l, err := session.Create(t.TempDir(), session.Header{ID: "parent-session"}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	m := newManager(t, l, prov)
	limits.MaxDepth = 2
	m.Limits = limits
	return m
}

func lastLine(s string) string { return s[strings.LastIndex(s, "\n")+1:] }

// A kept child takes its follow-up on the same run (Again); after its idle
// timeout it is disposed and the follow-up is a cold resume of its
// session (Continue); the parent's Close disposes a kept child.
func TestContinueKeptThenCold(t *testing.T) {
	prov := &keepProvider{}
	m := managerWith(t, prov, config.Subagents{IdleTimeout: time.Hour})
	r1 := m.Delegate(t.Context(), Params{Description: "d", Prompt: "one"})
	id := strings.TrimPrefix(lastLine(r1.Content), "child: ")
	if r1.IsError || id != ChildID("parent-session", "run-1") {
		t.Fatalf("first result %+v", r1)
	}
	if m.Kept() != 1 || prov.disposed.Load() != 0 {
		t.Fatalf("kept %d, disposed %d: a finished child stays alive while idle", m.Kept(), prov.disposed.Load())
	}
	r2 := m.Delegate(t.Context(), Params{Description: "d", Prompt: "two", Continue: id})
	if r2.Content != "answer to two\nchild: "+id || prov.again != 1 || prov.continued != 0 {
		t.Fatalf("kept continuation %+v (again %d, continued %d)", r2, prov.again, prov.continued)
	}
	// Idle teardown.
	m.Limits.IdleTimeout = time.Millisecond
	m.Delegate(t.Context(), Params{Description: "d", Prompt: "three", Continue: id})
	deadline := time.Now().Add(30 * time.Second)
	for m.Kept() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle child was not torn down")
		}
		time.Sleep(time.Millisecond)
	}
	if prov.disposed.Load() != 1 {
		t.Errorf("disposed %d after idle teardown, want 1", prov.disposed.Load())
	}
	// Back to an hour before the cold continuation: with 1 ms, whether its
	// child was still kept when "five" came depended on the machine's speed.
	m.Limits.IdleTimeout = time.Hour
	r4 := m.Delegate(t.Context(), Params{Description: "d", Prompt: "four", Continue: id})
	if r4.Content != "answer to four\nchild: "+id || prov.continued != 1 || prov.sessions[0] != "child-session-1" {
		t.Fatalf("cold continuation %+v (continued %d, sessions %v)", r4, prov.continued, prov.sessions)
	}
	m.Delegate(t.Context(), Params{Description: "d", Prompt: "five", Continue: id})
	m.Close()
	if m.Kept() != 0 || prov.disposed.Load() != 2 {
		t.Errorf("after Close: kept %d, disposed %d, want 0 and 2", m.Kept(), prov.disposed.Load())
	}
}

// The continuation errors: each is an error result and starts nothing.
func TestContinueErrors(t *testing.T) {
	prov := &keepProvider{}
	m := managerWith(t, prov, config.Subagents{})
	id := strings.TrimPrefix(lastLine(m.Delegate(t.Context(), Params{Description: "d", Prompt: "one"}).Content), "child: ")
	for _, tc := range []struct {
		name string
		p    Params
		want string
	}{
		{"unknown id", Params{Prompt: "x", Continue: "child-00000000"}, `no child "child-00000000" in this session`},
		{"huge id", Params{Prompt: "x", Continue: strings.Repeat("é", 100000)}, `…" in this session`},
		{"other session's id", Params{Prompt: "x", Continue: ChildID("another-session", "run-1")}, "in this session"},
		{"empty prompt", Params{Prompt: " ", Continue: id}, "needs a prompt"},
		{"other agent", Params{Prompt: "x", Continue: id, Agent: "explore"}, `runs as agent "general"`},
		{"fork", Params{Prompt: "x", Continue: id, Fork: true}, "exclude each other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := m.Delegate(t.Context(), tc.p)
			if !r.IsError || !strings.Contains(r.Content, tc.want) || len(r.Content) > 1024 {
				t.Errorf("result %.300q (%d bytes), want a short error with %q", r.Content, len(r.Content), tc.want)
			}
		})
	}
	if prov.started != 1 || prov.again != 0 || prov.continued != 0 {
		t.Errorf("started %d again %d continued %d: a refused continuation started something", prov.started, prov.again, prov.continued)
	}
}

// A provider that cannot resume cold gives a clear error result for a
// child torn down.
type startOnly struct{ p keepProvider }

func (p *startOnly) Start(ctx context.Context, req Request) (Run, error) {
	r, err := p.p.Start(ctx, req)
	return plainRun{r}, err
}

type plainRun struct{ Run }

func TestContinueNotContinuable(t *testing.T) {
	prov := &startOnly{}
	m := managerWith(t, prov, config.Subagents{})
	id := strings.TrimPrefix(lastLine(m.Delegate(t.Context(), Params{Description: "d", Prompt: "one"}).Content), "child: ")
	r := m.Delegate(t.Context(), Params{Prompt: "two", Continue: id})
	if !r.IsError || !strings.Contains(r.Content, "cannot resume it") {
		t.Errorf("result %+v, want a clear error naming the child", r)
	}
}

// A background continuation counts as a job and names its child.
func TestContinueInBackground(t *testing.T) {
	prov := &keepProvider{}
	m := managerWith(t, prov, config.Subagents{})
	id := strings.TrimPrefix(lastLine(m.Delegate(t.Context(), Params{Description: "d", Prompt: "one"}).Content), "child: ")
	r := m.Delegate(t.Context(), Params{Description: "bg", Prompt: "two", Continue: id, RunInBackground: true})
	if r.IsError || !strings.HasPrefix(r.Content, "Started background job job-1") || lastLine(r.Content) != "child: "+id {
		t.Fatalf("start %+v", r)
	}
	if err := m.WaitSettled(t.Context()); err != nil {
		t.Fatal(err)
	}
	var types []string
	var ends []session.SubagentEnd
	notices := m.Drain(func(typ string, data any) {
		types = append(types, typ)
		if e, ok := data.(session.SubagentEnd); ok {
			ends = append(ends, e)
		}
	})
	if len(notices) != 1 || lastLine(notices[0]) != "child: "+id || len(ends) != 1 || ends[0].Continues != id {
		t.Errorf("notices %q, ends %+v", notices, ends)
	}
	if out := m.JobOutput("job-1"); out.Content != "answer to two\nchild: "+id {
		t.Errorf("job_output %q", out.Content)
	}
}

// The pages of an output join byte-exact and each is valid UTF-8, however
// the limit falls inside multi-byte runes.
func TestSubagentOutputPages(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		max       int
	}{
		{"ascii", strings.Repeat("abcdefgh", 1000), 1024},
		{"two-byte runes", strings.Repeat("é", 3000), 1025},
		{"four-byte runes", strings.Repeat("x𝄞", 999), 1027},
		{"exactly the limit", strings.Repeat("a", 1024), 1024},
		{"short", "small", 1024},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prov := &keepProvider{answer: func(Request) string { return tc.out }}
			m := managerWith(t, prov, config.Subagents{MaxResultBytes: tc.max})
			r := m.Delegate(t.Context(), Params{Description: "d", Prompt: "go"})
			id := strings.TrimPrefix(lastLine(r.Content), "child: ")
			var got strings.Builder
			content, pages := r.Content, 0
			for {
				pages++
				body := strings.TrimSuffix(content, "\nchild: "+id)
				i := strings.LastIndex(body, "\n[output truncated: bytes ")
				if i < 0 {
					got.WriteString(body)
					break
				}
				piece := body[:i]
				if len(piece) > tc.max || !utf8Valid(piece) {
					t.Fatalf("page %d: %d bytes, valid %v", pages, len(piece), utf8Valid(piece))
				}
				got.WriteString(piece)
				if pages > 100 {
					t.Fatal("no end")
				}
				next := m.SubagentOutput(id, got.Len())
				if next.IsError {
					t.Fatalf("subagent_output at %d: %s", got.Len(), next.Content)
				}
				content = next.Content
			}
			if got.String() != tc.out {
				t.Errorf("pages joined differ from the output (%d vs %d bytes)", got.Len(), len(tc.out))
			}
			if end := m.SubagentOutput(id, len(tc.out)); end.IsError || !strings.HasPrefix(end.Content, "(end of output") {
				t.Errorf("at the end: %+v", end)
			}
			if bad := m.SubagentOutput(id, len(tc.out)+1); !bad.IsError {
				t.Errorf("past the end: %+v, want an error", bad)
			}
			if bad := m.SubagentOutput("child-nope", 0); !bad.IsError {
				t.Errorf("unknown child: %+v, want an error", bad)
			}
		})
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// The held output is bounded: beyond maxHeldTotal the oldest child's
// output is dropped (it stays in the child's log) and subagent_output says
// so.
func TestHeldOutputBounded(t *testing.T) {
	big := strings.Repeat("z", maxHeldOutput+10)
	prov := &keepProvider{answer: func(Request) string { return big }}
	m := managerWith(t, prov, config.Subagents{})
	var ids []string
	for range maxHeldTotal/maxHeldOutput + 1 {
		r := m.Delegate(t.Context(), Params{Description: "d", Prompt: "go"})
		ids = append(ids, strings.TrimPrefix(lastLine(r.Content), "child: "))
	}
	m.kids.mu.Lock()
	held := m.kids.held
	m.kids.mu.Unlock()
	if held > maxHeldTotal {
		t.Errorf("held %d bytes, more than %d", held, maxHeldTotal)
	}
	if r := m.SubagentOutput(ids[0], 100); !r.IsError || !strings.Contains(r.Content, "no longer held") {
		t.Errorf("the oldest child's output: %+v", r)
	}
	if r := m.SubagentOutput(ids[len(ids)-1], maxHeldOutput); !r.IsError || !strings.Contains(r.Content, "no longer held") {
		t.Errorf("past the held part: %+v", r)
	}
	if r := m.SubagentOutput(ids[len(ids)-1], 100); r.IsError {
		t.Errorf("the newest child's output: %+v", r)
	}
}

// Two continuations of one child in one message: one runs, the other is
// refused while it does; afterwards the child takes the next one.
func TestContinueWhileRunning(t *testing.T) {
	prov := &keepProvider{}
	m := managerWith(t, prov, config.Subagents{MaxParallel: 4})
	id := strings.TrimPrefix(lastLine(m.Delegate(t.Context(), Params{Description: "d", Prompt: "one"}).Content), "child: ")
	prov.mu.Lock()
	prov.block = make(chan struct{})
	prov.mu.Unlock()
	results := make(chan string, 2)
	for _, prompt := range []string{"a", "b"} {
		go func() {
			results <- m.Delegate(context.Background(), Params{Description: "d", Prompt: prompt, Continue: id}).Content
		}()
	}
	refused := <-results
	if !strings.Contains(refused, "still running") {
		t.Fatalf("first settled result %q, want the refusal", refused)
	}
	close(prov.block)
	if got := <-results; !strings.HasPrefix(got, "answer to ") {
		t.Errorf("the continuation that ran: %q", got)
	}
	prov.mu.Lock()
	prov.block = nil
	prov.mu.Unlock()
	if got := m.Delegate(t.Context(), Params{Description: "d", Prompt: "c", Continue: id}); got.Content != "answer to c\nchild: "+id {
		t.Errorf("after both: %q", got.Content)
	}
}

// At most maxParallel children are kept alive; one more tears the
// longest-idle one down, which then resumes cold.
func TestKeptChildrenBounded(t *testing.T) {
	prov := &keepProvider{}
	m := managerWith(t, prov, config.Subagents{MaxParallel: 2, IdleTimeout: time.Hour})
	var ids []string
	for _, p := range []string{"one", "two", "three"} {
		r := m.Delegate(t.Context(), Params{Description: "d", Prompt: p})
		ids = append(ids, strings.TrimPrefix(lastLine(r.Content), "child: "))
	}
	if m.Kept() != 2 || prov.disposed.Load() != 1 {
		t.Fatalf("kept %d, disposed %d; want 2 kept and the oldest torn down", m.Kept(), prov.disposed.Load())
	}
	m.Delegate(t.Context(), Params{Description: "d", Prompt: "again", Continue: ids[0]})
	if prov.continued != 1 || prov.again != 0 {
		t.Errorf("the evicted child: continued %d, again %d; want a cold resume", prov.continued, prov.again)
	}
	m.Delegate(t.Context(), Params{Description: "d", Prompt: "again", Continue: ids[2]})
	if prov.again != 1 {
		t.Errorf("a kept child: again %d, want 1", prov.again)
	}
}

// job_output is cut like a foreground result, and its marker pages on
// with subagent_output.
func TestJobOutputCut(t *testing.T) {
	out := strings.Repeat("0123456789", 500)
	prov := &keepProvider{answer: func(Request) string { return out }}
	m := managerWith(t, prov, config.Subagents{MaxResultBytes: 1024})
	start := m.Delegate(t.Context(), Params{Description: "bg", Prompt: "go", RunInBackground: true})
	id := strings.TrimPrefix(lastLine(start.Content), "child: ")
	if err := m.WaitSettled(t.Context()); err != nil {
		t.Fatal(err)
	}
	m.Drain(func(string, any) {})
	r := m.JobOutput("job-1")
	want := out[:1024] + "\n[output truncated: bytes 0-1024 of 5000 shown; read the rest with subagent_output {\"child\":\"" + id + "\",\"offset\":1024}."
	if !strings.HasPrefix(r.Content, want) || lastLine(r.Content) != "child: "+id {
		t.Fatalf("job_output %q", r.Content)
	}
	if next := m.SubagentOutput(id, 1024); !strings.HasPrefix(next.Content, out[1024:2048]+"\n[output truncated: bytes 1024-2048 of 5000") {
		t.Errorf("subagent_output %q", next.Content)
	}
}

// A background continuation counts against maxBackgroundJobs like any job.
func TestContinueCountsAgainstJobLimit(t *testing.T) {
	prov := &keepProvider{}
	m := managerWith(t, prov, config.Subagents{MaxBackgroundJobs: 1})
	id1 := strings.TrimPrefix(lastLine(m.Delegate(t.Context(), Params{Description: "d", Prompt: "one"}).Content), "child: ")
	prov.mu.Lock()
	prov.block = make(chan struct{})
	prov.mu.Unlock()
	if r := m.Delegate(t.Context(), Params{Description: "bg", Prompt: "two", RunInBackground: true}); r.IsError {
		t.Fatalf("first job %+v", r)
	}
	r := m.Delegate(t.Context(), Params{Description: "bg", Prompt: "again", Continue: id1, RunInBackground: true})
	if !r.IsError || !strings.Contains(r.Content, "maxBackgroundJobs 1") {
		t.Errorf("a second background run, a continuation: %+v, want the job limit", r)
	}
	close(prov.block)
	if err := m.WaitSettled(t.Context()); err != nil {
		t.Fatal(err)
	}
	prov.mu.Lock()
	prov.block = nil
	prov.mu.Unlock()
	if r := m.Delegate(t.Context(), Params{Description: "d", Prompt: "three", Continue: id1}); r.IsError {
		t.Errorf("the refused continuation left its child busy: %+v", r)
	}
}
