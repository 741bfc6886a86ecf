// Package sdkfake is a scripted fake reins SDK runtime for tests, and a
// check that tests leave no process behind. A test binary becomes the fake
// when EnvScenario is set (its TestMain, or an init function, calls Main
// first), so failure paths run in a real child process over real pipes.
package sdkfake

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/sdk"
)

// Environment variables that control the fake.
const (
	// EnvScenario selects the behaviour (the Scenario* constants, or
	// "turn:<reason>": a normal run whose turn ends with that reason;
	// "turn:missing" sends no turn/end, "turn:aborted-disposed" an aborted
	// turn by "disposed", "turn:weird" an unknown reason).
	EnvScenario = "REINS_FAKE_SDK"
	// EnvCanary is a secret the fake writes to its stderr, into its error
	// messages and into protocol payloads that are not output.
	EnvCanary = "REINS_FAKE_CANARY"
	// EnvGrandchild "1" makes the fake spawn a grandchild that sleeps,
	// holding the fake's stdout and stderr open.
	EnvGrandchild = "REINS_FAKE_GRANDCHILD"
	// EnvStubborn "1" makes the fake ignore SIGTERM, stdin EOF and
	// shutdown: only SIGKILL ends it.
	EnvStubborn = "REINS_FAKE_STUBBORN"
	// EnvText is the text the fake streams and answers (default
	// "partial answer").
	EnvText = "REINS_FAKE_TEXT"
	// EnvMark is the variable tests put in a child's environment to find
	// it (and its descendants) in /proc afterwards.
	EnvMark = "REINS_TEST_MARK"
)

// Scenarios.
const (
	ScenarioExitBeforeInit = "exit-before-init" // exits 5 before reading anything
	ScenarioMalformedInit  = "malformed-init"   // answers initialize with a line that is not JSON
	ScenarioErrorInit      = "error-init"       // answers initialize with a JSON-RPC error
	ScenarioHangInit       = "hang-init"        // never answers initialize
	ScenarioHangPrompt     = "hang-prompt"      // never answers session/prompt
	ScenarioErrorPrompt    = "error-prompt"     // answers session/prompt with a JSON-RPC error
	ScenarioHangRun        = "hang-run"         // accepts the prompt, streams text, then nothing
	ScenarioCrashExit      = "crash-exit"       // streams text, then exits 3
	ScenarioCrashSignal    = "crash-signal"     // streams text, then SIGKILLs itself
	ScenarioUsageOnly      = "usage-only"       // streams text, then an empty usage-only message and max-tokens
	ScenarioMalformedRun   = "malformed-run"    // streams text, then a line that is not JSON
	ScenarioLogAheadCrash  = "log-ahead-crash"  // logs more text than it streams, then exits 3
	ScenarioGrandchild     = "grandchild"       // (internal) the sleeping grandchild
)

// Active reports whether this process is to be the fake.
func Active() bool { return os.Getenv(EnvScenario) != "" }

// Main runs the fake; it never returns.
func Main() {
	scenario := os.Getenv(EnvScenario)
	if scenario == ScenarioGrandchild {
		time.Sleep(time.Hour)
		os.Exit(0)
	}
	f := &fake{scenario: scenario, canary: os.Getenv(EnvCanary), stubborn: os.Getenv(EnvStubborn) == "1", text: os.Getenv(EnvText)}
	if f.text == "" {
		f.text = "partial answer"
	}
	if f.canary != "" {
		fmt.Fprintf(os.Stderr, "fake runtime: secret %s\n", f.canary)
	}
	if f.stubborn {
		signal.Ignore(syscall.SIGTERM)
	}
	if os.Getenv(EnvGrandchild) == "1" {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), EnvScenario+"="+ScenarioGrandchild)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fake runtime: grandchild:", err)
			os.Exit(9)
		}
	}
	if scenario == ScenarioExitBeforeInit {
		os.Exit(5)
	}
	f.serve()
}

type fake struct {
	scenario string
	canary   string
	stubborn bool
	text     string
	seq      int64
}

func (f *fake) hang() {
	for {
		time.Sleep(time.Hour)
	}
}

