// Package view is reins view: a local page that shows a session's
// delegation tree, a timeline of its steps, model requests, tool calls and
// children, and the conversation of any session in the tree, following a
// running session live (server-sent events tailing its logs); and the
// export of the same page as one self-contained HTML file.
//
// Everything shown comes from session logs, which hold model-, tool- and
// child-written text: the page builds its DOM with textContent only, and a
// strict Content-Security-Policy allows no script but its own.
package view

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
)

// State is where a node of the tree is.
type State string

const (
	// StateRunning: the session's log is held by a live reins, or the
	// child has no subagent/end while its parent runs.
	StateRunning State = "running"
	// StateEnded: the run ended; StopReason says how.
	StateEnded State = "ended"
	// StateLost: a child without subagent/end whose parent no longer
	// runs: the parent was killed before the child settled.
	StateLost State = "lost"
)

// Bounds of what the view reads and sends: a tree of more nodes or depth is
// cut (Node.Cut says where), texts are clipped (Item.Truncated).
const (
	maxNodes     = 5000
	maxDepth     = 32
	maxItems     = 5000
	maxSpans     = 5000
	maxText      = 32 << 10
	maxAnswer    = 4 << 10
	maxTails     = 8192
	maxEventData = 4 << 10
)

// Node is one session or child run of a delegation tree.
type Node struct {
	// Key is unique in the tree: the session id, or parent/runId for a
	// child that keeps no reins session (acp, pi).
	Key        string     `json:"key"`
	Session    string     `json:"session,omitempty"`
	RunID      string     `json:"runId,omitempty"`
	Label      string     `json:"label,omitempty"`
	Agent      string     `json:"agent,omitempty"`
	Provider   string     `json:"provider,omitempty"`
	Model      string     `json:"model,omitempty"`
	Cwd        string     `json:"cwd,omitempty"`
	State      State      `json:"state"`
	StopReason string     `json:"stopReason,omitempty"`
	By         string     `json:"by,omitempty"`
	Failure    string     `json:"failure,omitempty"` // code of the last turn's failure
	Diagnostic string     `json:"diagnostic,omitempty"`
	Answer     string     `json:"answer,omitempty"` // the selected output, clipped
	Usage      *llm.Usage `json:"usage,omitempty"`
	Start      time.Time  `json:"start"`
	End        *time.Time `json:"end,omitempty"`
	// DurationMs is a child's run as its parent timed it (subagent/end),
	// a root session's time spent in turns (session.Tally); TurnMs is each
	// turn's time, of a node with a session.
	DurationMs int64   `json:"durationMs,omitempty"`
	TurnMs     []int64 `json:"turnMs,omitempty"`
	Turns      int     `json:"turns,omitempty"`
	Background bool    `json:"background,omitempty"`
	JobID      string  `json:"jobId,omitempty"`
	JobStatus  string  `json:"jobStatus,omitempty"`
	Continues  string  `json:"continues,omitempty"`
	// Branch is an isolated child's branch, reins/<child-id>, and
	// Worktree its result's worktree line (what changed, whether it
	// merges): `isolation: worktree`, docs/subagents.md.
	Branch   string `json:"branch,omitempty"`
	Worktree string `json:"worktree,omitempty"`
	// Problem is a fixed text when the node's log could not be read or
	// the tree was cut here.
	Problem  string  `json:"problem,omitempty"`
	Children []*Node `json:"children,omitempty"`
}

// Tree is one session with its whole delegation tree.
type Tree struct {
	Root *Node `json:"root"`
	// Versions is the bytes read of every session log in the tree: a
	// session whose number changed has new events.
	Versions map[string]int64 `json:"versions"`
	Nodes    int              `json:"nodes"`
}

// Reader reads the sessions of one sessions directory for the view. It
// keeps a session.Tail per log, so following a running tree reads only
// what was appended. It is safe for concurrent use.
type Reader struct {
	root  string
	mu    sync.Mutex
	tails map[string]*session.Tail
}

// NewReader returns a Reader of the sessions directory root.
func NewReader(root string) *Reader {
	return &Reader{root: root, tails: map[string]*session.Tail{}}
}

// ErrNoSession is returned for an id that names no readable session.
var ErrNoSession = errors.New("no such session")

func (r *Reader) path(id string) string { return filepath.Join(r.root, id, session.FileName) }

// logged is a session's log as read: its tail, and a fixed text when the
// log has a corrupt line (what comes after it is not shown).
type logged struct {
	*session.Tail
	problem string
}

const corruptProblem = "the log has a corrupt line; what follows it is not shown"

