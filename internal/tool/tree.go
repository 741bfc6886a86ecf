package tool

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/reinsdev/reins/internal/ignore"
)

// treeOpts say what a search walk skips.
type treeOpts struct {
	// hidden includes names starting with "." (never .git, see keepDir).
	hidden bool
	// noIgnore turns the ignore files off.
	noIgnore bool
	// keepDir, when set, lets a directory that is skipped by default
	// (.git, node_modules) be walked because the model named it.
	keepDir func(name string) bool
}

// dirH is an open directory of a walk: files in it are opened by their
// name relative to it (one openat beneath the workspace), not by path.
type dirH struct {
	root *os.Root // nil in full-access mode
	abs  string
}

func (d dirH) close() {
	if d.root != nil {
		d.root.Close()
	}
}

// open opens the entry name of d for reading, without blocking on a FIFO.
func (d dirH) open(name string) (*os.File, error) {
	if d.root != nil {
		return d.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	}
	return os.OpenFile(filepath.Join(d.abs, name), os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// stat is os.Stat of the entry name of d.
func (d dirH) stat(name string) (fs.FileInfo, error) {
	if d.root != nil {
		return d.root.Stat(name)
	}
	return os.Stat(filepath.Join(d.abs, name))
}

// readSmall reads the entry name of d when it is a regular file of at most
// limit bytes (an ignore file), else nil.
func (d dirH) readSmall(name string, limit int64) []byte {
	f, err := d.open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(f, limit))
	return b
}

// openDir opens the directory abs for a walk.
func (f *fsys) openDir(abs string) (dirH, error) {
	if f.root == nil {
		return dirH{abs: abs}, nil
	}
	r, err := f.rel(abs)
	if err != nil {
		return dirH{}, err
	}
	sub, err := f.root.OpenRoot(r)
	if err != nil {
		return dirH{}, err
	}
	return dirH{root: sub, abs: abs}, nil
}

// treeFile is one file a walk found.
type treeFile struct {
	dir  dirH
	name string
	abs  string
	// rel is the slash path below the walk's start.
	rel  string
	link bool
}

// maxIgnoreFile bounds an ignore file that is read.
const maxIgnoreFile = 1 << 20

// walkTree walks the directory start (absolute, inside the workspace in a
// confined mode) with several workers, as ripgrep does: hidden entries,
// .git and node_modules are skipped unless opts say otherwise, and the
// .ignore, .gitignore and .git/info/exclude rules apply (the last two only
// inside a git repository, like ripgrep). fn is called for each file, from
// several goroutines at once; a non-nil error from it stops the walk and is
// returned. Symlinked directories are not followed; symlinked files are
// passed with link set (opened beneath the workspace, so one pointing out
// of it fails to open). The walk stops after walkMaxEntries entries
// (errWalkBound) or when ctx is done.
func walkTree(ctx context.Context, fsy *fsys, start string, opts treeOpts, fn func(treeFile) error) error {
	stack, inGit := startRules(fsy, start, opts)
	w := &treeWalk{ctx: ctx, fsy: fsy, opts: opts, fn: fn, start: start}
	if base, err := fsy.rel(start); err == nil && base != "." {
		w.base = filepath.ToSlash(base)
	}
	w.cond = sync.NewCond(&w.mu)
	w.queue = append(w.queue, dirJob{abs: start, rel: "", stack: stack, inGit: inGit})
	w.pending = 1
	n := min(max(runtime.GOMAXPROCS(0), 2), 8)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.work()
		}()
	}
	// Wake the workers when ctx ends so none waits on the queue forever.
	stopWake := context.AfterFunc(ctx, func() { w.fail(ctx.Err()) })
	wg.Wait()
	stopWake()
	// A walk that stopped early leaves jobs queued: their parents'
	// directories are still open for them.
	releaseJobs(w.queue)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return w.err
}

