// Package acp is `reins acp`: reins as an Agent Client Protocol agent on
// stdio, for Zed and other ACP editors.
//
// Each ACP session is a reins session (its id is the reins session id, its
// log the usual event log). The session's events are streamed to the editor
// as session/update notifications as they are appended: text and reasoning
// chunks as agent_message_chunk and agent_thought_chunk, tool calls as
// tool_call / tool_call_update (pending → in_progress → completed or
// failed, edits as diffs), subagent runs as tool calls of their own. Tools
// that need more than read-only access ask the editor with
// session/request_permission. session/load replays a session from its log.
package acp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/mcpspec"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tool"
)

// Options configure the agent.
type Options struct {
	// Base is the harness of the directory reins acp was started in: its
	// home and host log serve the connection; each session gets a
	// harness of its own cwd (config and agent files are per workspace).
	Base *harness.Harness
	// ConfigFile is --config, applied to every session's configuration.
	ConfigFile string
	// Model is -m (empty: each workspace's configured default); BaseURL is
	// --base-url.
	Model, BaseURL string
	// Permission is every session's permission mode.
	Permission tool.Permission
	// MaxSteps bounds a turn's steps (0: the loop's default).
	MaxSteps int
	// Sandbox is --sandbox: on, off, or empty for the config's choice.
	Sandbox string
	// Version is reported as agentInfo.version.
	Version string
}

// Serve runs the agent on in/out until the editor closes the connection or
// ctx ends, then cancels running turns and closes every session's log.
func Serve(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	if opts.Base == nil {
		return errors.New("acp: no base harness")
	}
	if opts.Permission == "" {
		opts.Permission = tool.WorkspaceWrite
	}
	srv := &server{opts: opts, sessions: map[string]*acpSession{}, ready: make(chan struct{})}
	// The SDK's own framing stops for good at a line over 10 MiB; reins
	// frames the input itself (frames.go).
	lw := &lockedWriter{w: out}
	filtered, startFilter, stopFilter := filterFrames(in, lw)
	defer stopFilter()
	srv.conn = sdk.NewAgentSideConnection(srv, lw, filtered)
	log := &hostLog{h: opts.Base}
	srv.conn.SetLogger(slog.New(slog.NewTextHandler(log, nil)))
	startFilter()
	close(srv.ready)
	select {
	case <-srv.conn.Done():
	case <-ctx.Done():
	}
	srv.shutdown()
	log.stop()
	return nil
}

// hostLog sends the SDK's own log lines to the host log until Serve
// returns: the SDK may still log from its reader after that, when the
// caller is closing the harness.
type hostLog struct {
	h   *harness.Harness
	mu  sync.Mutex
	off bool
}

func (w *hostLog) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.off {
		w.h.Logf("acp sdk: %s", strings.TrimRight(string(b), "\n"))
	}
	return len(b), nil
}

func (w *hostLog) stop() {
	w.mu.Lock()
	w.off = true
	w.mu.Unlock()
}

type server struct {
	opts Options
	conn *sdk.AgentSideConnection
	// ready is closed once conn is set: the SDK starts reading before
	// its constructor returns, so a handler may run before that.
	ready chan struct{}
	seq   atomic.Uint64

	mu       sync.Mutex
	sessions map[string]*acpSession
	down     bool
}

var _ sdk.Agent = (*server)(nil)
var _ sdk.AgentLoader = (*server)(nil)

func (s *server) shutdown() {
	s.mu.Lock()
	s.down = true
	all := slices.Collect(maps.Values(s.sessions))
	s.sessions = map[string]*acpSession{}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, a := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.close()
		}()
	}
	wg.Wait()
}

func (s *server) session(id sdk.SessionId) (*acpSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.sessions[string(id)]
	if !ok {
		return nil, &sdk.RequestError{Code: -32002, Message: "Resource not found", Data: map[string]any{"error": "no such session in this connection"}}
	}
	return a, nil
}

// Initialize answers with protocol version 1 and what reins really offers:
// session/load and session/close, text and embedded-context prompts, MCP
// servers over stdio and http; no images, audio, sse servers or
// authentication.
func (s *server) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:         true,
			PromptCapabilities:  sdk.PromptCapabilities{EmbeddedContext: true},
			SessionCapabilities: sdk.SessionCapabilities{Close: &sdk.SessionCloseCapabilities{}},
			McpCapabilities:     sdk.McpCapabilities{Http: true},
		},
		AgentInfo:   &sdk.Implementation{Name: "reins", Title: sdk.Ptr("reins"), Version: s.opts.Version},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