// tail returns the session's tail, polled. Called with r.mu held.
func (r *Reader) tail(id string) (logged, error) {
	if !session.ValidID(id) {
		return logged{}, ErrNoSession
	}
	t := r.tails[id]
	if t == nil {
		if len(r.tails) >= maxTails {
			clear(r.tails)
		}
		t = session.NewTail(r.path(id), true)
		r.tails[id] = t
	}
	l := logged{Tail: t}
	if _, err := t.Poll(); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			delete(r.tails, id)
			return logged{}, ErrNoSession
		}
		var ce *session.CorruptError
		if !errors.As(err, &ce) || t.Header.ID == "" {
			return logged{}, err
		}
		l.problem = corruptProblem // show what came before it
	}
	if t.Header.ID == "" {
		return logged{}, ErrNoSession // the header is not complete yet
	}
	return l, nil
}

// Tree reads the session id and every child session below it.
func (r *Reader) Tree(id string) (*Tree, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, err := r.tail(id)
	if err != nil {
		return nil, err
	}
	b := &treeBuilder{r: r, tree: &Tree{Versions: map[string]int64{}}, seen: map[string]bool{}}
	n := &Node{Key: id, Session: id, Start: t.Header.CreatedAt}
	b.tree.Nodes = 1
	b.session(n, t, writerAlive(t.Path()), 0)
	b.tree.Root = n
	return b.tree, nil
}

type treeBuilder struct {
	r    *Reader
	tree *Tree
	seen map[string]bool
}

// session fills n from the log t: its header, its own end, and a child
// node per subagent/start. alive says whether the session's writer is
// alive, which decides whether an unsettled child is running or lost.
func (b *treeBuilder) session(n *Node, t logged, alive func() bool, depth int) {
	// Keyed by the directory's name, which is how the page asks for a
	// session, whatever id the header claims.
	b.seen[n.Session] = true
	b.tree.Versions[n.Session] = t.Offset()
	if t.problem != "" {
		n.Problem = t.problem
	}
	h := t.Header
	if h.Model != "" {
		n.Model = h.Provider + "/" + h.Model
	}
	if n.Agent == "" {
		n.Agent = h.Agent
	}
	if n.Provider == "" {
		n.Provider = h.Provider
	}
	n.Cwd = h.Cwd
	p := session.PictureOf(h, t.Events)
	nodes := map[*session.Run]*Node{}
	for _, e := range p.Entries {
		if e.Run == nil {
			continue
		}
		switch d := e.Payload.(type) {
		case session.SubagentStart:
			c := &Node{
				Key: n.Key + "/" + d.RunID, RunID: d.RunID, Label: d.Label, Agent: d.Agent, Provider: d.Provider,
				Background: d.Background, Continues: d.Continues, Branch: d.Branch, Start: e.Time, State: StateRunning,
			}
			n.Children = append(n.Children, c)
			nodes[e.Run] = c
			b.child(c, d.ChildSession, depth+1)
		case session.SubagentEnd:
			c := nodes[e.Run]
			end := e.Time
			c.End, c.State, c.StopReason, c.Diagnostic = &end, StateEnded, d.StopReason, d.Diagnostic
			c.DurationMs = d.DurationMs
			if c.DurationMs == 0 {
				c.DurationMs = end.Sub(c.Start).Milliseconds()
			}
			if d.Usage != nil {
				c.Usage = d.Usage
			}
			if d.LastAssistantMessage != nil {
				c.Answer, _ = clip(d.LastAssistantMessage.Text(), maxAnswer)
			}
			if d.Continues != "" {
				c.Continues = d.Continues
			}
			if d.Branch != "" {
				c.Branch = d.Branch
			}
			c.Worktree = d.Worktree
		case session.JobNotice:
			c := nodes[e.Run]
			c.JobID, c.JobStatus = d.JobID, d.Status
		}
	}
	n.Turns = p.Turns
	// The one usage and duration rule; an open turn counts its steps so
	// far: a running session's cost grows step by step.
	tally := &p.Tally
	if usage := tally.Usage(); !usage.IsZero() && n.Usage == nil {
		n.Usage = &usage
	}
	n.TurnMs = nil
	for i := range tally.Turns {
		n.TurnMs = append(n.TurnMs, tally.Turn(i).DurationMs())
	}
	for _, c := range n.Children {
		if c.State == StateRunning && !alive() && (c.Session == "" || !writerAlive(b.r.path(c.Session))()) {
			c.State = StateLost
		}
	}
	if n.RunID != "" {
		return // a child's end is its parent's subagent/end
	}
	running := alive()
	n.State = StateEnded
	if running {
		n.State = StateRunning
	}
	switch {
	case p.Open && running: // in its turn
	case p.Open:
		n.StopReason = string(session.ReasonInterrupted) // repaired like session.Load
	case n.Turns > 0:
		n.StopReason, n.By = string(p.LastEnd.Reason), p.LastEnd.By
		if p.LastEnd.Failure != nil {
			n.Failure = string(p.LastEnd.Failure.Code)
		}
	}
	n.DurationMs = tally.DurationMs()
	if !running {
		end := p.LastTime
		n.End = &end
	}
}

