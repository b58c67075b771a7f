package upstream

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-jsonnet"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"
)

// Grafana's dashboard-linter (grafana/dashboard-linter, lint/rule_*.go;
// mixtool lint runs it on a mixin's dashboards) cannot be fetched from the
// Go module proxy (it refuses the module, and mixtool's; the newest
// dashboard-linter also needs a Grafana module it refuses). Its rules that
// apply to Prometheus dashboards are encoded here, on the JSON as the
// linter reads it and with Prometheus' own PromQL parser as it uses it,
// and run on grafana/dashboards and on the mixin rendered with another
// _config. The real tools, built from their sources by hand
// (docs/dashboards.md says which commits), pass on the same files with no
// .lint file; so must these:
//
//	template-datasource-rule             a datasource variable named datasource, labelled Data source
//	template-job-rule                    a job variable: a query on ${datasource}, labelled Job, multi, All .+
//	template-instance-rule               the same for instance
//	template-label-promql-rule           label_values(<PromQL>, label) (stricter: the series must parse)
//	template-on-time-change-reload-rule  query variables refresh on time range change (2)
//	panel-datasource-rule                every panel on ${datasource}
//	panel-title-description-rule         a title and a description
//	panel-units-rule                     a valid unit, or value mappings (stricter: a table's default unit)
//	panel-no-targets-rule                at least one query
//	target-promql-rule                   every query parses (variables expanded as the linter does)
//	target-rate-interval-rule            rate and irate over [$__rate_interval]
//	target-job-rule                      every selector has job=~"$job"
//	target-instance-rule                 every selector has instance=~"$instance"
//	target-counter-agg-rule              a _total series only inside rate, irate or increase
//	uneditable-dashboard                 editable: false
//
// and mixtool's own: a title and a uid. The rules apply to every panel
// type here, not only the types the linter lists, and target-job-rule to
// annotations and variable queries as well. Left out: target-logql-rule
// and target-logql-auto-rule (no Loki). Nothing is excluded.

// lintDashboard is the part of a dashboard the rules read.
type lintDashboard struct {
	UID        string    `json:"uid"`
	Title      string    `json:"title"`
	Editable   bool      `json:"editable"`
	Panels     []lintPan `json:"panels"`
	Templating struct {
		List []lintVar `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []struct {
			Name   string `json:"name"`
			Target *struct {
				Expr string `json:"expr"`
			} `json:"target"`
		} `json:"list"`
	} `json:"annotations"`
}

type lintDS struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type lintVar struct {
	Name       string          `json:"name"`
	Label      string          `json:"label"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Datasource *lintDS         `json:"datasource"`
	Multi      bool            `json:"multi"`
	IncludeAll bool            `json:"includeAll"`
	AllValue   string          `json:"allValue"`
	Refresh    int             `json:"refresh"`
	Current    struct {
		Value any `json:"value"`
	} `json:"current"`
}

// query is a variable's query, whether a string or {query: ...}.
func (v lintVar) query() string {
	var s string
	if json.Unmarshal(v.Query, &s) == nil {
		return s
	}
	var m struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal(v.Query, &m)
	return m.Query
}

type lintPan struct {
	Type        string  `json:"type"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	Datasource  *lintDS `json:"datasource"`
	Targets     []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	FieldConfig struct {
		Defaults struct {
			Unit     string `json:"unit"`
			Mappings []any  `json:"mappings"`
		} `json:"defaults"`
		Overrides []struct {
			Properties []struct {
				ID    string `json:"id"`
				Value any    `json:"value"`
			} `json:"properties"`
		} `json:"overrides"`
	} `json:"fieldConfig"`
	Options struct {
		ReduceOptions struct {
			Fields string `json:"fields"`
		} `json:"reduceOptions"`
	} `json:"options"`
	Panels []lintPan `json:"panels"`
}

// panels is every panel, those of rows included, rows left out.
func (d *lintDashboard) panels() []lintPan {
	var out []lintPan
	for _, p := range d.Panels {
		if p.Type == "row" {
			out = append(out, p.Panels...)
			continue
		}
		out = append(out, p)
	}
	return out
}

// grafanaUnits are the units these dashboards may use, each one of
// Grafana's (packages/grafana-data/src/valueFormats/categories.ts, the
// list panel-units-rule checks against): add one from there when a panel
// needs it.
var grafanaUnits = []string{
	"none", "short", "percent", "percentunit", "bytes", "decbytes", "Bps", "MBs", "iops", "ops",
	"ns", "µs", "ms", "s", "dateTimeAsIso", "dateTimeFromNow", "bool_yes_no",
}

// linter's sample values of Grafana's global variables (lint/variables.go):
// a range of this odd length tells [$__rate_interval] from any other.
var lintGlobals = map[string]string{
	"__rate_interval": "8869990787ms", "__interval": "4867856611ms", "__interval_ms": "7781188786",
	"__range_ms": "6737667980", "__range_s": "9397795485", "__range": "6069770749ms",
}

var varRE = regexp.MustCompile(`\$([[:word:]]+)|\$\{([^}]+)\}|\[\[([^\[\]]+)\]\]`)

// expand replaces the variables outside double-quoted strings as the
// linter does before parsing: globals with its samples, a dashboard
// variable with its current value or, without one, its name. Inside
// quotes ("$instance") they stay, as valid label values.
func expand(expr string, vars []lintVar) string {
	parts := strings.Split(expr, `"`)
	for i := 0; i < len(parts); i += 2 {
		parts[i] = varRE.ReplaceAllStringFunc(parts[i], func(m string) string {
			sub := varRE.FindStringSubmatch(m)
			name := sub[1] + sub[2] + sub[3]
			name, _, _ = strings.Cut(name, ":")
			if v, ok := lintGlobals[name]; ok {
				return v
			}
			for _, v := range vars {
				if s, ok := v.Current.Value.(string); ok && v.Name == name && s != "" {
					return s
				}
			}
			return name
		})
	}
	return strings.Join(parts, `"`)
}