func (s *server) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, sdk.NewInvalidParams(map[string]any{"error": "reins needs no authentication; it offers no auth methods"})
}

// checkSessionParams checks session/new's and session/load's cwd and
// turns the editor's MCP servers into reins's (editorServers).
func checkSessionParams(cwd string, servers []sdk.McpServer) ([]mcpspec.Server, error) {
	if !filepath.IsAbs(cwd) {
		return nil, sdk.NewInvalidParams(map[string]any{"error": "cwd must be an absolute path"})
	}
	return editorServers(servers)
}

// open builds the reins session behind an ACP session: a harness of cwd
// with the editor's MCP servers, the model, and the session with its
// observer, approval hook and tracked tools. resume names a session to
// reopen.
func (s *server) open(cwd, resume string, servers []mcpspec.Server) (*acpSession, error) {
	base := s.opts.Base
	h, err := harness.New(harness.Options{Home: base.Home, Cwd: cwd, ConfigFile: s.opts.ConfigFile, Getenv: base.Getenv})
	if err != nil {
		return nil, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if err := h.AddMCPServers(servers); err != nil {
		h.Close()
		return nil, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	h.HTTP, h.Now = base.HTTP, base.Now
	if s.opts.Sandbox != "" {
		h.Sandbox.Off = s.opts.Sandbox == "off"
	}
	if n := h.UntrustedNotice(); n != "" {
		h.Logf("acp: %s", n) // per session: each may be in another folder
	}
	m, err := h.ResolveModel(s.opts.Model, s.opts.BaseURL)
	var missing *config.MissingKeyError
	if errors.As(err, &missing) {
		// The editor learns of a missing key at its first prompt, with a
		// message naming the variable (reins's own text): the session
		// opens on a model that is never called.
		m, err = h.PlaceholderModel(s.opts.Model), nil
	}
	if err != nil {
		h.Close()
		return nil, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	a := newACPSession(s, h)
	a.missingKey, a.model = missing, m
	sess, err := h.NewSession(harness.SessionOptions{
		Model: m, MaxSteps: s.opts.MaxSteps, Permission: s.opts.Permission, Resume: resume,
		Observe: a.observe, Approve: a.approve,
	})
	if err != nil {
		h.Close()
		var ce *harness.ConfigError
		if errors.As(err, &ce) && errors.Is(err, harness.ErrNoSession) {
			return nil, &sdk.RequestError{Code: -32002, Message: "Resource not found", Data: map[string]any{"error": "no such session"}}
		}
		var inUse *session.InUseError
		if errors.As(err, &inUse) {
			// One writer per session: another reins (or another thread of
			// this one) has it open.
			return nil, sdk.NewInvalidRequest(map[string]any{"error": inUse.Error()})
		}
		h.Logf("acp: opening a session: %v", err)
		return nil, sdk.NewInternalError(map[string]any{"error": "the session could not be opened"})
	}
	a.s, a.id = sess, sess.Log.Header().ID
	a.track()
	return a, nil
}

func (s *server) register(a *acpSession) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return sdk.NewInternalError(map[string]any{"error": "the agent is shutting down"})
	}
	s.sessions[a.id] = a
	if u, ok := a.commandsUpdate(); ok {
		// Once the answer naming the session is on its way, as Claude
		// Code's ACP agent does: one notification, then the goroutine ends
		// (a closed connection makes it fail at once, logged).
		go a.send(u)
	}
	return nil
}

func (s *server) NewSession(_ context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	servers, err := checkSessionParams(p.Cwd, p.McpServers)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	limits, err := metaBudget(p.Meta)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	a, err := s.open(p.Cwd, "", servers)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	a.limits = limits.over(a.h.Config.Budget)
	if err := s.register(a); err != nil {
		a.close()
		return sdk.NewSessionResponse{}, err
	}
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(a.id)}, nil
}

// sessionID is the shape of a reins session id: it names a directory, so
// nothing else may pass.
// sessionID is compiled on first use: compiling it at start-up cost every
// reins command (not only `reins acp`) about 3 ms.
var sessionID = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
}}

