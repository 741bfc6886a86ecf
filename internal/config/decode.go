package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/reinsdev/reins/internal/trust"
)

// ErrorKind says what is wrong in a configuration or agent file.
type ErrorKind int

const (
	// KindSyntax: the file is not valid YAML (or an agent file's front
	// matter is not delimited); Key may be empty.
	KindSyntax ErrorKind = iota + 1
	// KindUnknownKey: a key the schema does not have; Key is its full
	// dotted path.
	KindUnknownKey
	// KindValue: a key holds the wrong type or an unacceptable value.
	KindValue
	// KindFrontMatter: an agent file does not start with front matter
	// between two --- lines.
	KindFrontMatter
)

// Error is a configuration error that names the file, the key and what was
// expected. It never quotes the file beyond the one offending value, so a
// secret elsewhere in the file cannot end up in a message or a log.
type Error struct {
	Kind ErrorKind
	File string
	// Key is the dotted path of the offending key, e.g.
	// "providers.deepseek.retry.initialDelay"; empty when not about one key.
	Key string
	// Line is 1-based; 0 when unknown.
	Line int
	// Want is what was expected, e.g. "a duration such as 500ms". For
	// KindSyntax it is the parser's description of the problem.
	Want string
	// Got is the offending value as written (scalars) or its shape
	// ("a list"); empty when not applicable.
	Got string
}

// Error names the file quoted (trust.Quote) when its name has characters
// a terminal would act on: file names are the repository author's.
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", trust.Quote(e.File), e.Line, e.Detail())
	}
	return trust.Quote(e.File) + ": " + e.Detail()
}

// Detail is the message without the file and line.
func (e *Error) Detail() string {
	var b strings.Builder
	switch e.Kind {
	case KindSyntax:
		b.WriteString("invalid YAML")
		if e.Key != "" {
			fmt.Fprintf(&b, " at key %q", e.Key)
		}
		if e.Want != "" {
			b.WriteString(": " + e.Want)
		}
	case KindFrontMatter:
		b.WriteString("want YAML front matter between two --- lines at the top of the file")
	case KindUnknownKey:
		fmt.Fprintf(&b, "unknown key %q", e.Key)
		if e.Want != "" {
			b.WriteString("; want " + e.Want)
		}
	default:
		if e.Key != "" {
			fmt.Fprintf(&b, "key %q: ", e.Key)
		}
		b.WriteString("want " + e.Want)
		if e.Got != "" {
			b.WriteString(", got " + e.Got)
		}
	}
	return b.String()
}

// maxGot bounds how much of an offending value an error quotes.
const maxGot = 40

// decoder walks a YAML AST against a schema written as code. Walking the AST
// (rather than unmarshalling into structs) is what gives every error an exact
// dotted key path and line, for nested keys too.
type decoder struct {
	file    string
	lineOff int // added to node lines (front matter starts below "---")
	anchors map[string]ast.Node
	// lenient turns unknown keys into warnings instead of errors.
	lenient  bool
	warnings []string
}

// parse parses src as a single YAML document and returns its body (nil
// for an empty document).
func (d *decoder) parse(src []byte) (ast.Node, error) {
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		e := &Error{Kind: KindSyntax, File: d.file, Want: "the file could not be parsed"}
		var se *yaml.SyntaxError
		if errors.As(err, &se) {
			e.Want = se.Message
			if se.Token != nil {
				e.Line = se.Token.Position.Line + d.lineOff
			}
		}
		return nil, e
	}
	var body ast.Node
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			return nil, &Error{Kind: KindSyntax, File: d.file, Line: d.line(doc.Body), Want: "more than one document; want one"}
		}
		body = doc.Body
	}
	d.anchors = map[string]ast.Node{}
	if body != nil {
		ast.Walk(anchorCollector(d.anchors), body)
	}
	return body, nil
}

type anchorCollector map[string]ast.Node

func (a anchorCollector) Visit(n ast.Node) ast.Visitor {
	if an, ok := n.(*ast.AnchorNode); ok && an.Name != nil {
		a[an.Name.GetToken().Value] = an.Value
	}
	return a
}

func (d *decoder) line(n ast.Node) int {
	if n == nil || n.GetToken() == nil {
		return 0
	}
	return n.GetToken().Position.Line + d.lineOff
}