func hasMatcher(ms []*labels.Matcher, name string, typ labels.MatchType, value string) bool {
	for _, m := range ms {
		if m.Name == name && m.Type == typ && m.Value == value {
			return true
		}
	}
	return false
}

// linted is one dashboard's findings, by rule.
type linted map[string][]string

func (l linted) add(rule, format string, args ...any) {
	l[rule] = append(l[rule], fmt.Sprintf(format, args...))
}

// lint runs the rules on one dashboard. extra are matchers every selector
// must also have (a custom mixin _config's).
func lint(d *lintDashboard, extra []*labels.Matcher) linted {
	out := linted{}
	p := parser.NewParser(parser.Options{})
	vars := d.Templating.List
	if d.Title == "" || d.UID == "" {
		out.add("mixtool", "a dashboard needs a title and a uid")
	}
	if d.Editable {
		out.add("uneditable-dashboard", "editable")
	}

	// Variables.
	byName := map[string]lintVar{}
	for _, v := range vars {
		byName[v.Name] = v
	}
	if ds, ok := byName["datasource"]; !ok || ds.Type != "datasource" || ds.query() != "prometheus" || ds.Label != "Data source" {
		out.add("template-datasource-rule", "no Prometheus datasource variable named datasource, labelled Data source")
	}
	// One finding per thing wrong, as the linter's checkTemplate reports
	// them (its label warning is an error to mixtool and to --strict).
	for _, name := range []string{"job", "instance"} {
		rule := "template-" + name + "-rule"
		v, ok := byName[name]
		if !ok {
			out.add(rule, "no %s variable", name)
			continue
		}
		if v.Datasource == nil || (v.Datasource.UID != "${datasource}" && v.Datasource.UID != "$datasource") {
			out.add(rule, "%s: not on ${datasource}", name)
		}
		if v.Type != "query" {
			out.add(rule, "%s: a %s variable, not a query", name, v.Type)
		}
		if v.Label != strings.ToUpper(name[:1])+name[1:] {
			out.add(rule, "%s: labelled %q", name, v.Label)
		}
		if !v.Multi {
			out.add(rule, "%s: not multi-valued", name)
		}
		if v.AllValue != ".+" {
			out.add(rule, "%s: allValue %q, not .+", name, v.AllValue)
		}
	}
	labelValues := regexp.MustCompile(`^label_values\((.+), *([a-zA-Z_][a-zA-Z0-9_]*)\)$`)
	// A variable's query can use only the variables before it (those up
	// to job choose what job lists); a panel's, every one.
	declared, all := map[string]bool{}, map[string]bool{}
	for _, v := range vars {
		all[v.Name] = true
	}
	for _, v := range vars {
		before := maps.Clone(declared)
		declared[v.Name] = true
		if v.Type != "query" {
			continue
		}
		if v.Refresh != 2 {
			out.add("template-on-time-change-reload-rule", "%s: refresh %d", v.Name, v.Refresh)
		}
		m := labelValues.FindStringSubmatch(v.query())
		if m == nil {
			out.add("template-label-promql-rule", "%s: %q is not label_values(series, label)", v.Name, v.query())
			continue
		}
		e, err := p.ParseExpr(expand(m[1], vars))
		if err != nil {
			out.add("template-label-promql-rule", "%s: %v", v.Name, err)
			continue
		}
		checkSelectors(out, "variable "+v.Name, e, extra, false, before)
	}

	// Panels and their queries.
	for _, pan := range d.panels() {
		what := fmt.Sprintf("%q", pan.Title)
		if pan.Datasource == nil || pan.Datasource.UID != "${datasource}" {
			out.add("panel-datasource-rule", "%s", what)
		}
		if pan.Title == "" || pan.Description == "" {
			out.add("panel-title-description-rule", "%s", what)
		}
		if len(pan.Targets) == 0 {
			out.add("panel-no-targets-rule", "%s", what)
		}
		lintUnits(out, pan)
		for _, t := range pan.Targets {
			e, err := p.ParseExpr(expand(t.Expr, vars))
			if err != nil {
				out.add("target-promql-rule", "%s %s: %v", what, t.RefID, err)
				continue
			}
			checkSelectors(out, what+" "+t.RefID, e, extra, true, all)
			checkFunctions(out, what+" "+t.RefID, e)
		}
	}
	for _, a := range d.Annotations.List {
		if a.Target == nil || a.Target.Expr == "" {
			continue
		}
		e, err := p.ParseExpr(expand(a.Target.Expr, vars))
		if err != nil {
			out.add("target-promql-rule", "annotation %q: %v", a.Name, err)
			continue
		}
		checkSelectors(out, "annotation "+a.Name, e, extra, false, all)
	}
	return out
}

