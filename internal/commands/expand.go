package commands

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/reinsdev/reins/internal/lazy"
)

// Bounds of one expansion's inline commands.
const (
	MaxInline = 10
	// MaxInlineOutput caps what one inline command adds to the prompt.
	MaxInlineOutput = 16 << 10
	// MaxPrompt bounds one expansion: a body of up to a MiB whose
	// placeholders each repeat the arguments could otherwise make a
	// prompt of gigabytes.
	MaxPrompt = 1 << 20
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
	b := &bounded{max: MaxPrompt}
	// subst writes s with its placeholders replaced, piece by piece: the
	// whole is never built beyond the bound.
	subst := func(s string) {
		last := 0
		for _, m := range placeholder.Get().FindAllStringIndex(s, -1) {
			if b.full() {
				return
			}
			b.add(s[last:m[0]])
			last = m[1]
			if s[m[0]:m[1]] == "$ARGUMENTS" {
				b.add(args)
			} else if i := int(s[m[0]+1] - '1'); i < len(params) {
				b.add(params[i])
			}
		}
		b.add(s[last:])
	}
	last, n := 0, 0
	for _, m := range inline.Get().FindAllStringSubmatchIndex(c.Body, -1) {
		subst(c.Body[last:m[0]])
		last = m[1]
		command := c.Body[m[2]:m[3]]
		n++
		switch {
		case b.full():
			// Nothing more fits: the rest is not run either.
		case n > MaxInline:
			b.add(fmt.Sprintf("[not run: a command runs at most %d inline commands]", MaxInline))
		case run == nil:
			b.add("[not run: inline commands run only in a session]")
		default:
			out := run(ctx, command, params, args)
			if len(out) > MaxInlineOutput {
				out = strings.ToValidUTF8(out[:MaxInlineOutput], "") + "\n[output cut]"
			}
			b.add(out)
		}
	}
	subst(c.Body[last:])
	if args != "" && !placeholder.Get().MatchString(c.Body) {
		b.add("\n\nARGUMENTS: ")
		b.add(args)
	}
	text := b.String()
	if b.cut {
		text += fmt.Sprintf("\n[the command's prompt is cut at %d bytes]", MaxPrompt)
	}
	return text
}

// bounded keeps the first max bytes added to it, cut on a rune boundary.
type bounded struct {
	strings.Builder
	max int
	cut bool
}

func (b *bounded) full() bool { return b.cut }

func (b *bounded) add(s string) {
	if b.cut {
		return
	}
	room := b.max - b.Len()
	if len(s) <= room {
		b.WriteString(s)
		return
	}
	for room > 0 && !utf8.RuneStart(s[room]) {
		room--
	}
	b.WriteString(s[:room])
	b.cut = true
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
