package llm

import "testing"

func TestToolSpecSchema(t *testing.T) {
	const empty = `{"type":"object","properties":{}}`
	for _, tc := range []struct{ params, want string }{
		{"", empty},
		{"  \n", empty},
		{"null", empty},
		{" null ", empty},
		{`{"type":"object"}`, `{"type":"object"}`},
		{`{"type":"object","properties":{"path":{"type":"string"}}}`, `{"type":"object","properties":{"path":{"type":"string"}}}`},
	} {
		if got := (ToolSpec{Name: "t", Parameters: []byte(tc.params)}).Schema(); string(got) != tc.want {
			t.Errorf("Schema() of %q = %s, want %s", tc.params, got, tc.want)
		}
	}
}