// child reads the session of a child run into c, when it has one.
func (b *treeBuilder) child(c *Node, id string, depth int) {
	b.tree.Nodes++
	if id == "" {
		return // acp and pi children keep no reins session
	}
	if !session.ValidID(id) {
		c.Problem = "the child's session id is not valid"
		return
	}
	if b.seen[id] {
		// A continued child runs on in the session it had (or a log
		// names one twice): the session is read once, under its first
		// node, and never again, so no log can make the tree a loop.
		c.Session = id
		return
	}
	if depth > maxDepth || b.tree.Nodes > maxNodes {
		c.Problem = "the tree is cut here (too deep or too large)"
		return
	}
	t, err := b.r.tail(id)
	if err != nil {
		c.Problem = "the child's session log cannot be read"
		return
	}
	c.Session, c.Key = id, id
	b.session(c, t, writerAlive(t.Path()), depth)
}

// writerAlive asks, once and only when asked, whether a live reins holds
// the log at path: the question reads /proc/locks, and most nodes of a
// settled tree never need the answer.
func writerAlive(path string) func() bool {
	return sync.OnceValue(func() bool { return session.Writer(path) > 0 })
}

// clip cuts s to at most n bytes on a rune boundary and reports whether it
// cut anything.
func clip(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// Summary is one root session of the listing.
type Summary struct {
	ID        string     `json:"id"`
	CreatedAt time.Time  `json:"createdAt"`
	Cwd       string     `json:"cwd,omitempty"`
	Agent     string     `json:"agent,omitempty"`
	Model     string     `json:"model,omitempty"`
	Turns     int        `json:"turns"`
	Last      string     `json:"last,omitempty"`
	Prompt    string     `json:"prompt,omitempty"`
	Usage     *llm.Usage `json:"usage,omitempty"`
	// DurationMs is the time spent in turns (session.Tally).
	DurationMs int64  `json:"durationMs,omitempty"`
	Children   int    `json:"children"`
	Running    bool   `json:"running,omitempty"`
	Problem    string `json:"problem,omitempty"`
}

// maxListed bounds the listing: the newest root sessions.
const maxListed = 500

// List returns the root sessions of the directory, newest first, each with
// the number of sessions below it.
func (r *Reader) List() ([]Summary, error) {
	infos, err := session.Scan(r.root)
	if err != nil {
		return nil, err
	}
	parent := map[string]string{}
	for _, in := range infos {
		parent[in.Header.ID] = in.Header.ParentSession
	}
	// below counts every child in a tree, of any kind: the children each
	// of its sessions started (session.Info.Children), added to it and to
	// its ancestors. Counting child sessions instead missed ACP and pi
	// children, which keep none.
	below := map[string]int{}
	for _, in := range infos {
		below[in.Header.ID] += in.Children
		seen := 0
		for p := in.Header.ParentSession; p != "" && seen < maxDepth; p = parent[p] {
			if _, ok := parent[p]; !ok {
				break
			}
			below[p] += in.Children
			seen++
		}
	}
	out := []Summary{}
	for _, in := range infos {
		if p := in.Header.ParentSession; p != "" {
			if _, ok := parent[p]; ok {
				continue // listed under its root
			}
		}
		if len(out) == maxListed {
			break
		}
		s := Summary{ID: in.Header.ID, Children: below[in.Header.ID]}
		if in.Err != nil {
			s.Problem = "the session log cannot be read"
			out = append(out, s)
			continue
		}
		h := in.Header
		s.CreatedAt, s.Cwd, s.Agent, s.Turns, s.Last, s.DurationMs = h.CreatedAt, h.Cwd, h.Agent, in.Turns, string(in.Last), in.DurationMs
		if h.Model != "" {
			s.Model = h.Provider + "/" + h.Model
		}
		s.Prompt, _ = clip(strings.TrimSpace(in.Prompt), 300)
		if !in.Usage.IsZero() {
			u := in.Usage
			s.Usage = &u
		}
		s.Running = session.Writer(r.path(h.ID)) > 0
		out = append(out, s)
	}
	return out, nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// rawText is an event's data as text, for events the view does not know:
// compact JSON with its HTML characters as they are (the page shows text,
// never HTML), clipped.
func rawText(raw json.RawMessage) (string, bool) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return clip(string(raw), maxEventData)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return clip(string(raw), maxEventData)
	}
	return clip(strings.TrimSuffix(b.String(), "\n"), maxEventData)
}
