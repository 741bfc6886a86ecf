package netproxy

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"time"
)

// The question "allow HOST for this session?" (issue 26 item 3): in the
// interactive terminal a host outside sandbox.allowDomains is not refused
// at once; the proxy asks the user and the connection waits for the answer.
//
// Three parts, because the proxy runs in the supervisor (a process of its
// own, outside the sandbox) while the user is reins's:
//   - Server.Ask, the proxy's hook, asked for a host outside the list;
//   - Dialer's Ask, that hook in the supervisor: one request line to reins
//     over a Unix socket (ServeQuestions), one answer line back;
//   - Questions, in reins: the session's answers, held in memory (never
//     written to config), and the one question per host in flight.
//
// Every wait is bounded: AskTimeout from the proxy's side, the same bound
// and the departure of every waiter on reins's side, and the end of the
// run (the supervisor's Close, the session's). A host refused, not
// answered in time, or asked while nobody can answer gets the proxy's
// refusal line.

// AskTimeout bounds how long a connection waits for the user's answer.
const AskTimeout = 2 * time.Minute

// MaxQuestions bounds the questions open at once in a session: a process
// that tries many hosts at a time gets the others refused at once (not
// remembered), rather than a screen of questions to dismiss one by one.
const MaxQuestions = 4

// maxHost bounds a host name on the question socket (a DNS name is at
// most 253 bytes; an IPv6 literal far less).
const maxHost = 255

// Questions holds one session's answers about hosts outside the list and
// asks the user (Ask) at most once per host at a time: connections that
// want a host being asked about wait for that question's answer.
type Questions struct {
	// Ask asks the user whether host may be reached for the rest of the
	// session; it returns when answered or when ctx ends (false).
	Ask func(ctx context.Context, host string) bool

	once    sync.Once
	ctx     context.Context
	cancel  context.CancelFunc
	mu      sync.Mutex
	answers map[string]bool      // host → the user's answer, for the session
	pending map[string]*question // host → the question in flight
}

// question is one host's question in flight.
type question struct {
	done    chan struct{} // closed when answered or given up
	ok      bool          // the answer, set before done closes
	waiters int           // connections waiting; the last to leave cancels
	cancel  context.CancelFunc
}

func (q *Questions) init() {
	q.once.Do(func() {
		q.ctx, q.cancel = context.WithCancel(context.Background())
		q.answers = map[string]bool{}
		q.pending = map[string]*question{}
	})
}

// Decide reports whether host may be reached: the session's earlier
// answer, else the user's answer to a question (asked once for every
// connection that wants host meanwhile). A question not answered within
// AskTimeout, or abandoned by every connection that waited for it, or cut
// by Close, is a refusal that is not remembered.
func (q *Questions) Decide(ctx context.Context, host string) bool {
	q.init()
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" || q.Ask == nil {
		return false
	}
	q.mu.Lock()
	if ok, known := q.answers[host]; known {
		q.mu.Unlock()
		return ok
	}
	if q.ctx.Err() != nil {
		q.mu.Unlock()
		return false
	}
	qu := q.pending[host]
	if qu == nil && len(q.pending) >= MaxQuestions {
		q.mu.Unlock()
		return false
	}
	if qu == nil {
		qctx, cancel := context.WithTimeout(q.ctx, AskTimeout)
		qu = &question{done: make(chan struct{}), cancel: cancel}
		q.pending[host] = qu
		go q.ask(qctx, host, qu)
	}
	qu.waiters++
	q.mu.Unlock()

	select {
	case <-qu.done:
		return qu.ok
	case <-ctx.Done():
		q.mu.Lock()
		qu.waiters--
		if qu.waiters == 0 {
			// Nobody waits: take the question back; a later connection
			// asks afresh.
			qu.cancel()
			if q.pending[host] == qu {
				delete(q.pending, host)
			}
		}
		q.mu.Unlock()
		return false
	}
}

// ask puts one question and records the answer: a yes or a no the user
// gave holds for the session; a question that ended unanswered (its
// context) is forgotten, so the next connection asks again.
func (q *Questions) ask(ctx context.Context, host string, qu *question) {
	defer qu.cancel()
	ok := q.Ask(ctx, host)
	q.mu.Lock()
	defer q.mu.Unlock()
	if ctx.Err() == nil {
		q.answers[host] = ok
	} else {
		ok = false
	}
	qu.ok = ok
	if q.pending[host] == qu {
		delete(q.pending, host)
	}
	close(qu.done)
}

// Close ends every question in flight (a refusal) and refuses every later
// one: the session is over.
func (q *Questions) Close() {
	q.init()
	q.cancel()
}

// Answers and the question socket's protocol: the supervisor writes the
// host and a newline, reins answers one of these and a newline.
const (
	answerAllow  = "allow"
	answerRefuse = "refuse"
)

// ServeQuestions answers the supervisors' questions on ln with q until ln
// is closed; it returns (nil once ln is closed) when every connection has
// ended.
// A connection's question ends when the supervisor hangs up (its proxy
// gave up or ended) — reins never waits for an answer nobody will read.
func ServeQuestions(ln net.Listener, q *Questions) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	var mu sync.Mutex
	conns := map[net.Conn]struct{}{}
	defer func() {
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		mu.Lock()
		conns[c] = struct{}{}
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
				c.Close()
			}()
			answerOne(c, q)
		}()
	}
}

// answerOne reads one host from c and writes the decision.
func answerOne(c net.Conn, q *Questions) {
	_ = c.SetReadDeadline(time.Now().Add(headerTimeout))
	br := bufio.NewReaderSize(c, maxHost+2)
	line, err := br.ReadSlice('\n')
	if err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	host := strings.TrimSpace(string(line))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The supervisor sends nothing more: a read that returns means it hung
	// up (or the connection was closed here), and the question is moot.
	hungUp := make(chan struct{})
	go func() {
		defer close(hungUp)
		var b [1]byte
		_, _ = br.Read(b[:])
		cancel()
	}()
	defer func() {
		c.Close()
		<-hungUp
	}()
	ans := answerRefuse
	if validHost(host) && q.Decide(ctx, host) {
		ans = answerAllow
	}
	_, _ = c.Write([]byte(ans + "\n"))
}

// validHost accepts what the proxy can have parsed as a host: a DNS name or
// an IP literal — nothing that could carry other text into a question.
func validHost(h string) bool {
	if h == "" || len(h) > maxHost {
		return false
	}
	for _, r := range h {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r == '.', r == '-', r == '_', r == ':', r == '%':
		default:
			return false
		}
	}
	return true
}

// AskOver is Server.Ask for a proxy in another process than the user's
// reins: each question is one connection to reins's question socket at
// sock (ServeQuestions). ctx ending hangs up, which takes the question back.
func AskOver(sock string) func(ctx context.Context, host string) bool {
	return func(ctx context.Context, host string) bool {
		if !validHost(host) {
			return false
		}
		var d net.Dialer
		dctx, cancel := context.WithTimeout(ctx, DialTimeout)
		c, err := d.DialContext(dctx, "unix", sock)
		cancel()
		if err != nil {
			return false
		}
		defer c.Close()
		stop := context.AfterFunc(ctx, func() { c.Close() })
		defer stop()
		if _, err := c.Write([]byte(host + "\n")); err != nil {
			return false
		}
		line, err := bufio.NewReaderSize(c, 64).ReadString('\n')
		return err == nil && strings.TrimSpace(line) == answerAllow
	}
}
