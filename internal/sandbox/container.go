//go:build linux

package sandbox

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/reinsdev/reins/internal/gitsafe"
	"github.com/reinsdev/reins/internal/protect"
	"golang.org/x/sys/unix"
)

// The container (docs/sandbox.md). Where the kernel lets an unprivileged
// process make a user namespace, the supervisor starts the confine stage in
// new user, mount, IPC and PID namespaces (and a network namespace unless
// the network is on), with the caller's uid and gid mapped to themselves so
// that file ownership — and git's safe.directory check — reads as outside.
// The stage holds CAP_SYS_ADMIN, CAP_NET_ADMIN and CAP_SETPCAP in the new
// user namespace only (ambient, across its own execve), builds the view
// below, drops every capability and then confines itself with Landlock and
// seccomp as before.
//
// It is done with Go's SysProcAttr and the new mount API (open_tree,
// move_mount, mount_setattr; Linux 5.12) rather than bubblewrap: measured on
// this machine (BENCHMARKS.md), a confined /bin/true costs one re-exec of
// reins either way, bwrap would add a third exec and a dependency that is
// not installed everywhere, and the view needs reins's own rules (the
// protected list, $REINS_HOME, resolved writable paths) which would have to
// be turned into dozens of bwrap arguments.
//
// The view:
//   - / recursively read-only and nosuid: chmod, touch, chattr, setfattr
//     and every write outside the granted paths fail with EROFS, metadata
//     included, which Landlock alone does not cover;
//   - a private, empty /tmp, /var/tmp, /dev/shm and /run: the Unix sockets
//     of servers outside (tmux, screen, ssh-agent, dbus, docker) are not
//     there to connect to; the four share one tmpfs of sandbox.limits.tmp
//     (limits.go);
//   - a /dev of its own with the few devices programs need and nothing of
//     the host's devtmpfs (dev.go);
//   - the granted paths (the private TMPDIR; under workspace-write the
//     workspace and the resolved `writable` paths; a reins child's state)
//     bound back writable at their own paths;
//   - the credential paths (credentialPaths, $REINS_HOME) covered by an
//     empty read-only tmpfs or /dev/null unless `sandbox.readable` names
//     them; $REINS_HOME shows only a reins child's state and the files the
//     policy lists as readable;
//   - inside the workspace, the protected paths (internal/protect plus
//     `sandbox.protect`) bound read-only, and the folders above them made
//     mount points so that they cannot be renamed away and replaced;
//   - a fresh /proc of the new PID namespace (reins and its environment are
//     not there) and, with the network off, a network namespace with only
//     loopback, which also hides the host's abstract Unix sockets.

// credentialPaths are the files and folders below the home directory that
// hold credentials of other tools, masked unless `sandbox.readable` names
// them (SPEC §12).
var credentialPaths = []string{
	".ssh", ".aws", ".config/gcloud", ".azure", ".netrc", ".git-credentials",
	".docker/config.json", ".npmrc", ".pypirc", ".kube", ".config/gh",
}

// privateDirs are private to the container: folders of one fresh tmpfs
// (privateMounts), nothing of the host's is visible.
var privateDirs = []string{"/tmp", "/var/tmp", "/dev/shm", "/run"}

// containerCaps are the capabilities the confine stage holds in its own
// user namespace while it builds the view; it drops them before the
// program starts.
var containerCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}

// nsFlags are the namespaces of a confined process.
func nsFlags(p Policy) uintptr {
	f := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWIPC)
	if wallPIDNS.on() {
		f |= unix.CLONE_NEWPID
	}
	if p.DenyNetwork && wallNetNS.on() {
		f |= unix.CLONE_NEWNET
	}
	return f
}

// containerAttr is how the supervisor starts the confine stage inside the
// namespaces.
func containerAttr(p Policy) *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	return &syscall.SysProcAttr{
		Cloneflags:                 nsFlags(p),
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
		AmbientCaps:                containerCaps,
		Pdeathsig:                  syscall.SIGKILL,
	}
}