// checkSelectors: target-job-rule and target-instance-rule (the latter
// on panels' queries, as the linter has it), and the extra matchers, of
// which those on a variable ($name) only where that variable is declared
// (vars: for a variable's own query, those before it).
func checkSelectors(out linted, what string, e parser.Expr, extra []*labels.Matcher, instance bool, vars map[string]bool) {
	for _, sel := range parser.ExtractSelectors(e) {
		if vars["job"] && !hasMatcher(sel, "job", labels.MatchRegexp, "$job") {
			out.add("target-job-rule", "%s: %v", what, sel)
		}
		if instance && !hasMatcher(sel, "instance", labels.MatchRegexp, "$instance") {
			out.add("target-instance-rule", "%s: %v", what, sel)
		}
		for _, m := range extra {
			if v, isVar := strings.CutPrefix(m.Value, "$"); isVar && !vars[v] {
				continue
			}
			if !hasMatcher(sel, m.Name, m.Type, m.Value) {
				out.add("mixin-selector", "%s: %v lacks %v", what, sel, m)
			}
		}
	}
}

// checkFunctions: target-rate-interval-rule and target-counter-agg-rule.
func checkFunctions(out linted, what string, e parser.Expr) {
	rateInterval, _ := time.ParseDuration(lintGlobals["__rate_interval"])
	parser.Inspect(e, func(n parser.Node, path []parser.Node) error {
		switch n := n.(type) {
		case *parser.MatrixSelector:
			if len(path) > 0 {
				if c, ok := path[len(path)-1].(*parser.Call); ok && (c.Func.Name == "rate" || c.Func.Name == "irate") && n.Range != rateInterval {
					out.add("target-rate-interval-rule", "%s: %s", what, c)
				}
			}
		case *parser.VectorSelector:
			if !strings.HasSuffix(n.Name, "_total") {
				return nil
			}
			ok := len(path) >= 2
			if ok {
				_, ok = path[len(path)-1].(*parser.MatrixSelector)
			}
			if ok {
				c, isCall := path[len(path)-2].(*parser.Call)
				ok = isCall && slices.Contains([]string{"rate", "irate", "increase"}, c.Func.Name)
			}
			if !ok {
				out.add("target-counter-agg-rule", "%s: %s", what, n)
			}
		}
		return nil
	})
}

