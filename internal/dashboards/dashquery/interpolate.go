package dashquery

import (
	"fmt"
	"regexp"
	"strings"
)

// All is the value of a variable set to "All".
const All = "$__all"

// Macros are Grafana's built-in variables, by name without the $:
// __rate_interval, __interval, __range and the like.
type Macros map[string]string

// Grafana's template syntax: $name, [[name]] or [[name:format]], ${name}
// or ${name:format}.
var varRE = regexp.MustCompile(`\$(\w+)|\[\[(\w+?)(?::(\w+))?\]\]|\$\{(\w+)(?:\.([^:^\}]+))?(?::([^\}]+))?\}`)

var digits = regexp.MustCompile(`^[0-9]+$`)

// Interpolate fills in an expression's variables and macros the way
// Grafana's Prometheus data source does: a value of a variable that is
// multi-valued or offers All is regex-escaped, several values become
// (a|b), All is the variable's allValue as it is (or every value); a
// single-valued variable's value is inserted with its backslashes doubled.
// values holds the chosen values of each variable (All for All).
// A reference to an unknown variable is an error, except $1, $2… (a
// label_replace replacement, which Grafana leaves alone too).
func Interpolate(expr string, vars []Variable, values map[string][]string, macros Macros) (string, error) {
	byName := map[string]Variable{}
	for _, v := range vars {
		byName[v.Name] = v
	}
	var err error
	out := varRE.ReplaceAllStringFunc(expr, func(m string) string {
		sub := varRE.FindStringSubmatch(m)
		name := sub[1] + sub[2] + sub[4]
		if digits.MatchString(name) {
			return m
		}
		if v, ok := macros[name]; ok {
			return v
		}
		v, ok := byName[name]
		vals, chosen := values[name]
		if !ok || !chosen {
			if err == nil {
				err = fmt.Errorf("%s: no value for variable $%s", expr, name)
			}
			return m
		}
		return format(v, vals)
	})
	return out, err
}

func format(v Variable, vals []string) string {
	if !v.Multi && !v.IncludeAll {
		if len(vals) == 0 {
			return ""
		}
		return regularEscape(vals[0])
	}
	if len(vals) == 1 && vals[0] == All && v.AllValue != "" {
		return v.AllValue
	}
	esc := make([]string, 0, len(vals))
	for _, s := range vals {
		esc = append(esc, regexEscape(s))
	}
	if len(esc) == 1 {
		return esc[0]
	}
	return "(" + strings.Join(esc, "|") + ")"
}

// regularEscape is Grafana's prometheusRegularEscape.
func regularEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return strings.ReplaceAll(s, `'`, `\\'`)
}

// regexEscape is Grafana's prometheusSpecialRegexEscape: regex
// metacharacters escaped, the backslashes doubled again for the PromQL
// string they end up in.
func regexEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\\\`)
		case strings.ContainsRune(`$^*{}[]'+?.()|`, r):
			b.WriteString(`\\`)
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// References lists the variables an expression refers to, macros and
// $1-style replacements left out.
func References(expr string) []string {
	var out []string
	for _, sub := range varRE.FindAllStringSubmatch(expr, -1) {
		name := sub[1] + sub[2] + sub[4]
		if digits.MatchString(name) || strings.HasPrefix(name, "__") {
			continue
		}
		out = append(out, name)
	}
	return out
}
