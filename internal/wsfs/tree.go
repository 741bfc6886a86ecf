package wsfs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/reinsdev/reins/internal/ignore"
)

// WalkOptions say what a search walk skips and how far it goes.
type WalkOptions struct {
	// Hidden includes names starting with "." (never .git, see KeepDir).
	Hidden bool
	// NoIgnore turns the ignore files off.
	NoIgnore bool
	// KeepDir, when set, lets a directory that is skipped by default
	// (.git, node_modules) be walked because the model named it.
	KeepDir func(name string) bool
	// MaxEntries bounds the directory entries one walk visits, so a huge
	// tree (or a model pointing a search at /) ends with a partial answer
	// instead of running on; 0 is DefaultMaxEntries.
	MaxEntries int
}

// DefaultMaxEntries is the entry bound of a walk whose options set none.
const DefaultMaxEntries = 200_000

// ErrWalkBound ends a walk that visited WalkOptions.MaxEntries entries.
var ErrWalkBound = errors.New("walk bound reached")

// skipDir names the directories searches do not descend into: they are
// large and rarely what the model is looking for. A function, not a map:
// nothing to build at start-up.
func skipDir(name string) bool { return name == ".git" || name == "node_modules" }

// dirent is one entry of a directory a walk read: its name and its type
// bits (fs.ModeDir, fs.ModeSymlink, 0 for a regular file, ...), taken from
// the directory listing itself where the file system gives them, so a walk
// does not stat every entry.
type dirent struct {
	name string
	typ  fs.FileMode
}

// The open directory of a walk, dirH, is per platform (tree_linux.go,
// tree_other.go). Its methods:
//
//	fsy.openDir(abs) (dirH, error)  the walk's start, beneath the workspace
//	d.sub(name) (dirH, error)       a subdirectory, by name from d
//	d.list() ([]dirent, error)      d's entries, unsorted
//	d.exists(name) bool             whether d has an entry name (not followed)
//	d.readSmall(rel, limit) []byte  a small regular file below d (an ignore file)
//	d.close()
//	tf.ReadInto(buf, limit)         a found file's content
//	tf.Mtime() (int64, error)       a found file's modification time

// File is one file a walk found. It is valid only during the call of the
// walk's function that it was passed to: its directory is closed after.
type File struct {
	dir dirH
	// Name is the file's name in its directory.
	Name string
	// Rel is the slash path below the walk's start.
	Rel string
	// Link says the file is a symlink (its target is opened beneath the
	// workspace, so one pointing out of it fails to open).
	Link bool
}

// Abs is the file's absolute path (lexical, as the walk's start was given).
func (tf File) Abs() string { return filepath.Join(tf.dir.abs, tf.Name) }

// Dir is the absolute path of the file's directory (lexical, shared by the
// files of one directory).
func (tf File) Dir() string { return tf.dir.abs }

// maxIgnoreFile bounds an ignore file that is read.
const maxIgnoreFile = 1 << 20