func (f *fake) write(v any) {
	b, _ := json.Marshal(v)
	os.Stdout.Write(append(b, '\n'))
}

func (f *fake) reply(id json.RawMessage, result any) {
	raw, _ := json.Marshal(result)
	f.write(sdk.Response{JSONRPC: "2.0", ID: id, Result: raw})
}

func (f *fake) replyErr(id json.RawMessage, code int, msg string) {
	f.write(sdk.Response{JSONRPC: "2.0", ID: id, Error: &sdk.RPCError{Code: code, Message: msg, Data: json.RawMessage(strconv.Quote(f.canary))}})
}

func (f *fake) notify(method string, params any) {
	raw, _ := json.Marshal(params)
	f.write(sdk.Request{JSONRPC: "2.0", Method: method, Params: raw})
}

const sessionID = "fake-session"

func (f *fake) event(typ string, data any) {
	raw, _ := json.Marshal(data)
	f.notify(sdk.NotifySessionEvent, sdk.SessionEventParams{SessionID: sessionID, Event: sdk.Event{Type: typ, Seq: f.seq, Time: time.Unix(0, 0).UTC(), Data: raw}})
	f.seq++
}

// LoggedTail is the text ScenarioLogAheadCrash logs but never streams.
const LoggedTail = " (logged, never streamed)"

func (f *fake) logAhead() {
	home := os.Getenv("REINS_HOME")
	// A continuation's log exists: this run appends to it.
	l, _, err := session.Reopen(filepath.Join(home, "sessions", sessionID, session.FileName), session.Options{})
	if errors.Is(err, fs.ErrNotExist) {
		l, err = session.Create(filepath.Join(home, "sessions"), session.Header{ID: sessionID, CreatedAt: time.Unix(0, 0).UTC(), Cwd: "/"}, session.Options{})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake runtime: log:", err)
		os.Exit(7)
	}
	l.Append(session.TypeTurnStart, session.TurnStart{Turn: 0})
	l.Append(session.TypeStepStart, session.StepStart{Turn: 0, Step: 0})
	l.Append(session.TypeAssistantChunk, session.AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Delta: f.text}})
	l.Append(session.TypeAssistantChunk, session.AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Delta: LoggedTail}})
	if err := l.Sync(); err != nil {
		fmt.Fprintln(os.Stderr, "fake runtime: log:", err)
		os.Exit(7)
	}
}

func (f *fake) serve() {
	fr := sdk.NewFrameReader(os.Stdin)
	for {
		line, err := fr.Next()
		if err != nil {
			if f.stubborn {
				f.hang()
			}
			os.Exit(0)
		}
		var r sdk.Request
		if json.Unmarshal(line, &r) != nil {
			continue
		}
		switch r.Method {
		case sdk.MethodInitialize:
			switch f.scenario {
			case ScenarioMalformedInit:
				os.Stdout.Write([]byte("this is {not json " + f.canary + "\n"))
			case ScenarioErrorInit:
				f.replyErr(r.ID, sdk.CodeInvalidParams, "initialize failed: "+f.canary)
			case ScenarioHangInit:
			default:
				f.reply(r.ID, sdk.InitializeResult{ProtocolVersion: sdk.ProtocolVersion, ServerInfo: sdk.ServerInfo{Name: "reins", Version: "fake " + f.canary}})
			}
		case sdk.MethodSessionPrompt:
			switch f.scenario {
			case ScenarioHangPrompt:
			case ScenarioErrorPrompt:
				f.replyErr(r.ID, sdk.CodeInternalError, "prompt failed: "+f.canary)
			default:
				f.reply(r.ID, sdk.PromptResult{SessionID: sessionID, MessageID: "msg-1"})
				f.run()
			}
		case sdk.MethodSessionCancel:
			f.reply(r.ID, struct{}{})
		case sdk.MethodShutdown:
			f.reply(r.ID, struct{}{})
			if !f.stubborn {
				os.Exit(0)
			}
		default:
			if len(r.ID) > 0 {
				f.replyErr(r.ID, sdk.CodeMethodNotFound, "method not found")
			}
		}
	}
}