type dirJob struct {
	abs, rel string
	stack    *ignore.Stack
	inGit    bool
	// parent, when set, is the open parent directory: the job opens its
	// directory by name from it (one openat beneath the workspace) rather
	// than resolving the whole path from the root again.
	parent *sharedDir
	name   string
}

// sharedDir is an open directory that its subdirectories' jobs still need;
// the last user closes it. The number open at once is bounded by the
// queue of pending directories, itself bounded by walkMaxEntries.
type sharedDir struct {
	d    dirH
	refs atomic.Int32
}

// releaseJobs gives up the parent directories of jobs that will not run.
func releaseJobs(js []dirJob) {
	for _, j := range js {
		if j.parent != nil {
			j.parent.release()
		}
	}
}

func (s *sharedDir) release() {
	if s.refs.Add(-1) == 0 {
		s.d.close()
	}
}

type treeWalk struct {
	ctx   context.Context
	fsy   *fsys
	opts  treeOpts
	fn    func(treeFile) error
	start string
	// base is start relative to the workspace (slash, "" for the root).
	base string

	entries atomic.Int64

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []dirJob
	pending int // directories queued or being read
	err     error
}

func (w *treeWalk) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.cond.Broadcast()
	w.mu.Unlock()
}

func (w *treeWalk) work() {
	for {
		w.mu.Lock()
		for len(w.queue) == 0 && w.pending > 0 && w.err == nil {
			w.cond.Wait()
		}
		if w.err != nil || len(w.queue) == 0 {
			w.mu.Unlock()
			return
		}
		j := w.queue[len(w.queue)-1]
		w.queue = w.queue[:len(w.queue)-1]
		w.mu.Unlock()

		subs, err := w.dir(j)
		w.mu.Lock()
		if err != nil && w.err == nil {
			w.err = err
		}
		w.queue = append(w.queue, subs...)
		w.pending += len(subs) - 1
		w.cond.Broadcast()
		w.mu.Unlock()
	}
}

// dir reads one directory: its files go to fn, its subdirectories are
// returned to be queued.
func (w *treeWalk) dir(j dirJob) ([]dirJob, error) {
	if err := w.ctx.Err(); err != nil {
		return nil, err
	}
	var d dirH
	var err error
	if j.parent != nil && j.parent.d.root != nil {
		var sub *os.Root
		sub, err = j.parent.d.root.OpenRoot(j.name)
		d = dirH{root: sub, abs: j.abs}
		j.parent.release()
	} else {
		if j.parent != nil {
			j.parent.release()
		}
		d, err = w.fsy.openDir(j.abs)
	}
	if err != nil {
		return nil, nil // unreadable directories are skipped
	}
	self := &sharedDir{d: d}
	self.refs.Store(1)
	defer func() { self.release() }()
	var f *os.File
	if d.root != nil {
		f, err = d.root.Open(".")
	} else {
		f, err = os.Open(d.abs)
	}
	if err != nil {
		return nil, nil
	}
	entries, _ := f.ReadDir(-1)
	f.Close()
	sortEntries(entries)
	if w.entries.Add(int64(len(entries))) > int64(walkMaxEntries) {
		return nil, errWalkBound
	}

	stack, inGit := j.stack, j.inGit
	if !w.opts.noIgnore {
		stack, inGit = dirRules(d, entries, wsRel(w, j.rel), stack, inGit)
	}
	var subs []dirJob
	for _, e := range entries {
		name := e.Name()
		rel := name
		if j.rel != "" {
			rel = j.rel + "/" + name
		}
		isDir := e.IsDir()
		if skipDirs[name] && isDir {
			if w.opts.keepDir == nil || !w.opts.keepDir(name) {
				continue
			}
		} else if name[0] == '.' && !w.opts.hidden {
			continue
		}
		if !w.opts.noIgnore && stack.Ignored(wsRel(w, rel), isDir) {
			continue
		}
		abs := filepath.Join(j.abs, name)
		switch {
		case isDir:
			self.refs.Add(1)
			subs = append(subs, dirJob{abs: abs, rel: rel, stack: stack, inGit: inGit, parent: self, name: name})
		case e.Type().IsRegular() || e.Type()&fs.ModeSymlink != 0:
			if err := w.fn(treeFile{dir: d, name: name, abs: abs, rel: rel, link: e.Type()&fs.ModeSymlink != 0}); err != nil {
				releaseJobs(subs)
				return nil, err
			}
		}
	}
	return subs, nil
}

