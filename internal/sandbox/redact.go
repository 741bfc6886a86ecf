package sandbox

import (
	"slices"
	"strings"
)

// Redacted replaces a known secret in a tool result.
const Redacted = "[redacted]"

// minSecret is the shortest value taken for a secret: a shorter one ("1",
// "true") would blank ordinary output and is no key anyway.
const minSecret = 8

// Redactor replaces every known secret value in a text by Redacted. It is
// the last wall behind the scrubbed environment and the masked credential
// files: a key that still reaches a tool's output (a `sandbox.env.pass`
// variable, a key pasted into a file of the workspace) is not logged to
// session.jsonl nor sent to the model. The zero Redactor changes nothing.
type Redactor struct{ r *strings.Replacer }

// NewRedactor redacts values (the keys of the environment and the config),
// the longer first so that a key containing another is replaced whole.
func NewRedactor(values []string) Redactor {
	var vs []string
	for _, v := range values {
		if len(v) >= minSecret && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return Redactor{}
	}
	slices.SortFunc(vs, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(vs))
	for _, v := range vs {
		pairs = append(pairs, v, Redacted)
	}
	return Redactor{strings.NewReplacer(pairs...)}
}

// Redact is s with the secrets replaced.
func (r Redactor) Redact(s string) string {
	if r.r == nil {
		return s
	}
	return r.r.Replace(s)
}

// SecretValues are the values of env's secret variables (Secret, or named
// in deny): what a Redactor should know.
func SecretValues(env []string, deny []string) []string {
	var out []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if Secret(k) || slices.Contains(deny, k) {
			out = append(out, v)
		}
	}
	return out
}
