package dashquery

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestInterpolate(t *testing.T) {
	vars := []Variable{
		{Name: "instance", Multi: true, IncludeAll: true, AllValue: ".*"},
		{Name: "target", Multi: true, IncludeAll: true},
		{Name: "job"},
	}
	macros := Macros{"__rate_interval": "4s", "__range": "60s"}
	for _, c := range []struct {
		expr   string
		values map[string][]string
		want   string
	}{
		{`x{instance=~"$instance"}`, map[string][]string{"instance": {All}}, `x{instance=~".*"}`},
		{`x{instance=~"$instance"}`, map[string][]string{"instance": {"127.0.0.1:9816"}}, `x{instance=~"127\\.0\\.0\\.1:9816"}`},
		{`x{instance=~"${instance}"}`, map[string][]string{"instance": {"a", "b.c"}}, `x{instance=~"(a|b\\.c)"}`},
		// All without an allValue lists every value.
		{`x{target=~"[[target]]"}`, map[string][]string{"target": {"a", "b"}}, `x{target=~"(a|b)"}`},
		{`x{job="$job"}`, map[string][]string{"job": {`a\b`}}, `x{job="a\\b"}`},
		{`rate(x[$__rate_interval]) + increase(x[$__range])`, nil, `rate(x[4s]) + increase(x[60s])`},
		{`label_replace(x, "p", "$1 $2", "l", "(.*)\\|(.*)")`, nil, `label_replace(x, "p", "$1 $2", "l", "(.*)\\|(.*)")`},
	} {
		got, err := Interpolate(c.expr, vars, c.values, macros)
		require.NoError(t, err, c.expr)
		require.Equal(t, c.want, got, c.expr)
	}
	_, err := Interpolate(`x{a="$nope"}`, vars, nil, macros)
	require.EqualError(t, err, `x{a="$nope"}: no value for variable $nope`)
	_, err = Interpolate(`x{a="$job"}`, vars, nil, macros)
	require.Error(t, err, "a variable without a chosen value")
}

func TestReferences(t *testing.T) {
	require.Equal(t, []string{"instance", "target"},
		References(`x{instance=~"$instance", target="${target}"}[$__rate_interval] "$1"`))
}

func TestLabelValues(t *testing.T) {
	s, l, ok := LabelValues(`label_values(ioprobe_run_operations_per_second{instance="$instance"}, target)`)
	require.True(t, ok)
	require.Equal(t, `ioprobe_run_operations_per_second{instance="$instance"}`, s)
	require.Equal(t, "target", l)
	s, l, ok = LabelValues(`label_values(instance)`)
	require.True(t, ok)
	require.Equal(t, "", s)
	require.Equal(t, "instance", l)
	_, _, ok = LabelValues(`query_result(up)`)
	require.False(t, ok)
}

func TestParse(t *testing.T) {
	d, err := Parse([]byte(`{
	  "uid": "u", "title": "T",
	  "panels": [
	    {"type": "row", "title": "r", "panels": []},
	    {"id": 2, "type": "table", "title": "t", "targets": [{"refId": "A", "expr": "up", "instant": true, "format": "table"}],
	     "transformations": [
	       {"id": "groupingToMatrix", "options": {"rowField": "block_size_bytes", "columnField": "workload", "valueField": "Value"}},
	       {"id": "convertFieldType", "options": {"conversions": [{"targetField": "x", "destinationType": "number"}]}},
	       {"id": "organize", "options": {"indexByName": {"x": 0, "B": 2, "A": 1}}}]},
	    {"type": "row", "title": "collapsed", "collapsed": true, "panels": [
	      {"id": 4, "type": "timeseries", "title": "inner", "targets": [{"refId": "A", "expr": "rate(x[1m])", "range": true}]}]}
	  ],
	  "templating": {"list": [{"name": "datasource", "type": "datasource", "query": "prometheus"},
	                          {"name": "v", "type": "query", "query": {"query": "label_values(v)"}}]},
	  "annotations": {"list": [{"name": "a", "enable": true, "target": {"expr": "up == 0"}}, {"name": "old", "expr": "up"}]}
	}`))
	require.NoError(t, err)
	require.Len(t, d.Panels, 2)
	require.Equal(t, "inner", d.Panels[1].Title)
	row, col, numeric, ok := d.Panels[0].Grid()
	require.True(t, ok)
	require.True(t, numeric)
	require.Equal(t, "block_size_bytes", row)
	require.Equal(t, "workload", col)
	require.Equal(t, []string{"A", "B"}, d.Panels[0].Columns())
	require.Equal(t, "label_values(v)", d.Variables[1].QueryString())
	require.Equal(t, "up == 0", d.Annotations[0].Expr)
	require.Equal(t, "up", d.Annotations[1].Expr)
}
