package testutil

import (
	"os"
	"slices"
	"strings"
)

// userVars are the variables of the user's shell that change what reins
// does or draws: the terminal's kind and colours, where providers are
// and which keys are set, tracing, a mock script or catalogue of the
// user's, a launcher's watch. A test that ran with them would pass or fail
// by who ran it (issue 48: TERM=dumb).
var userVars = []string{
	"TERM", "COLORTERM", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "COLUMNS", "LINES",
	"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "DEEPSEEK_API_KEY", "GEMINI_API_KEY",
	"ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "DEEPSEEK_BASE_URL", "GOOGLE_GEMINI_BASE_URL",
	"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SERVICE_NAME", "TRACEPARENT",
	"REINS_MOCK_SCRIPT", "REINS_CATALOG_URL", "REINS_LAUNCHER_PID",
}

// Env is os.Environ() without the user's variables that change reins
// (userVars), with TERM=xterm-256color (what the terminal tests draw
// for), then extra: the environment of a process a test starts, the same
// whoever runs the tests.
func Env(extra ...string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(userVars, k)
	})
	return append(append(env, "TERM=xterm-256color"), extra...)
}
