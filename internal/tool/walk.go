package tool

import (
	"fmt"

	"github.com/reinsdev/reins/internal/wsfs"
)

// walkMaxEntries bounds how many entries one glob or grep walk visits, so
// a huge tree (or a model pointing a search at /) ends with a partial answer
// instead of running on (wsfs.ErrWalkBound). A variable so tests can lower it.
var walkMaxEntries = wsfs.DefaultMaxEntries

// walkBoundNote is the line a result ends with when its walk was cut.
func walkBoundNote() string {
	return fmt.Sprintf("[stopped after visiting %d entries; narrow the path or pattern]\n", walkMaxEntries)
}

// canceled is the result of a call whose run was canceled.
func canceled(what string) Result { return Errorf("%s: canceled", what) }