// resolved is path with its symlinks resolved, or "" when it does not exist.
func resolved(path string) string {
	if path == "" {
		return ""
	}
	r, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	if r, err = filepath.Abs(r); err != nil {
		return ""
	}
	return r
}

// within reports whether p is root or below it (both absolute and clean).
func within(root, p string) bool {
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}

// grantedWrites are the paths a confined process may write, resolved: the
// private temporary directory, the state paths, and under workspace-write
// the workspace and the `writable` paths. A `writable` path is checked
// after its symlinks are resolved, and one that is $REINS_HOME, inside it
// or above it is dropped: reins's home is never writable by a confined
// process (a reins child's own state is granted through State). The
// workspace itself may contain $REINS_HOME (reins run from ~): the
// container masks it then; Landlock alone cannot (see Doctor).
func grantedWrites(p Policy, tmp string) []string {
	home := resolved(p.Home)
	var out []string
	add := func(path string, guard bool) {
		r := resolved(path)
		if r == "" {
			return
		}
		if guard && home != "" && (within(home, r) || within(r, home)) {
			return
		}
		out = append(out, r)
	}
	add(tmp, false)
	for _, s := range p.State {
		add(s, false)
	}
	if p.Mode == WorkspaceWrite {
		add(p.Workspace, false)
		for _, w := range p.Writable {
			add(w, true)
		}
	}
	return out
}

// detached is a copy of a mount tree taken before the view changed, to be
// attached at path later.
type detached struct {
	fd       int
	path     string
	readOnly bool
}

func detach(path string, readOnly bool) (detached, error) {
	fd, err := unix.OpenTree(unix.AT_FDCWD, path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return detached{}, fmt.Errorf("open_tree %s: %w", path, err)
	}
	return detached{fd: fd, path: path, readOnly: readOnly}, nil
}

// attach mounts d at its path, making the mount point where a private
// tmpfs hides it.
func (d detached) attach() error {
	defer unix.Close(d.fd)
	if _, err := os.Lstat(d.path); errors.Is(err, os.ErrNotExist) {
		var st unix.Stat_t
		if err := unix.Fstat(d.fd, &st); err != nil {
			return err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			err = os.MkdirAll(d.path, 0o755)
		} else {
			if err = os.MkdirAll(filepath.Dir(d.path), 0o755); err == nil {
				err = os.WriteFile(d.path, nil, 0o600)
			}
		}
		if err != nil {
			return fmt.Errorf("mount point %s: %w", d.path, err)
		}
	}
	if err := unix.MoveMount(d.fd, "", unix.AT_FDCWD, d.path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount %s: %w", d.path, err)
	}
	attr := unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
	if d.readOnly {
		attr = unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	}
	if err := unix.MountSetattr(-1, d.path, unix.AT_RECURSIVE, &attr); err != nil {
		return fmt.Errorf("mount_setattr %s: %w", d.path, err)
	}
	return nil
}

// readableOnPurpose reports whether the policy opens path (`sandbox.readable`).
func readableOnPurpose(p Policy, path string) bool {
	for _, r := range p.Readable {
		if filepath.Clean(r) == path || resolved(r) == path {
			return true
		}
	}
	return false
}

// view is what buildView made that later steps depend on.
type view struct {
	ownProc bool // /proc is the container's own
	ownPTS  bool // /dev/pts is a devpts of its own
}