// wsRel is rel (below the walk's start) as a path below the workspace,
// which is what the ignore rules are relative to.
func wsRel(w *treeWalk, rel string) string {
	switch {
	case w.base == "":
		return rel
	case rel == "":
		return w.base
	}
	return w.base + "/" + rel
}

// dirRules adds the rule files of the directory d (rel below the walk's
// start) to stack. A directory holding .git starts a repository: its
// .git/info/exclude applies, and .gitignore files count from there down.
func dirRules(d dirH, entries []fs.DirEntry, rel string, stack *ignore.Stack, inGit bool) (*ignore.Stack, bool) {
	has := map[string]bool{}
	for _, e := range entries {
		switch e.Name() {
		case ".git", ".gitignore", ".ignore":
			has[e.Name()] = true
		}
	}
	return pushRules(d, has, rel, stack, inGit)
}

func pushRules(d dirH, has map[string]bool, rel string, stack *ignore.Stack, inGit bool) (*ignore.Stack, bool) {
	if has[".git"] {
		inGit = true
		if b := d.readSmall(".git/info/exclude", maxIgnoreFile); b != nil {
			stack = stack.Push(ignore.Parse(b, rel, ignore.Exclude))
		}
	}
	if inGit && has[".gitignore"] {
		stack = stack.Push(ignore.Parse(d.readSmall(".gitignore", maxIgnoreFile), rel, ignore.Gitignore))
	}
	if has[".ignore"] {
		stack = stack.Push(ignore.Parse(d.readSmall(".ignore", maxIgnoreFile), rel, ignore.Dotignore))
	}
	return stack, inGit
}

// startRules loads the rule files that apply to start from the directories
// above it inside the workspace (a search of a subdirectory honours the
// workspace's .gitignore), and whether start is inside a git repository
// (a .git in the workspace or above it: only its existence is looked at
// outside the workspace). The rel paths of the rules are relative to the
// workspace; walkTree matches paths made relative to it (wsRel).
func startRules(fsy *fsys, start string, opts treeOpts) (*ignore.Stack, bool) {
	if opts.noIgnore {
		return nil, false
	}
	inGit := false
	for p := filepath.Dir(fsy.ws); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
			inGit = true
			break
		}
		if p == filepath.Dir(p) {
			break
		}
	}
	r, err := fsy.rel(start)
	if err != nil {
		return nil, inGit
	}
	var stack *ignore.Stack
	// The workspace and each directory down to start's parent; start's
	// own files are read when the walk reads start.
	dirs := []string{"."}
	if r != "." {
		parts := strings.Split(filepath.ToSlash(r), "/")
		for i := 1; i < len(parts); i++ {
			dirs = append(dirs, strings.Join(parts[:i], "/"))
		}
	} else {
		dirs = nil
	}
	for _, rel := range dirs {
		abs := filepath.Join(fsy.ws, filepath.FromSlash(rel))
		d, err := fsy.openDir(abs)
		if err != nil {
			continue
		}
		has := map[string]bool{}
		for _, n := range []string{".git", ".gitignore", ".ignore"} {
			if _, err := d.lstat(n); err == nil {
				has[n] = true
			}
		}
		ruleRel := rel
		if ruleRel == "." {
			ruleRel = ""
		}
		stack, inGit = pushRules(d, has, ruleRel, stack, inGit)
		d.close()
	}
	return stack, inGit
}

func (d dirH) lstat(name string) (fs.FileInfo, error) {
	if d.root != nil {
		return d.root.Lstat(name)
	}
	return os.Lstat(filepath.Join(d.abs, name))
}
