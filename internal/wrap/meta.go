package wrap

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/reinsdev/reins/internal/smallfile"
)

// Meta describes one child run: the META.json of `reins wrap` (docs/wrap.md).
// The first block is docs/wrap.md's; the second is reins's own additions, all
// optional, that say how to build the child's command line.
type Meta struct {
	RunID          string `json:"runId"`
	Mode           string `json:"mode,omitempty"`
	Agent          string `json:"agent,omitempty"`
	AgentSource    string `json:"agentSource,omitempty"`
	Task           string `json:"task"`
	Cwd            string `json:"cwd,omitempty"`
	RequestedModel string `json:"requestedModel,omitempty"`
	ResolvedModel  string `json:"resolvedModel,omitempty"`
	StartedAt      string `json:"startedAt,omitempty"`
	SessionPath    string `json:"sessionPath,omitempty"`
	// PiSession, when set, is pi's own session file: pi runs with
	// --session FILE instead of --no-session, so a later run with the same
	// file continues the conversation (a continued subagent).
	PiSession        string `json:"piSession,omitempty"`
	EventsPath       string `json:"eventsPath"`
	ResultPath       string `json:"resultPath"`
	StdoutPath       string `json:"stdoutPath"`
	StderrPath       string `json:"stderrPath"`
	TranscriptPath   string `json:"transcriptPath"`
	SystemPromptPath string `json:"systemPromptPath,omitempty"`

	// Command is the child executable, looked up on the child's PATH
	// unless it contains a slash (default "pi").
	Command string `json:"command,omitempty"`
	// Tools is pi's tool allowlist: absent (null) leaves pi's defaults, an
	// empty list means no tools.
	Tools []string `json:"tools"`
	// Args are extra arguments placed after reins's flags and before the
	// task (an agent definition's args).
	Args []string `json:"args,omitempty"`
}

// MaxMetaBytes bounds META.json: it holds the task text, which is far
// smaller; a larger file is refused, as is anything but a regular file.
const MaxMetaBytes = 64 << 20

// LoadMeta reads and checks a META.json file.
func LoadMeta(path string) (Meta, error) {
	data, err := smallfile.Read(path, MaxMetaBytes)
	if err != nil {
		return Meta{}, err
	}
	var m Meta
	if err := json.Unmarshal(data, &m); err != nil {
		return Meta{}, fmt.Errorf("%s: not a META.json: %w", path, err)
	}
	if err := m.Validate(); err != nil {
		return Meta{}, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Validate checks that every artifact path is set: a run whose result has
// nowhere to go must not start.
func (m Meta) Validate() error {
	var missing []string
	for _, f := range []struct{ name, v string }{
		{"resultPath", m.ResultPath}, {"eventsPath", m.EventsPath}, {"stdoutPath", m.StdoutPath},
		{"stderrPath", m.StderrPath}, {"transcriptPath", m.TranscriptPath},
	} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return errors.New("META.json lacks " + strings.Join(missing, ", "))
	}
	return nil
}

// DefaultCommand is the child executable when Meta.Command is empty.
const DefaultCommand = "pi"

// maxArgTask bounds a task passed as an argument; Linux refuses a single
// argument over 128 KiB (MAX_ARG_STRLEN).
const maxArgTask = 100 << 10

// CommandLine is the child's arguments (after the executable) and, when the
// task cannot travel as an argument, the text for its stdin:
//
//	--mode json -p (--no-session | --session FILE) [--model M] [--tools a,b | --no-tools]
//	[--append-system-prompt FILE] [ARGS...] TASK
//
// pi reads an argument starting with "-" as a flag and one starting with
// "@" as a file to attach, and Linux caps one argument at 128 KiB; such a
// task goes to pi's stdin instead, which pi's print mode reads whole and
// puts first in the prompt. The system prompt is passed as its file, which
// pi reads (it would take a path that does not exist as literal text, so
// a missing file is left out).
func (m Meta) CommandLine() (args []string, stdin string) {
	args = []string{"--mode", "json", "-p", "--no-session"}
	if m.PiSession != "" {
		args = []string{"--mode", "json", "-p", "--session", m.PiSession}
	}
	model := m.ResolvedModel
	if model == "" {
		model = m.RequestedModel
	}
	if model != "" {
		args = append(args, "--model", model)
	}
	if m.Tools != nil {
		if len(m.Tools) == 0 {
			args = append(args, "--no-tools")
		} else {
			args = append(args, "--tools", strings.Join(m.Tools, ","))
		}
	}
	if m.SystemPromptPath != "" {
		if fi, err := os.Stat(m.SystemPromptPath); err == nil && fi.Mode().IsRegular() {
			args = append(args, "--append-system-prompt", m.SystemPromptPath)
		}
	}
	args = append(args, m.Args...)
	if taskAsArg(m.Task) {
		args = append(args, m.Task)
	} else {
		stdin = m.Task
	}
	return args, stdin
}

func taskAsArg(task string) bool {
	return task != "" && len(task) <= maxArgTask &&
		!strings.HasPrefix(task, "-") && !strings.HasPrefix(task, "@") && !strings.ContainsRune(task, 0)
}