// buildView makes the container's file system view (see the comment at the
// top of this file). It runs in the confine stage, in the new mount
// namespace, before Landlock.
//
// sockets are the host's named Unix sockets (maskSockets). argv is the
// program's command line: the program and any absolute path it
// names that lies in a private folder (a test's server binary in /tmp) come
// back read-only, as do the working directory and the paths in the
// variables the caller kept on purpose (Env.Keep).
//
// The view it made says whether /proc is the container's own (the process
// cap, limits.go, counts it) and /dev/pts its own devpts (dev.go).
//
// walked, when not nil, gives the repositories the supervisor found in the
// workspace (walkedRepos; ok false: walk here).
func buildView(p Policy, tmp string, argv, sockets []string, walked func(ws string) ([]gitsafe.Repo, bool)) (v view, err error) {
	cwd, _ := os.Getwd()
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return v, fmt.Errorf("private mounts: %w", err)
	}
	home := resolved(p.Home)
	// The workspace resolved now, while the host's view is still there: a
	// workspace named through a symbolic link in a folder the container
	// makes private (/tmp/link -> the checkout) no longer resolves once
	// /tmp is the private tmpfs, and its .git and protected paths went
	// unbound.
	ws := resolved(p.Workspace)
	var writable []string // the same for the `writable` paths
	for _, w := range p.Writable {
		writable = append(writable, resolved(w))
	}
	userHome, _ := os.UserHomeDir()
	userHome = resolved(userHome)

	// Copies of what comes back writable, taken while it still is.
	var early, late []detached
	granted := grantedWrites(p, tmp) // resolved once: each path is a walk of its symlinks
	for _, w := range granted {
		d, err := detach(w, false)
		if err != nil {
			return v, err
		}
		if home != "" && within(home, w) {
			late = append(late, d)
		} else {
			early = append(early, d)
		}
	}
	if home != "" {
		for _, r := range p.Readable {
			if r = resolved(r); r != "" && within(home, r) && r != home {
				d, err := detach(r, true)
				if err != nil {
					return v, err
				}
				late = append(late, d)
			}
		}
	}
	seen := map[string]bool{}
	named := append(append([]string{cwd}, argv...), filepath.Dir(argv[0]))
	// A program that lives in a private folder needs its neighbours too:
	// node resolves a script's imports through the node_modules of every
	// folder above it (a repository cloned to /tmp/x runs
	// /tmp/x/testdata/.../agent.mjs, which imports /tmp/x/node_modules/...).
	// So the top folder under the private one that holds each program path
	// comes back read-only as a whole; nothing else of /tmp does.
	for _, a := range argv {
		r := resolved(a)
		if r == "" || !filepath.IsAbs(a) {
			continue
		}
		for _, d := range privateDirs {
			if rel, err := filepath.Rel(d, r); err == nil && within(d, r) && r != d {
				top, _, _ := strings.Cut(rel, string(filepath.Separator))
				named = append(named, filepath.Join(d, top))
			}
		}
	}
	// So do the paths in the variables the caller set for this process on
	// purpose (an agent file's or an MCP server's env: pi's agent folder).
	for _, k := range p.Env.Keep {
		named = append(named, os.Getenv(k))
	}
	for _, w := range named {
		r := resolved(w)
		if r == "" || seen[r] || !filepath.IsAbs(w) {
			continue
		}
		seen[r] = true
		for _, d := range privateDirs {
			if within(d, r) && r != d && !coveredBy(r, granted) {
				if c, err := detach(r, true); err == nil {
					early = append(early, c)
				}
			}
		}
	}
	// The resolver's file often lives in /run (systemd-resolved); keep it.
	if rc := resolved("/etc/resolv.conf"); rc != "" && rc != "/etc/resolv.conf" {
		for _, d := range privateDirs {
			if within(d, rc) {
				if c, err := detach(rc, true); err == nil {
					early = append(early, c)
				}
			}
		}
	}

	if wallReadOnlyRoot.on() {
		if err := unix.MountSetattr(-1, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID}); err != nil {
			return v, fmt.Errorf("read-only root: %w", err)
		}
	}
	// The container's own /dev (dev.go), before the private /dev/shm.
	if wallDev.on() {
		if v.ownPTS, err = freshDev(); err != nil {
			return v, err
		}
	}
	if wallPrivateDirs.on() {
		if err := privateMounts(p.Limits); err != nil {
			return v, err
		}
	}
	// A folder before what lies in it: a read-only copy of a named path
	// (an agent env's REINS_HOME in /tmp) attached after a writable state
	// directory inside it would hide that directory under its read-only
	// view.
	slices.SortStableFunc(early, func(a, b detached) int {
		return cmp.Compare(strings.Count(a.path, "/"), strings.Count(b.path, "/"))
	})
	for _, d := range early {
		if err := d.attach(); err != nil {
			return v, err
		}
	}

	if p.Mode == WorkspaceWrite && p.Workspace != "" {
		if err := protectWorkspace(ws, p, userHome, granted, writable, walked); err != nil {
			return v, err
		}
	}

	// Credentials: masked wherever they are, the workspace included.
	if userHome != "" && wallMasks.on() {
		for _, c := range credentialPaths {
			path := filepath.Join(userHome, c)
			if readableOnPurpose(p, path) {
				continue
			}
			if err := mask(path); err != nil {
				return v, err
			}
		}
	}
	// $REINS_HOME: an empty tmpfs with only the late binds (a reins
	// child's state and config), read-only. A home hidden already (in the
	// private /tmp) gets the late binds alone.
	masked := false
	if home != "" && !readableOnPurpose(p, home) && wallMasks.on() {
		if fi, err := os.Stat(home); err == nil && fi.IsDir() {
			if err := unix.Mount("tmpfs", home, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=64k"); err != nil {
				return v, fmt.Errorf("mask %s: %w", home, err)
			}
			masked = true
		}
	}
	for _, d := range late {
		if err := d.attach(); err != nil {
			return v, err
		}
	}
	if masked {
		if err := unix.MountSetattr(-1, home, 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return v, fmt.Errorf("mask %s: %w", home, err)
		}
	}

	// Last, the sockets of servers outside that the view still shows
	// (sockets.go).
	if wallSockets.on() {
		if err := maskSockets(sockets, tmp); err != nil {
			return v, err
		}
	}

	// The working directory was entered before the view existed: enter it
	// again so that it is the new mount (writable where granted).
	if cwd != "" {
		_ = os.Chdir(cwd)
	}
	// The new PID namespace's own /proc. Where the kernel refuses (a /proc
	// with masked entries, as in some containers), the old one stays:
	// Landlock still keeps reins's /proc/PID/environ out of reach.
	v.ownProc = wallPIDNS.on() && unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "") == nil
	if p.DenyNetwork && wallNetNS.on() {
		if err := loopbackUp(); err != nil {
			return v, fmt.Errorf("loopback: %w", err)
		}
	}
	return v, nil
}