// run plays the scenario's run after the prompt receipt.
func (f *fake) run() {
	f.notify(sdk.NotifySessionStatus, sdk.SessionStatusParams{SessionID: sessionID, Status: sdk.StatusRunning, MessageID: "msg-1"})
	f.event(session.TypeTurnStart, session.TurnStart{Turn: 0})
	f.event(session.TypeStepStart, session.StepStart{Turn: 0, Step: 0})
	if f.canary != "" {
		// Protocol payloads that are not output: a tool call's arguments and
		// a notification nobody knows.
		f.event(session.TypeToolCall, session.ToolCall{CallID: "c1", Name: "read", Arguments: `{"path":"` + f.canary + `"}`})
		f.notify("fake/debug", map[string]string{"secret": f.canary})
	}
	f.event(session.TypeAssistantChunk, session.AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Delta: f.text}})
	switch f.scenario {
	case ScenarioHangRun:
		return
	case ScenarioCrashExit:
		os.Exit(3)
	case ScenarioLogAheadCrash:
		// Killed between writing an event and streaming it: the log in
		// $REINS_HOME holds one chunk more than the parent heard.
		f.logAhead()
		os.Exit(3)
	case ScenarioCrashSignal:
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		f.hang()
	case ScenarioMalformedRun:
		os.Stdout.Write([]byte("{\"jsonrpc\": \"2.0\", " + f.canary + "\n"))
		return
	case ScenarioUsageOnly:
		f.event(session.TypeAssistantMessage, session.AssistantMessage{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{}}, Usage: &llm.Usage{InputTokens: 7, OutputTokens: 9}})
		f.event(session.TypeStepEnd, session.StepEnd{})
		f.turnEnd(session.TurnEnd{Reason: session.ReasonMaxTokens, Usage: &llm.Usage{InputTokens: 7, OutputTokens: 9}})
		f.idle(session.ReasonMaxTokens)
		return
	}
	reason, ok := strings.CutPrefix(f.scenario, "turn:")
	if !ok {
		fmt.Fprintln(os.Stderr, "fake runtime: unknown scenario", f.scenario)
		os.Exit(8)
	}
	f.event(session.TypeAssistantMessage, session.AssistantMessage{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: f.text}}}})
	f.event(session.TypeStepEnd, session.StepEnd{})
	end := session.TurnEnd{Reason: session.EndReason(reason), Usage: &llm.Usage{InputTokens: 3, OutputTokens: 4}}
	switch reason {
	case "missing":
		f.idle("")
		return
	case "aborted-disposed":
		end.Reason, end.By = session.ReasonAborted, "disposed"
	case "error":
		end.Failure = &session.Failure{Code: "SERVER", Message: "upstream said " + f.canary}
	case "weird":
		end.Reason = session.EndReason("weird-" + f.canary)
	}
	f.turnEnd(end)
	f.idle(end.Reason)
}

func (f *fake) turnEnd(end session.TurnEnd) { f.event(session.TypeTurnEnd, end) }

func (f *fake) idle(reason session.EndReason) {
	f.notify(sdk.NotifySessionStatus, sdk.SessionStatusParams{SessionID: sessionID, Status: sdk.StatusIdle, MessageID: "msg-1", StopReason: string(reason)})
}

// Leftovers returns the live processes whose environment holds
// EnvMark=mark: a child or grandchild a test left behind.
func Leftovers(mark string) []int {
	want := []byte(EnvMark + "=" + mark + "\x00")
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !containsEntry(env, want) {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if i := strings.LastIndexByte(string(stat), ')'); i >= 0 {
				if f := strings.Fields(string(stat[i+1:])); len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
					continue
				}
			}
		}
		out = append(out, pid)
	}
	return out
}

func containsEntry(env, entry []byte) bool {
	s, e := string(env), string(entry)
	return strings.HasPrefix(s, e) || strings.Contains(s, "\x00"+e)
}

// NewMark returns a mark unique to this process and name.
func NewMark(name string) string {
	return fmt.Sprintf("%d-%s-%d", os.Getpid(), strings.NewReplacer("/", "_", " ", "_").Replace(name), time.Now().UnixNano())
}
