package commands

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/reinsdev/reins/internal/lazy"
)

// Bounds of one expansion's inline commands.
const (
	MaxInline = 10
	// MaxInlineOutput caps what one inline command adds to the prompt.
	MaxInlineOutput = 16 << 10
)

// Runner runs one inline !`command` of a command file, confined, with
// the arguments as data: params its positional parameters ($1 ...) and
// ARGUMENTS in its environment. It returns what the prompt shows: the
// output, and its end when it failed.
type Runner func(ctx context.Context, command string, params []string, arguments string) string

// inline is Claude Code's !`command`; placeholder $ARGUMENTS and $1..$9.
var (
	inline      = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile("!`([^`\n]+)`") }}
	placeholder = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`\$(ARGUMENTS|[1-9])`) }}
)

// Expand is the prompt /NAME args stands for: the body with $ARGUMENTS
// and $1…$9 replaced by the arguments (split as a shell splits words,
// quotes grouping), and each inline !`command` replaced by what run
// returns for it. The inline commands are the file's text alone — the
// arguments reach them only through run's params and environment, never
// pasted into them — and run before the arguments are put in, so an
// argument that looks like !`...` stays text. A body with no placeholder
// gets the arguments after it, as Claude Code does. run nil leaves the
// inline commands unrun, said in their place.
func (c *Command) Expand(ctx context.Context, args string, run Runner) string {
	args = strings.TrimSpace(args)
	params := SplitArgs(args)
	subst := func(s string) string {
		return placeholder.Get().ReplaceAllStringFunc(s, func(m string) string {
			if m == "$ARGUMENTS" {
				return args
			}
			i := int(m[1] - '1')
			if i < len(params) {
				return params[i]
			}
			return ""
		})
	}
	var b strings.Builder
	last, n := 0, 0
	for _, m := range inline.Get().FindAllStringSubmatchIndex(c.Body, -1) {
		b.WriteString(subst(c.Body[last:m[0]]))
		last = m[1]
		command := c.Body[m[2]:m[3]]
		n++
		switch {
		case n > MaxInline:
			fmt.Fprintf(&b, "[not run: a command runs at most %d inline commands]", MaxInline)
		case run == nil:
			b.WriteString("[not run: inline commands run only in a session]")
		default:
			out := run(ctx, command, params, args)
			if len(out) > MaxInlineOutput {
				out = strings.ToValidUTF8(out[:MaxInlineOutput], "") + "\n[output cut]"
			}
			b.WriteString(out)
		}
	}
	b.WriteString(subst(c.Body[last:]))
	text := b.String()
	if args != "" && !placeholder.Get().MatchString(c.Body) {
		text += "\n\nARGUMENTS: " + args
	}
	return text
}

// SplitArgs splits arguments into words as a shell would, without
// expanding anything: blanks separate, single and double quotes group
// (a backslash escapes the next character outside single quotes).
func SplitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote, esc := false, rune(0), false
	for _, r := range s {
		switch {
		case esc:
			cur.WriteRune(r)
			esc, in = false, true
		case r == '\\' && quote != '\'':
			esc = true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}