// coveredBy reports whether path lies in one of roots.
func coveredBy(path string, roots []string) bool {
	for _, r := range roots {
		if within(r, path) {
			return true
		}
	}
	return false
}

// mask hides path: an empty read-only tmpfs over a folder, /dev/null over
// a file. A missing path stays missing.
func mask(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	if fi.IsDir() {
		if err := unix.Mount("tmpfs", path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, "mode=0500,size=4k"); err != nil {
			return fmt.Errorf("mask %s: %w", path, err)
		}
		return nil
	}
	if err := unix.Mount("/dev/null", path, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("mask %s: %w", path, err)
	}
	if err := unix.Mount("", path, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		return fmt.Errorf("mask %s: %w", path, err)
	}
	return nil
}

// protectWorkspace binds read-only every existing protected path of ws
// (internal/protect, the user's rc files when ws holds home, and
// `sandbox.protect`) and every repository control folder found in it
// (repoPaths), and makes each folder between ws and them a mount point of
// its own (still writable): a mount point cannot be renamed or removed, so
// `mv .git x` followed by a fresh .git/hooks is refused too. A protected
// path missing at the start is handled by the supervisor
// (removeNewProtected, sweepNewRepo).
//
// writable are p.Writable resolved before the view changed.
func protectWorkspace(ws string, p Policy, home string, granted, writable []string, walked func(ws string) ([]gitsafe.Repo, bool)) error {
	if ws == "" {
		return nil
	}
	var ro []string
	if wallProtect.on() {
		for _, rel := range protect.Workspace(ws, home, p.Protect) {
			path := filepath.Join(ws, rel)
			fi, err := os.Lstat(path)
			if err != nil || fi.Mode()&os.ModeSymlink != 0 {
				continue
			}
			ro = append(ro, path)
		}
	}
	if !p.GitWritable && wallGit.on() {
		repos, ok := []gitsafe.Repo(nil), false
		if walked != nil {
			repos, ok = walked(ws)
		}
		if !ok {
			repos, _ = gitsafe.Find(ws, gitsafe.DefaultLimits)
		}
		ro = append(ro, repoPaths(ws, repos, granted)...)
		// A `writable` path that is (or holds, a level down) a
		// repository: its .git is read-only too.
		for _, r := range writable {
			if r != "" && r != ws && !within(ws, r) && coveredBy(r, granted) {
				repos, _ := gitsafe.Find(r, writableRepoLimits)
				ro = append(ro, repoPaths(r, repos, granted)...)
			}
		}
	}
	return bindReadOnly(ro, granted)
}

