package childproc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// LookPath finds file on the PATH of env — the child's own environment,
// which an agent file's `env: {PATH: …}` may set apart from this
// process's — so pi, ACP and reins children find their command the same
// way. A name with a slash is used as it is. The last PATH= entry of env
// counts (as for exec); relative PATH entries are skipped, as os/exec does
// for the current directory.
func LookPath(file string, env []string) (string, error) {
	if strings.Contains(file, "/") {
		if err := executable(file); err != nil {
			return "", &exec.Error{Name: file, Err: err}
		}
		return file, nil
	}
	pathEnv := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, file)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", &exec.Error{Name: file, Err: exec.ErrNotFound}
}

func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return os.ErrPermission
	}
	return nil
}