// lintUnits: panel-units-rule for the linter's panel types, and every unit
// set anywhere one of Grafana's.
func lintUnits(out linted, p lintPan) {
	what := fmt.Sprintf("%q", p.Title)
	units, mappings := []string{}, len(p.FieldConfig.Defaults.Mappings) > 0
	if u := p.FieldConfig.Defaults.Unit; u != "" {
		units = append(units, u)
	}
	for _, o := range p.FieldConfig.Overrides {
		for _, prop := range o.Properties {
			switch prop.ID {
			case "unit":
				units = append(units, fmt.Sprint(prop.Value))
			case "mappings":
				mappings = mappings || prop.Value != nil
			}
		}
	}
	for _, u := range units {
		if !slices.Contains(grafanaUnits, u) {
			out.add("panel-units-rule", "%s: unit %q", what, u)
		}
	}
	switch p.Type {
	case "stat", "singlestat", "graph", "table", "timeseries", "gauge":
	default:
		return
	}
	if p.Type == "stat" && p.Options.ReduceOptions.Fields != "" {
		return // the linter's exemption: non-numeric fields
	}
	if p.Type == "table" && p.FieldConfig.Defaults.Unit == "" {
		out.add("panel-units-rule", "%s: a table without a unit", what)
	}
	if len(units) == 0 && !mappings {
		out.add("panel-units-rule", "%s: no unit", what)
	}
}

func loadLintDashboard(t *testing.T, name string, b []byte) *lintDashboard {
	t.Helper()
	var d lintDashboard
	require.NoError(t, json.Unmarshal(b, &d), name)
	return &d
}

// shippedDashboards are grafana/dashboards/*.json.
func shippedDashboards(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "grafana", "dashboards", "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 3)
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		out[filepath.Base(f)] = b
	}
	return out
}

// renderMixinDashboards renders the mixin's grafanaDashboards with a
// _config override (jsonnet), as mixtool and kube-prometheus do.
func renderMixinDashboards(t *testing.T, config string) map[string][]byte {
	t.Helper()
	vm := jsonnet.MakeVM()
	vm.Importer(&jsonnet.FileImporter{JPaths: []string{filepath.Join("..", "..", "mixin")}})
	out, err := vm.EvaluateAnonymousSnippet("render.jsonnet", "((import 'mixin.libsonnet') + {_config+:: "+config+"}).grafanaDashboards")
	require.NoError(t, err)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	res := map[string][]byte{}
	for k, v := range m {
		res[k] = v
	}
	return res
}

func requireClean(t *testing.T, dashboards map[string][]byte, extra []*labels.Matcher) {
	t.Helper()
	for name, b := range dashboards {
		d := loadLintDashboard(t, name, b)
		for rule, findings := range lint(d, extra) {
			for _, f := range findings {
				t.Errorf("[%s] %s: %s", rule, name, f)
			}
		}
	}
}

// The shipped dashboards pass the dashboard-linter rules.
func TestDashboardsPassDashboardLinter(t *testing.T) {
	requireClean(t, shippedDashboards(t), nil)
}

