package llm

import (
	"strings"
	"testing"
)

func TestProviderMessage(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`{"error":{"message":"The model ` + "`gpt-9`" + ` does not exist","type":"invalid_request_error"}}`, "The model `gpt-9` does not exist"},
		{`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, "invalid x-api-key"},
		{`{"error":"no such model"}`, "no such model"},
		{`{"message":"quota exceeded"}`, "quota exceeded"},
		{"upstream\nbroke\x1b[2J\x00", `upstream\nbroke\x1b[2J\x00`},
		{"bad \xff byte", `bad \xff byte`},
		{"\u202eevil", `\u202eevil`},
	} {
		if got := ProviderMessage([]byte(tt.body)); got != tt.want {
			t.Errorf("ProviderMessage(%q) = %q, want %q", tt.body, got, tt.want)
		}
	}
	long := ProviderMessage([]byte(strings.Repeat("é", 400)))
	if len(long) > MaxProviderMessage+len("…") || !strings.HasSuffix(long, "…") {
		t.Errorf("long message: %d bytes %q", len(long), long)
	}
}
