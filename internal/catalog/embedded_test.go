package catalog

import (
	"testing"

	"charm.land/catwalk/pkg/embedded"
	"github.com/google/go-cmp/cmp"
)

// TestEmbeddedIsCatwalk: the generated catalogue is exactly what parsing
// catwalk's embedded providers gives (a catwalk upgrade without `go
// generate ./internal/catalog` fails here).
func TestEmbeddedIsCatwalk(t *testing.T) {
	want := FromProviders(embedded.GetAll(), EmbeddedSource)
	if d := cmp.Diff(want, embeddedData(), cmp.AllowUnexported(Catalogue{})); d != "" {
		t.Errorf("embedded_data.go differs from catwalk %s (-parsed +generated):\n%s", EmbeddedVersion, d)
	}
	if len(want.Models) == 0 {
		t.Fatal("catwalk's embedded providers gave no model")
	}
}
