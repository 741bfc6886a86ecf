package batch

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Keys names a batch's tasks across reins processes
// (subagent.Params.Key): the temporal engine makes each task one workflow,
// so that `reins batch --resume` after a killed batch re-attaches to the
// workflows still running (or takes the result of one that completed
// meanwhile) instead of running those tasks a second time.
//
// A key is the results file's (by absolute path), a nonce of the batch
// run and the task id's hash. A new batch (no --resume) draws a new nonce,
// so it runs every task again; --resume reads the one its predecessor
// left in $REINS_HOME/batch (one small file per results path).
func Keys(home, out string, resume bool) (func(taskID string) string, error) {
	abs, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(abs))
	file := hex.EncodeToString(sum[:8])
	p := filepath.Join(home, "batch", file)
	var nonce string
	if resume {
		b, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		nonce = strings.TrimSpace(string(b))
	}
	if nonce == "" || len(nonce) > 64 {
		var rnd [8]byte
		rand.Read(rnd[:])
		nonce = hex.EncodeToString(rnd[:])
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(nonce+"\n"), 0o600); err != nil {
			return nil, err
		}
	}
	return func(taskID string) string {
		t := sha256.Sum256([]byte(taskID))
		return "batch-" + file + "-" + nonce + "-" + hex.EncodeToString(t[:8])
	}, nil
}