// Walk walks the directory start (absolute, inside the workspace in a
// confined mode) with several workers, as ripgrep does: hidden entries,
// .git and node_modules are skipped unless opts say otherwise, and the
// .ignore, .gitignore and .git/info/exclude rules apply (the last two only
// inside a git repository, like ripgrep). fn is called for each file, from
// several goroutines at once; a non-nil error from it stops the walk and is
// returned. Symlinked directories are not followed; symlinked files are
// passed with Link set (opened beneath the workspace, so one pointing out
// of it fails to open). The walk stops after opts.MaxEntries entries
// (ErrWalkBound) or when ctx is done.
func Walk(ctx context.Context, fsy *FS, start string, opts WalkOptions, fn func(File) error) error {
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultMaxEntries
	}
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
// queue of pending directories, itself bounded by WalkOptions.MaxEntries.
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
	fsy   *FS
	opts  WalkOptions
	fn    func(File) error
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
// returned to be queued. Entries are taken in the order the directory
// lists them: the walk is parallel, so no order would survive it anyway,
// and the tools order what they found themselves.
func (w *treeWalk) dir(j dirJob) ([]dirJob, error) {
	if err := w.ctx.Err(); err != nil {
		if j.parent != nil {
			j.parent.release()
		}
		return nil, err
	}
	var d dirH
	var err error
	if j.parent != nil {
		d, err = j.parent.d.sub(j.name, j.abs)
		j.parent.release()
	} else {
		d, err = w.fsy.openDir(j.abs)
	}
	if err != nil {
		return nil, nil // unreadable directories are skipped
	}
	self := &sharedDir{d: d}
	self.refs.Store(1)
	defer func() { self.release() }()
	entries, _ := d.list()
	if w.entries.Add(int64(len(entries))) > int64(w.opts.MaxEntries) {
		return nil, ErrWalkBound
	}

	stack, inGit := j.stack, j.inGit
	if !w.opts.NoIgnore {
		stack, inGit = dirRules(d, entries, wsRel(w, j.rel), stack, inGit)
	}
	var subs []dirJob
	for _, e := range entries {
		name := e.name
		isDir := e.typ.IsDir()
		if isDir && skipDir(name) {
			if w.opts.KeepDir == nil || !w.opts.KeepDir(name) {
				continue
			}
		} else if name[0] == '.' && !w.opts.Hidden {
			continue
		}
		isLink := e.typ&fs.ModeSymlink != 0
		if !isDir && !isLink && !e.typ.IsRegular() {
			continue // FIFOs, sockets, devices
		}
		rel := name
		if j.rel != "" {
			rel = j.rel + "/" + name
		}
		if stack != nil && stack.Ignored(wsRel(w, rel), isDir) {
			continue
		}
		if isDir {
			self.refs.Add(1)
			subs = append(subs, dirJob{abs: filepath.Join(j.abs, name), rel: rel, stack: stack, inGit: inGit, parent: self, name: name})
			continue
		}
		if err := w.fn(File{dir: d, Name: name, Rel: rel, Link: isLink}); err != nil {
			releaseJobs(subs)
			return nil, err
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

// ruleFiles says which of the names that start rules a directory has.
type ruleFiles struct{ git, gitignore, ignore bool }

// dirRules adds the rule files of the directory d (rel below the walk's
// start) to stack. A directory holding .git starts a repository: its
// .git/info/exclude applies, and .gitignore files count from there down.
func dirRules(d dirH, entries []dirent, rel string, stack *ignore.Stack, inGit bool) (*ignore.Stack, bool) {
	var has ruleFiles
	for _, e := range entries {
		switch e.name {
		case ".git":
			has.git = true
		case ".gitignore":
			has.gitignore = true
		case ".ignore":
			has.ignore = true
		}
	}
	return pushRules(d, has, rel, stack, inGit)
}

func pushRules(d dirH, has ruleFiles, rel string, stack *ignore.Stack, inGit bool) (*ignore.Stack, bool) {
	if has.git {
		inGit = true
		if b := d.readSmall(".git/info/exclude", maxIgnoreFile); b != nil {
			stack = stack.Push(ignore.Parse(b, rel, ignore.Exclude))
		}
	}
	if inGit && has.gitignore {
		stack = stack.Push(ignore.Parse(d.readSmall(".gitignore", maxIgnoreFile), rel, ignore.Gitignore))
	}
	if has.ignore {
		stack = stack.Push(ignore.Parse(d.readSmall(".ignore", maxIgnoreFile), rel, ignore.Dotignore))
	}
	return stack, inGit
}

// startRules loads the rule files that apply to start from the directories
// above it inside the workspace (a search of a subdirectory honours the
// workspace's .gitignore), and whether start is inside a git repository
// (a .git in the workspace or above it: only its existence is looked at
// outside the workspace). The rel paths of the rules are relative to the
// workspace; Walk matches paths made relative to it (wsRel).
func startRules(fsy *FS, start string, opts WalkOptions) (*ignore.Stack, bool) {
	if opts.NoIgnore {
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
		has := ruleFiles{git: d.exists(".git"), gitignore: d.exists(".gitignore"), ignore: d.exists(".ignore")}
		ruleRel := rel
		if ruleRel == "." {
			ruleRel = ""
		}
		stack, inGit = pushRules(d, has, ruleRel, stack, inGit)
		d.close()
	}
	return stack, inGit
}

// readSmallOpened is the end of a dirH's readSmall once it has opened the
// file (f, err): the file's bytes when it is a regular file of at most
// limit bytes, else nil. f is closed.
func readSmallOpened(f *os.File, err error, limit int64) []byte {
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := ReadRegularInto(f, nil, limit)
	if err != nil {
		return nil
	}
	return b
}
