package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/proc"
)

const (
	// bgMaxJobs bounds the background commands of one session.
	bgMaxJobs = 16
	// bgKeep bounds the unread output a background command holds: past
	// it the oldest unread bytes are dropped, and bash_output says so.
	bgKeep = 256 << 10
)

// Shells are the background bash commands of one session (`bash` with
// background: true). The session owns it and calls Close at its end, which
// kills every command still running; each runs confined, in its own
// process group, like a foreground command.
type Shells struct {
	mu   sync.Mutex
	jobs map[string]*bgJob
	next int
	done bool
}

// NewShells returns an empty set of background commands.
func NewShells() *Shells { return &Shells{jobs: map[string]*bgJob{}} }

type bgJob struct {
	id, command string
	p           *proc.Process
	pipe        *os.File
	copied      chan struct{}

	mu      sync.Mutex
	unread  []byte
	dropped int64
}

func (j *bgJob) Write(b []byte) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.unread = append(j.unread, b...)
	if over := len(j.unread) - bgKeep; over > 0 {
		j.dropped += int64(over)
		j.unread = append(j.unread[:0], j.unread[over:]...)
	}
	return len(b), nil
}

// take returns the output since the last take and what was dropped.
func (j *bgJob) take() (string, int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	s, d := string(j.unread), j.dropped
	j.unread, j.dropped = nil, 0
	return s, d
}

// start runs command in the background under pol in dir.
func (s *Shells) start(pol sandbox.Policy, dir, command string) (*bgJob, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return nil, fmt.Errorf("the session is ending")
	}
	running := 0
	for _, j := range s.jobs {
		if !j.p.Exited() {
			running++
		}
	}
	if running >= bgMaxJobs {
		return nil, fmt.Errorf("%d background commands are running; stop one with bash_kill first", running)
	}
	cmd, err := sandbox.Command(pol, "bash", "-c", command)
	if err != nil {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, pw, pw
	p, err := proc.Start(cmd)
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, err
	}
	s.next++
	j := &bgJob{id: fmt.Sprintf("bash-%d", s.next), command: command, p: p, pipe: pr, copied: make(chan struct{})}
	go func() {
		defer close(j.copied)
		_, _ = io.Copy(j, pr)
	}()
	s.jobs[j.id] = j
	return j, nil
}

func (s *Shells) get(id string) (*bgJob, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	return j, ok
}

// ids lists the jobs, for an unknown-id message.
func (s *Shells) ids() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id := range s.jobs {
		out = append(out, id)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// kill stops j's whole process group and waits for its output to close.
func (j *bgJob) kill() {
	_ = j.p.Dispose(bashLadder)
	_ = j.p.Wait()
	j.pipe.Close() // a process that left the group may hold the write end
	<-j.copied
}

// Close kills every background command; later starts are refused.
func (s *Shells) Close() {
	s.mu.Lock()
	s.done = true
	jobs := slices.Collect(maps.Values(s.jobs))
	s.mu.Unlock()
	for _, j := range jobs {
		j.kill()
	}
}

// status is "running" or how the command ended.
func (j *bgJob) status() string {
	if !j.p.Exited() {
		return "running"
	}
	code, sig, ok := j.p.ExitStatus()
	switch {
	case !ok:
		return "exited"
	case sig != "":
		return "killed by " + sig
	}
	return fmt.Sprintf("exited with code %d", code)
}

// runBackground is bash with background: true.
func runBackground(env *Env, dir, command string) Result {
	if env.Shells == nil {
		return Errorf("background commands are not available in this session")
	}
	j, err := env.Shells.start(env.Policy(), dir, command)
	if err != nil {
		return Errorf("cannot start the background command: %v", osErr(err))
	}
	return Result{Content: fmt.Sprintf("started background command %s; read its output with bash_output {\"id\": %q}, stop it with bash_kill", j.id, j.id)}
}

// bgIDProperty is the parameter of bash_output and bash_kill.
const bgIDProperty = `"id": {"type": "string", "description": "The id bash returned, e.g. bash-1."}`

type bashOutputTool struct{}

var bashOutputSpec = lazy.Value[llm.ToolSpec]{New: func() llm.ToolSpec {
	return spec("bash_output",
		"Read what a background bash command (bash with background: true) printed since the last bash_output call, and whether it is still running.",
		[]string{"id"}, bgIDProperty)
}}

func (bashOutputTool) Spec() llm.ToolSpec { return bashOutputSpec.Get() }

func (bashOutputTool) Needs() Permission { return WorkspaceWrite }

func (bashOutputTool) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	j, res := bgLookup(env, raw)
	if j == nil {
		return res
	}
	st := j.status() // before taking, so output printed before an exit is in this answer
	if st != "running" {
		<-j.copied
	}
	out, dropped := j.take()
	var b strings.Builder
	if dropped > 0 {
		fmt.Fprintf(&b, "[%d earlier bytes were dropped: more than %d unread]\n", dropped, bgKeep)
	}
	// Head and tail within the result cap, as for a foreground command:
	// the newest lines and the status always reach the model.
	keep := env.OutputCap
	if keep <= 0 {
		keep = DefaultOutputCap
	}
	keep = max(keep-512, 256)
	ht := newHeadTail(keep/3, keep-keep/3)
	ht.Write([]byte(out))
	b.WriteString(ht.String())
	if out == "" {
		b.WriteString("[no new output]")
	}
	return Result{Content: joinOutput(b.String(), "["+j.id+" "+st+"]")}
}

type bashKillTool struct{}

var bashKillSpec = lazy.Value[llm.ToolSpec]{New: func() llm.ToolSpec {
	return spec("bash_kill",
		"Stop a background bash command and every process it started.",
		[]string{"id"}, bgIDProperty)
}}

func (bashKillTool) Spec() llm.ToolSpec { return bashKillSpec.Get() }

func (bashKillTool) Needs() Permission { return WorkspaceWrite }

func (bashKillTool) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	j, res := bgLookup(env, raw)
	if j == nil {
		return res
	}
	was := j.status()
	j.kill()
	if was != "running" {
		return Result{Content: j.id + " had already ended (" + was + ")"}
	}
	return Result{Content: j.id + " stopped"}
}

func bgLookup(env *Env, raw json.RawMessage) (*bgJob, Result) {
	var a struct {
		ID *string `json:"id"`
	}
	if err := decodeArgs(raw, &a, need{"id", &a.ID}); err != nil {
		return nil, Errorf("%v", err)
	}
	if env.Shells == nil {
		return nil, Errorf("background commands are not available in this session")
	}
	j, ok := env.Shells.get(*a.ID)
	if !ok {
		return nil, Errorf("no background command %q (have: %s)", *a.ID, env.Shells.ids())
	}
	return j, Result{}
}
