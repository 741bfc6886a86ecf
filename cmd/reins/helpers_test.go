package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/engine"
	"github.com/reinsdev/reins/internal/testutil"
)

// A testHelper is one of the helper binaries reins becomes (reins-tui,
// reins-extra, reins-temporal), built once per test binary unless its
// variable already names one (scripts/test builds them), and named in
// that variable for every reins the tests start: the tests run the real
// reins → exec → helper path.
type testHelper struct {
	name, env string
	// race builds the helper with -race when the test binary is: the
	// code reins-extra holds ran in the test binary before it moved.
	race bool
	once sync.Once
	err  error
	dir  string // removed when the test binary ends (cleanM)
}

var (
	tuiHelper      = &testHelper{name: tuiName, env: tuiEnv}
	extraHelper    = &testHelper{name: cli.ExtraName, env: cli.ExtraEnv, race: true}
	temporalHelper = &testHelper{name: engine.HelperName, env: engine.HelperEnv}
	testHelpers    = []*testHelper{tuiHelper, extraHelper, temporalHelper}
)

func (h *testHelper) use(t *testing.T) {
	t.Helper()
	if err := h.build(); err != nil {
		t.Fatal(err)
	}
}

// build builds the helper once, unless its variable names one.
func (h *testHelper) build() error {
	h.once.Do(func() {
		if os.Getenv(h.env) != "" {
			return
		}
		dir, err := os.MkdirTemp("", h.name+"-helper-")
		if err != nil {
			h.err = err
			return
		}
		h.dir = dir
		bin := filepath.Join(dir, h.name)
		args := []string{"build", "-o", bin}
		if h.race && testutil.Race {
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, "github.com/reinsdev/reins/cmd/"+h.name)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			h.err = fmt.Errorf("go build ./cmd/%s: %v\n%s", h.name, err, out)
			return
		}
		h.err = os.Setenv(h.env, bin)
	})
	return h.err
}

// useTUIHelper makes reins-tui available to the reins the test starts.
func useTUIHelper(t *testing.T) { tuiHelper.use(t) }

// useExtraHelper makes reins-extra available (demo, mock-llm, wrap, acp,
// view, batch).
func useExtraHelper(t *testing.T) { extraHelper.use(t) }

// useTemporalHelper makes reins-temporal available (worker, the
// Temporal engine).
func useTemporalHelper(t *testing.T) { temporalHelper.use(t) }