// resolve strips anchors and tags and follows aliases.
func (d *decoder) resolve(n ast.Node) ast.Node {
	for range 32 { // bounds alias chains
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		case *ast.AliasNode:
			if v.Value == nil {
				return nil
			}
			target, ok := d.anchors[v.Value.GetToken().Value]
			if !ok {
				return nil
			}
			n = target
		default:
			return n
		}
	}
	return n
}

func isNull(n ast.Node) bool {
	if n == nil {
		return true
	}
	_, ok := n.(*ast.NullNode)
	return ok
}

func (d *decoder) valueErr(n ast.Node, key, want string) *Error {
	return &Error{Kind: KindValue, File: d.file, Key: key, Line: d.line(n), Want: want, Got: describe(n)}
}

// describe renders what a node holds for an error message: a scalar's text
// (quoted, bounded) or the node's shape.
func describe(n ast.Node) string {
	switch v := n.(type) {
	case nil, *ast.NullNode:
		return "nothing"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.LiteralNode:
		return "a block of text"
	case *ast.StringNode:
		return quoteBounded(v.Value)
	default:
		if t := n.GetToken(); t != nil {
			return quoteBounded(t.Value)
		}
		return "an unsupported value"
	}
}

func quoteBounded(s string) string {
	if len(s) > maxGot {
		s = s[:maxGot] + "…"
	}
	return strconv.Quote(s)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// entries returns the key/value pairs of a mapping node, or nil for null.
func (d *decoder) entries(n ast.Node, path, want string) ([]*ast.MappingValueNode, error) {
	n = d.resolve(n)
	switch v := n.(type) {
	case nil, *ast.NullNode:
		return nil, nil
	case *ast.MappingNode:
		return v.Values, nil
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{v}, nil
	}
	return nil, d.valueErr(n, path, want)
}

func keyText(k ast.MapKeyNode) string {
	if k == nil || k.GetToken() == nil {
		return ""
	}
	if s, ok := k.(*ast.StringNode); ok {
		return s.Value
	}
	return k.GetToken().Value
}

// fields walks a mapping whose keys are a fixed set. fn is called for each
// known key in document order; an unknown key is an error (or, when the
// decoder is lenient, a warning).
func (d *decoder) fields(n ast.Node, path string, known []string, fn func(key string, v ast.Node, kpath string) error) error {
	want := "a mapping with keys " + strings.Join(known, ", ")
	mvs, err := d.entries(n, path, want)
	if err != nil {
		return err
	}
	for _, mv := range mvs {
		k := keyText(mv.Key)
		kp := join(path, k)
		if !contains(known, k) {
			if d.lenient {
				d.warnings = append(d.warnings, fmt.Sprintf("unknown key %q ignored", kp))
				continue
			}
			return &Error{Kind: KindUnknownKey, File: d.file, Key: kp, Line: d.line(mv.Key), Want: "one of " + strings.Join(known, ", ")}
		}
		if err := fn(k, mv.Value, kp); err != nil {
			return err
		}
	}
	return nil
}

// each walks a mapping with free-form keys. keyLine is the key's line.
func (d *decoder) each(n ast.Node, path, want string, fn func(key string, v ast.Node, kpath string, keyLine int) error) error {
	mvs, err := d.entries(n, path, want)
	if err != nil {
		return err
	}
	for _, mv := range mvs {
		k := keyText(mv.Key)
		if err := fn(k, mv.Value, join(path, k), d.line(mv.Key)); err != nil {
			return err
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// scalarText returns a scalar's text. ok is false for null and non-scalars.
// Strings are taken as written: `apiKey: 12345` is the string "12345", the
// value the user meant, not a type error.
func (d *decoder) scalarText(n ast.Node) (string, bool) {
	switch v := d.resolve(n).(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.LiteralNode:
		if v.Value == nil {
			return "", true
		}
		return v.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return v.GetToken().Value, true
	}
	return "", false
}

// str decodes a string; nil for null.
func (d *decoder) str(n ast.Node, key string) (*string, error) {
	n = d.resolve(n)
	if isNull(n) {
		return nil, nil
	}
	s, ok := d.scalarText(n)
	if !ok {
		return nil, d.valueErr(n, key, "a string")
	}
	return &s, nil
}

// writable decodes a list of sandbox-writable paths: absolute, or below
// the user's home with ~/ (expanded here).
func (d *decoder) writable(n ast.Node, key string) ([]string, error) {
	l, err := d.strList(n, key)
	if err != nil || l == nil {
		return nil, err
	}
	var out []string
	for _, w := range *l {
		abs, ok := expandHome(w)
		if !ok {
			return nil, d.valueErr(d.resolve(n), key, "absolute paths or paths starting with ~/")
		}
		out = append(out, abs)
	}
	return out, nil
}

// boolean decodes true or false; nil for null.
func (d *decoder) boolean(n ast.Node, key string) (*bool, error) {
	n = d.resolve(n)
	if isNull(n) {
		return nil, nil
	}
	b, ok := n.(*ast.BoolNode)
	if !ok {
		return nil, d.valueErr(n, key, "true or false")
	}
	v := b.Value
	return &v, nil
}

// integer decodes a non-negative int; nil for null.
func (d *decoder) integer(n ast.Node, key string) (*int, error) {
	n = d.resolve(n)
	if isNull(n) {
		return nil, nil
	}
	in, ok := n.(*ast.IntegerNode)
	if !ok {
		return nil, d.valueErr(n, key, "an integer")
	}
	var v int64
	switch x := in.Value.(type) {
	case int64:
		v = x
	case uint64:
		if x > math.MaxInt32 {
			return nil, d.valueErr(n, key, "a smaller integer")
		}
		v = int64(x)
	default:
		return nil, d.valueErr(n, key, "an integer")
	}
	if v < 0 {
		return nil, d.valueErr(n, key, "an integer >= 0")
	}
	if v > math.MaxInt32 {
		return nil, d.valueErr(n, key, "a smaller integer")
	}
	i := int(v)
	return &i, nil
}

// float decodes a finite number within [lo, hi]; nil for null. want says
// the range in the error.
func (d *decoder) float(n ast.Node, key string, lo, hi float64, want string) (*float64, error) {
	n = d.resolve(n)
	if isNull(n) {
		return nil, nil
	}
	var f float64
	switch v := n.(type) {
	case *ast.FloatNode:
		f = v.Value
	case *ast.IntegerNode:
		switch x := v.Value.(type) {
		case int64:
			f = float64(x)
		case uint64:
			f = float64(x)
		}
	default:
		return nil, d.valueErr(n, key, want)
	}
	if !(f >= lo && f <= hi) {
		return nil, d.valueErr(n, key, want)
	}
	return &f, nil
}

// fraction decodes a number in [0,1]; nil for null.
func (d *decoder) fraction(n ast.Node, key string) (*float64, error) {
	return d.float(n, key, 0, 1, "a number between 0 and 1")
}

// number decodes a finite non-negative number; nil for null.
func (d *decoder) number(n ast.Node, key string) (*float64, error) {
	return d.float(n, key, 0, math.MaxFloat64, "a number >= 0")
}

// duration decodes a non-negative Go duration ("500ms", "10s", "0"); nil
// for null.
func (d *decoder) duration(n ast.Node, key string) (*time.Duration, error) {
	n = d.resolve(n)
	if isNull(n) {
		return nil, nil
	}
	s, ok := d.scalarText(n)
	if !ok {
		return nil, d.valueErr(n, key, "a duration such as 500ms")
	}
	v, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return nil, d.valueErr(n, key, "a duration such as 500ms")
	}
	if v < 0 {
		return nil, d.valueErr(n, key, "a duration >= 0")
	}
	return &v, nil
}

// strList decodes a list of strings; nil for null. An explicit empty list
// yields a non-nil empty slice, so a layer can clear a list.
func (d *decoder) strList(n ast.Node, key string) (*[]string, error) {
	n = d.resolve(n)
	if isNull(n) {
		return nil, nil
	}
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		return nil, d.valueErr(n, key, "a list of strings")
	}
	out := make([]string, 0, len(seq.Values))
	for i, e := range seq.Values {
		s, ok := d.scalarText(e)
		if !ok {
			return nil, d.valueErr(d.resolve(e), fmt.Sprintf("%s[%d]", key, i), "a string")
		}
		out = append(out, s)
	}
	return &out, nil
}

// strMap decodes a mapping of strings; nil for null.
func (d *decoder) strMap(n ast.Node, key string) (map[string]string, error) {
	out := map[string]string{}
	err := d.each(n, key, "a mapping of strings", func(k string, v ast.Node, kp string, _ int) error {
		s, err := d.str(v, kp)
		if err != nil {
			return err
		}
		if s == nil {
			return d.valueErr(d.resolve(v), kp, "a string")
		}
		out[k] = *s
		return nil
	})
	return out, err
}