// The mixin's dashboards, rendered with a kube-prometheus user's _config
// (another job, a namespace, a cluster variable before Job), pass them
// too, and that selector and variable reach every query.
func TestMixinDashboardsPassDashboardLinter(t *testing.T) {
	rendered := renderMixinDashboards(t, `{ioprobeSelector: 'job=~"storage-probe.*", namespace="storage"', scopeLabels: 'cluster'}`)
	require.Len(t, rendered, 3)
	extra := []*labels.Matcher{
		labels.MustNewMatcher(labels.MatchRegexp, "job", "storage-probe.*"),
		labels.MustNewMatcher(labels.MatchEqual, "namespace", "storage"),
		labels.MustNewMatcher(labels.MatchRegexp, "cluster", "$cluster"),
	}
	requireClean(t, rendered, extra)
	for name, b := range rendered {
		d := loadLintDashboard(t, name, b)
		var names []string
		for _, v := range d.Templating.List {
			names = append(names, v.Name)
		}
		require.Equal(t, []string{"datasource", "cluster", "job"}, names[:3], name)
		cluster := d.Templating.List[1]
		require.Equal(t, `label_values(ioprobe_build_info{job=~"storage-probe.*", namespace="storage"}, cluster)`, cluster.query())
		require.True(t, cluster.Multi)
		require.Equal(t, ".+", cluster.AllValue)
	}
}

// The rules find what they are meant to: a dashboard as the shipped ones
// were before they had a Job variable (no job matcher, instance All as .*,
// a table without a unit, editable) fails the rules that say so.
func TestDashboardLinterRulesFind(t *testing.T) {
	b := shippedDashboards(t)["ioprobe-overview.json"]
	old := strings.ReplaceAll(string(b), `job=\"ioprobe\", job=~\"$job\", `, "")
	old = strings.ReplaceAll(old, `"allValue": ".+"`, `"allValue": ".*"`)
	old = strings.Replace(old, `"editable": false`, `"editable": true`, 1)
	old = strings.Replace(old, `"unit": "dateTimeFromNow"`, `"unit": ""`, 1)
	old = strings.Replace(old, `rate(ioprobe_io_bytes_total{`, `ioprobe_io_bytes_total + rate(ioprobe_io_bytes_total[5m]) + rate(ioprobe_io_bytes_total{`, 1)
	found := lint(loadLintDashboard(t, "old", []byte(old)), nil)
	for _, rule := range []string{"target-job-rule", "template-instance-rule", "uneditable-dashboard", "panel-units-rule", "target-rate-interval-rule", "target-counter-agg-rule"} {
		require.NotEmpty(t, found[rule], "%s finds nothing in %v", rule, found)
	}
}

// The rules find what the real tools found, one for one: on the
// dashboards as they shipped before issue 35 (Characterization's single
// host, instance="$instance"; the Comparison's baseline selectors without
// instance=~"$instance"), dashboard-linter lint (1be3836) and mixtool lint
// (496ea9a) reported target-instance-rule 13 times on Characterization
// and 4 on Comparison, and template-instance-rule twice (not multi, its
// allValue ”), 19 errors.
func TestDashboardLinterFindsWhatTheRealToolsFound(t *testing.T) {
	shipped := shippedDashboards(t)
	var char map[string]any
	require.NoError(t, json.Unmarshal(shipped["ioprobe-characterization.json"], &char))
	for _, v := range char["templating"].(map[string]any)["list"].([]any) {
		if v := v.(map[string]any); v["name"] == "instance" {
			v["multi"], v["includeAll"] = false, false
			delete(v, "allValue")
			delete(v, "current")
		}
	}
	b, err := json.Marshal(char)
	require.NoError(t, err)
	one := strings.ReplaceAll(string(b), `instance=~\"$instance\"`, `instance=\"$instance\"`)
	found := lint(loadLintDashboard(t, "characterization", []byte(one)), nil)
	require.Len(t, found["target-instance-rule"], 13, "%v", found)
	require.Len(t, found["template-instance-rule"], 2, "%v", found)
	require.Len(t, found, 2, "nothing else: %v", found)

	cmp := strings.ReplaceAll(string(shipped["ioprobe-comparison.json"]), `instance=~\"$instance\", instance=\"$baseline_instance\"`, `instance=\"$baseline_instance\"`)
	found = lint(loadLintDashboard(t, "comparison", []byte(cmp)), nil)
	require.Len(t, found["target-instance-rule"], 4, "%v", found)
	require.Len(t, found, 1, "nothing else: %v", found)
}