// LoadSession reopens a session from its log and replays the conversation
// to the editor before answering.
func (s *server) LoadSession(_ context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	<-s.ready
	servers, err := checkSessionParams(p.Cwd, p.McpServers)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	id := string(p.SessionId)
	if !sessionID.Get().MatchString(id) || strings.Contains(id, "..") {
		return sdk.LoadSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": "not a reins session id"})
	}
	var events []session.Event
	a, err := s.session(p.SessionId)
	if err == nil { // open in this connection: replay what its log holds
		a.turnMu.Lock()
		a.s.Log.Flush()
		ld, lerr := session.Load(a.s.Log.Path())
		a.turnMu.Unlock()
		if lerr != nil {
			a.h.Logf("acp: loading session %s: %v", id, lerr)
			return sdk.LoadSessionResponse{}, sdk.NewInternalError(map[string]any{"error": "the session log could not be read"})
		}
		events = ld.Events
	} else {
		if _, serr := os.Stat(filepath.Join(s.opts.Base.SessionsDir(), id, session.FileName)); serr != nil {
			return sdk.LoadSessionResponse{}, &sdk.RequestError{Code: -32002, Message: "Resource not found", Data: map[string]any{"error": "no such session"}}
		}
		if a, err = s.open(p.Cwd, id, servers); err != nil {
			return sdk.LoadSessionResponse{}, err
		}
		if err := s.register(a); err != nil {
			a.close()
			return sdk.LoadSessionResponse{}, err
		}
		events = a.s.Resumed.Events
	}
	a.replay(events)
	return sdk.LoadSessionResponse{}, nil
}

// replay sends a log's conversation: user and assistant messages, tool
// calls with their results, subagent runs.
func (a *acpSession) replay(events []session.Event) {
	tr := newTranslator(a.h.Cwd, false)
	tr.parent = a.id
	var us []sdk.SessionUpdate
	for _, e := range events {
		us = append(us, tr.updates(e)...)
	}
	a.sendMu.Lock()
	defer a.sendMu.Unlock()
	a.sendLocked(us)
}

func (s *server) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	<-s.ready
	a, err := s.session(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	text := promptText(p.Prompt)
	if strings.TrimSpace(text) == "" {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"error": "the prompt has no text"})
	}
	if a.missingKey != nil {
		// ACP's "authentication required" code; the message names the
		// variable to set.
		msg := a.missingKey.Error() + "; set it in the environment reins acp starts in, or providers." + a.missingKey.Provider + ".apiKey in $REINS_HOME/config.yaml, then restart the agent"
		return sdk.PromptResponse{}, &sdk.RequestError{Code: -32000, Message: msg, Data: map[string]any{"code": "AUTH", "envVar": a.missingKey.EnvVar}}
	}
	return a.prompt(continueTrace(ctx, p.Meta), text)
}

// promptText flattens a prompt: text as is, embedded text resources as
// fenced blocks naming their URI, resource links as references. Images and
// audio are not offered in the capabilities and are skipped.
func promptText(blocks []sdk.ContentBlock) string {
	var b strings.Builder
	for _, c := range blocks {
		switch {
		case c.Text != nil:
			b.WriteString(c.Text.Text)
		case c.ResourceLink != nil:
			b.WriteString("@" + uriPath(c.ResourceLink.Uri))
		case c.Resource != nil && c.Resource.Resource.TextResourceContents != nil:
			r := c.Resource.Resource.TextResourceContents
			b.WriteString("\n<context ref=\"" + uriPath(r.Uri) + "\">\n" + r.Text + "\n</context>\n")
		}
	}
	return b.String()
}

func uriPath(u string) string { return strings.TrimPrefix(u, "file://") }

// Cancel needs nothing more: the SDK has already cancelled the running
// prompt's context, and the turn ends aborted (stop reason cancelled).
func (s *server) Cancel(context.Context, sdk.CancelNotification) error { return nil }

// CloseSession cancels the session's turn and closes its log.
func (s *server) CloseSession(_ context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	s.mu.Lock()
	a, ok := s.sessions[string(p.SessionId)]
	delete(s.sessions, string(p.SessionId))
	s.mu.Unlock()
	if !ok {
		return sdk.CloseSessionResponse{}, &sdk.RequestError{Code: -32002, Message: "Resource not found", Data: map[string]any{"error": "no such session in this connection"}}
	}
	a.close()
	return sdk.CloseSessionResponse{}, nil
}

func (s *server) ListSessions(context.Context, sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionList)
}

func (s *server) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionResume)
}

func (s *server) SetSessionConfigOption(context.Context, sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionSetConfigOption)
}

func (s *server) SetSessionMode(context.Context, sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	return sdk.SetSessionModeResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionSetMode)
}