// loopbackUp brings up lo in the new network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP | unix.IFF_RUNNING)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// dropCaps gives up every capability for good: the bounding set is
// emptied (so a uid-0 program cannot regain them on execve), the ambient
// and inheritable sets cleared, then the effective and permitted ones.
func dropCaps() error {
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("bounding set: %w", err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("ambient: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// dropCapsIfAny is dropCaps for a process that holds a capability (its
// permitted set is not empty): in practice root. An unprivileged process
// has nothing to drop and may not change its bounding set (no
// CAP_SETPCAP); no_new_privs, which Landlock sets, keeps file capabilities
// from being granted at its execve.
func dropCapsIfAny() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	if data[0].Permitted == 0 && data[1].Permitted == 0 {
		return nil
	}
	return dropCaps()
}

// missingProtected are the protected paths of p's workspace that do not
// exist when the process starts. A read-only bind needs something to bind
// over, so these are not covered by the container: the supervisor removes
// whatever the process created there once it and all its descendants are
// gone (removeNewProtected), before reins sees the process end. A missing
// .git is listed too: a repository the process creates is swept.
func missingProtected(p Policy) []string {
	ws := resolved(p.Workspace)
	if ws == "" {
		return nil
	}
	home, _ := os.UserHomeDir()
	var out []string
	for _, rel := range protect.Workspace(ws, resolved(home), p.Protect) {
		if _, err := os.Lstat(filepath.Join(ws, rel)); errors.Is(err, os.ErrNotExist) {
			out = append(out, filepath.Join(ws, rel))
		}
	}
	if _, err := os.Lstat(filepath.Join(ws, ".git")); errors.Is(err, os.ErrNotExist) {
		out = append(out, filepath.Join(ws, ".git"))
	}
	return out
}

// removeNewProtected removes the protected paths in missing that exist
// now, and says so on stderr (reins's own words, the path relative to the
// workspace). A repository the process made itself (.git was missing too)
// is swept (sweepNewRepo) unless .git is writable by configuration; then,
// as before the .git walls, only hooks other than the samples go.
func removeNewProtected(p Policy, missing []string) {
	if len(missing) == 0 {
		return
	}
	ws := resolved(p.Workspace)
	gitNew := false
	for _, m := range missing {
		if m == filepath.Join(ws, ".git") {
			gitNew = true
		}
	}
	for _, m := range missing {
		if m == filepath.Join(ws, ".git") {
			continue
		}
		if _, err := os.Lstat(m); err != nil {
			continue
		}
		rel, _ := filepath.Rel(ws, m)
		if gitNew && within(filepath.Join(ws, ".git"), m) {
			if p.GitWritable && rel == filepath.Join(".git", "hooks") {
				ents, _ := os.ReadDir(m)
				for _, e := range ents {
					if !strings.HasSuffix(e.Name(), ".sample") {
						_ = os.RemoveAll(filepath.Join(m, e.Name()))
						fmt.Fprintf(os.Stderr, "reins sandbox: removed %s, written by a confined process (protected path)\n", filepath.Join(rel, safeName(e.Name())))
					}
				}
			}
			continue
		}
		_ = os.RemoveAll(m)
		fmt.Fprintf(os.Stderr, "reins sandbox: removed %s, written by a confined process (protected path)\n", rel)
	}
	if gitNew && !p.GitWritable && wallGitSweep.on() {
		sweepNewRepo(ws)
	}
}
