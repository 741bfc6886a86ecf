// Package batch runs many independent tasks (`reins batch FILE.jsonl`,
// docs/batch.md): it reads the task file within fixed bounds, runs the
// tasks with a parallelism limit through a run function (one child run
// each, under the subagent result contract), and writes one result line
// per task in input order, so that a results file cut by a kill is a
// prefix that --resume continues. Workspaces (internal/batchrun) is that
// run function for reins: each task a child of its workspace's batch
// session. The command keeps its flags, its signals and its exit statuses.
package batch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
)

// Bounds of a task file: a line (one task) and the number of tasks.
const (
	MaxLineBytes = 1 << 20
	MaxTasks     = 100_000
	// MaxIDBytes bounds a task id, which is echoed into the results.
	MaxIDBytes = 256
)

// Task is one line of the task file.
type Task struct {
	// ID names the task in the results; a line without one gets its line
	// number.
	ID     string `json:"id"`
	Prompt string `json:"prompt"`
	// Agent is an agent-definition name (empty: general).
	Agent string `json:"agent,omitempty"`
	// Cwd is the task's workspace, relative to the batch's (empty: the
	// batch's).
	Cwd string `json:"cwd,omitempty"`
}

// Result is one line of the results.
type Result struct {
	ID string `json:"id"`
	// SessionID is the task's session (reins log SESSION shows it); empty
	// when the task never started one.
	SessionID  string             `json:"sessionId,omitempty"`
	StopReason outcome.StopReason `json:"stopReason"`
	Output     string             `json:"output"`
	Diagnostic string             `json:"diagnostic,omitempty"`
	Usage      llm.Usage          `json:"usage"`
}

// FromSubagent is the result line of a settled child run.
func FromSubagent(id string, r outcome.Result) Result {
	r = outcome.Settle(r)
	return Result{ID: id, StopReason: r.StopReason, Output: llm.BlocksText(r.Output), Diagnostic: r.Diagnostic, Usage: r.Usage}
}

// LineError is a bad task line; the batch does not start.
type LineError struct {
	Line int
	Msg  string
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// ReadTasks reads a task file: one JSON object per line, blank lines
// skipped. It refuses, naming the line, an unknown key, a missing prompt,
// a duplicate or oversized id, a line over MaxLineBytes and more than
// MaxTasks tasks.
func ReadTasks(r io.Reader) ([]Task, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var tasks []Task
	seen := map[string]int{}
	for n := 1; ; n++ {
		line, err := readLine(br)
		if err == errLong {
			return nil, &LineError{n, fmt.Sprintf("longer than %d bytes", MaxLineBytes)}
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			var t Task
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.DisallowUnknownFields()
			if derr := dec.Decode(&t); derr != nil {
				return nil, &LineError{n, "want a JSON object {id, prompt, agent?, cwd?}: " + derr.Error()}
			}
			if dec.More() {
				return nil, &LineError{n, "more than one JSON value"}
			}
			if strings.TrimSpace(t.Prompt) == "" {
				return nil, &LineError{n, "no prompt"}
			}
			if t.ID == "" {
				t.ID = strconv.Itoa(n)
			}
			if len(t.ID) > MaxIDBytes {
				return nil, &LineError{n, fmt.Sprintf("id longer than %d bytes", MaxIDBytes)}
			}
			if first, dup := seen[t.ID]; dup {
				return nil, &LineError{n, fmt.Sprintf("id %q already used on line %d", t.ID, first)}
			}
			seen[t.ID] = n
			if len(tasks) == MaxTasks {
				return nil, &LineError{n, fmt.Sprintf("more than %d tasks", MaxTasks)}
			}
			tasks = append(tasks, t)
		}
		if err == io.EOF {
			return tasks, nil
		}
	}
}

var errLong = errors.New("line too long")

// readLine reads one line without its newline, refusing one longer than
// MaxLineBytes without buffering more than that.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxLineBytes+1 {
			return nil, errLong
		}
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil:
			return bytes.TrimSuffix(line, []byte("\n")), nil
		default:
			return line, err
		}
	}
}

// Finished reads an earlier results file for --resume: the ids of its
// complete lines, and the length of the good prefix. A last line cut by
// a kill (no newline, or not a result) is not finished: the caller
// truncates the file to good and runs that task again.
func Finished(r io.Reader) (done map[string]bool, good int64, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	done = map[string]bool{}
	for {
		line, err := readLine(br)
		if err == errLong {
			return done, good, nil // a torn or foreign tail: stop here
		}
		if err != nil && err != io.EOF {
			return nil, 0, err
		}
		if err == io.EOF {
			// A last line without its newline was being written.
			return done, good, nil
		}
		var res Result
		if json.Unmarshal(line, &res) != nil || res.ID == "" || res.StopReason == "" {
			return done, good, nil
		}
		done[res.ID] = true
		good += int64(len(line)) + 1
	}
}

// Options configure Run.
type Options struct {
	// Parallel is the most tasks running at once (at least 1).
	Parallel int
	// Progress, when set, is called after each task with the counts so far.
	Progress func(p Progress)
}

// Progress counts a batch's tasks.
type Progress struct {
	Done, Total, Failed int
}

// RunFunc runs one task to its settled result. It is called from several
// goroutines at once.
type RunFunc func(ctx context.Context, t Task) Result

// Run runs tasks, at most opts.Parallel at once, and writes each result
// to out as one line in input order, as soon as it and every earlier one
// are done. So that the results waiting for a slow early task stay
// bounded, a task starts only while it is within a window of 4×Parallel
// (at least 64) of the first unwritten one. When ctx ends (the batch is
// interrupted), no new task starts and nothing more is written: the
// running tasks are cancelled as by their parent, and a result the
// interruption cut short is not a result, so --resume runs those tasks
// again. Run returns ctx's error then.
func Run(ctx context.Context, tasks []Task, out io.Writer, opts Options, run RunFunc) error {
	par := max(opts.Parallel, 1)
	window := max(4*par, 64)
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		results = make([]*Result, len(tasks))
		next    int // first unwritten
		werr    error
		prog    = Progress{Total: len(tasks)}
	)
	// The writer: the one goroutine that writes out, in order.
	flush := func() {
		for next < len(tasks) && results[next] != nil && werr == nil && ctx.Err() == nil {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false) // outputs are code: keep <, > and & readable
			err := enc.Encode(results[next])
			if err == nil {
				// One write per line: a kill leaves whole lines and at
				// most one torn tail (Finished).
				_, err = out.Write(b.Bytes())
			}
			if err != nil {
				werr = err
			}
			results[next] = nil
			next++
		}
	}
	// A waiter in the window loop must see ctx end.
	stopWake := context.AfterFunc(ctx, func() {
		mu.Lock()
		cond.Broadcast()
		mu.Unlock()
	})
	defer stopWake()
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i := range tasks {
		mu.Lock()
		for i-next >= window && werr == nil && ctx.Err() == nil {
			cond.Wait()
		}
		stop := werr != nil || ctx.Err() != nil
		mu.Unlock()
		if stop {
			break
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r := run(ctx, tasks[i])
			r.ID = tasks[i].ID
			mu.Lock()
			results[i] = &r
			prog.Done++
			if r.StopReason != outcome.StopCompleted {
				prog.Failed++
			}
			flush()
			cond.Broadcast()
			if opts.Progress != nil {
				opts.Progress(prog)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if werr != nil {
		return werr
	}
	if next < len(tasks) {
		return ctx.Err()
	}
	return nil
}
