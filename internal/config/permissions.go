package config

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"

	"github.com/reinsdev/reins/internal/rules"
)

// permissions decodes a `permissions: {allow: [...], deny: [...]}` (a
// config layer's or an agent file's) into l, checking every rule's
// syntax (internal/rules) so a typo is an error naming the file and key,
// not a rule that silently never matches.
func (d *decoder) permissions(n ast.Node, path string, l *rules.List) error {
	return d.fields(n, path, []string{"allow", "deny"}, func(k string, v ast.Node, kp string) error {
		list, err := d.strList(v, kp)
		if err != nil || list == nil {
			return err
		}
		seq, _ := d.resolve(v).(*ast.SequenceNode)
		for i, s := range *list {
			if _, err := rules.Parse(s); err != nil {
				at := v
				if seq != nil && i < len(seq.Values) {
					at = seq.Values[i]
				}
				return d.valueErr(d.resolve(at), fmt.Sprintf("%s[%d]", kp, i), "a permission rule: TOOL or TOOL(PATTERN), such as bash(go test:*), write(docs/**) or mcp__github__*")
			}
		}
		if k == "allow" {
			l.Allow = append(l.Allow, *list...)
		} else {
			l.Deny = append(l.Deny, *list...)
		}
		return nil
	})
}
