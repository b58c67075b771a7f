package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/barchart"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/heatmap"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

func ptr[T any](v T) *T { return &v }

// ds is the data source of every panel, annotation and variable: the
// dashboard's own datasource variable, so that one file serves any
// Prometheus a user points it at.
var ds = common.DataSourceRef{Type: ptr("prometheus"), Uid: ptr("${datasource}")}

// series is a range query: a line per series over the dashboard's time range.
func series(ref, expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().RefId(ref).Expr(expr).LegendFormat(legend).
		Range().Format(prometheus.PromQueryFormatTimeSeries)
}

// instant is an instant query in table format (one row per series, one
// column per label): what the reports' tables and bar charts are rebuilt
// from, since a last-run gauge means the same thing all day.
func instant(ref, expr string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().RefId(ref).Expr(expr).
		Instant().Format(prometheus.PromQueryFormatTable)
}

// grid lays an instant table out the way the reports print theirs: one row
// per value of the label row, one column per value of the label col, the
// query's value in each cell.
type grid struct {
	row, col string
	// rowTitle heads the first column ("Data size").
	rowTitle string
	// numeric sorts the rows as numbers: a label is a string, and Grafana
	// would put 16384 before 4096. Grafana's groupingToMatrix keeps the rows
	// in the order it first meets them, so the row header is converted to a
	// number and sorted after the grouping.
	numeric bool
	// rowUnit formats the row header ("bytes": 4096 reads "4 KiB").
	rowUnit string
	// columns is the column order when the report fixes one.
	columns []string
}

// field is the name groupingToMatrix gives the row header.
func (g grid) field() string { return g.row + `\` + g.col }

func (g grid) transformations() []dashboard.DataTransformerConfig {
	f := g.field()
	out := []dashboard.DataTransformerConfig{{
		Id:      "groupingToMatrix",
		Options: map[string]any{"rowField": g.row, "columnField": g.col, "valueField": "Value"},
	}}
	if g.numeric {
		out = append(out, dashboard.DataTransformerConfig{
			Id: "convertFieldType",
			Options: map[string]any{
				"fields":      map[string]any{},
				"conversions": []any{map[string]any{"targetField": f, "destinationType": "number"}},
			},
		})
	}
	out = append(out, dashboard.DataTransformerConfig{
		Id:      "sortBy",
		Options: map[string]any{"fields": map[string]any{}, "sort": []any{map[string]any{"field": f, "desc": false}}},
	})
	// organize orders fields by their names before it renames them.
	index := map[string]any{f: 0}
	for i, c := range g.columns {
		index[c] = i + 1
	}
	out = append(out, dashboard.DataTransformerConfig{
		Id: "organize",
		Options: map[string]any{
			"excludeByName": map[string]any{},
			"indexByName":   index,
			"renameByName":  map[string]any{f: g.rowTitle},
		},
	})
	return out
}

// rowFieldConfig is the row header's own field config: its unit, and no
// decimals or colours meant for the values.
func (g grid) rowFieldConfig() []dashboard.DynamicConfigValue {
	unit := g.rowUnit
	if unit == "" {
		unit = "none"
	}
	return []dashboard.DynamicConfigValue{{Id: "unit", Value: unit}, {Id: "decimals", Value: 0}}
}

// yesNo shows a 0 or 1 success gauge as no or yes.
var yesNo = []dashboard.DynamicConfigValue{{Id: "mappings", Value: []any{
	map[string]any{"type": "value", "options": map[string]any{
		"0": map[string]any{"text": "no", "color": "red"},
		"1": map[string]any{"text": "yes", "color": "green"},
	}},
}}}

// newTable is a table panel. Its cells say how they are drawn (Grafana's
// published types require cellOptions); it has no footer (the SDK's
// options.footer is gone from Grafana 13's table: cleanPanels drops it).
func newTable(title, desc string) *table.PanelBuilder {
	return table.NewPanelBuilder().Title(title).Description(desc).Datasource(ds).
		CellOptions(common.TableCellOptions{TableAutoCellOptions: &common.TableAutoCellOptions{Type: common.TableCellDisplayModeAuto}}).
		CellHeight(common.TableCellHeightSm)
}

// matrixTable is one of the reports' tables: rows by g.row, columns by g.col.
func matrixTable(title, desc, unit string, decimals float64, g grid, q *prometheus.DataqueryBuilder) *table.PanelBuilder {
	return newTable(title, desc).
		WithTarget(q).Transformations(g.transformations()).
		Unit(unit).Decimals(decimals).
		OverrideByName(g.rowTitle, g.rowFieldConfig()).
		Span(12).Height(7)
}

// matrixBars is one of the reports' bar charts: a group of bars per value
// of g.row along the x axis, a bar per value of g.col in each group.
func matrixBars(title, desc, unit string, g grid, q *prometheus.DataqueryBuilder) *barchart.PanelBuilder {
	return barchart.NewPanelBuilder().Title(title).Description(desc).Datasource(ds).
		WithTarget(q).Transformations(g.transformations()).
		XField(g.rowTitle).Unit(unit).Min(0).
		OverrideByName(g.rowTitle, g.rowFieldConfig()).
		ShowValue(common.VisibilityModeNever).
		Legend(common.NewVizLegendOptionsBuilder().ShowLegend(true).
			DisplayMode(common.LegendDisplayModeList).Placement(common.LegendPlacementBottom)).
		Tooltip(common.NewVizTooltipOptionsBuilder().Mode(common.TooltipDisplayModeMulti).Sort(common.SortOrderNone)).
		Span(12).Height(9)
}

// lines is a time series panel.
func lines(title, desc, unit string, qs ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().Title(title).Description(desc).Datasource(ds).
		Unit(unit).Min(0).FillOpacity(10).ShowPoints(common.VisibilityModeNever).
		Legend(common.NewVizLegendOptionsBuilder().ShowLegend(true).
			DisplayMode(common.LegendDisplayModeTable).Placement(common.LegendPlacementBottom).
			Calcs([]string{"mean", "max", "lastNotNull"})).
		Tooltip(common.NewVizTooltipOptionsBuilder().Mode(common.TooltipDisplayModeMulti).Sort(common.SortOrderDescending)).
		Span(12).Height(9)
	for _, q := range qs {
		p.WithTarget(q)
	}
	return p
}

// latencyHeatmap draws a latency histogram over time. Native histograms
// come back from Grafana's Prometheus data source as heatmap cells already
// (the query keeps the default time series format: the heatmap format would
// re-bucket them by an le label they do not have); classic buckets need the
// heatmap format, which turns cumulative le series into cells.
func latencyHeatmap(title, desc string, q *prometheus.DataqueryBuilder) *heatmap.PanelBuilder {
	return heatmap.NewPanelBuilder().Title(title).Description(desc).Datasource(ds).
		WithTarget(q).Calculate(false).
		YAxis(heatmap.NewYAxisConfigBuilder().Unit("s")).
		Color(heatmap.NewHeatmapColorOptionsBuilder().Mode(heatmap.HeatmapColorModeScheme).
			Scheme("Spectral").Scale(heatmap.HeatmapColorScaleExponential).Exponent(0.5).Steps(64)).
		CellGap(1).ShowValue(common.VisibilityModeNever).
		Tooltip(heatmap.NewHeatmapTooltipBuilder().Mode(common.TooltipDisplayModeSingle).YHistogram(true)).
		Span(12).Height(9)
}

// single is a stat panel of one instant value per series.
func single(title, desc, unit string, q *prometheus.DataqueryBuilder) *stat.PanelBuilder {
	return stat.NewPanelBuilder().Title(title).Description(desc).Datasource(ds).
		WithTarget(q).Unit(unit).GraphMode(common.BigValueGraphModeNone).
		ColorMode(common.BigValueColorModeNone).
		// The SDK writes orientation "" when none is set, which Grafana's
		// types reject and Grafana reads as one value only.
		Orientation(common.VizOrientationAuto).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}).Values(false)).
		Span(6).Height(5)
}

// listTable is a plain table of instant queries' series and labels; the
// rows of several queries are merged on their labels (Value #A, Value #B…).
// unit is its values' (overrides set other columns' own).
func listTable(title, desc, unit string, organize map[string]any, qs ...*prometheus.DataqueryBuilder) *table.PanelBuilder {
	p := newTable(title, desc).Unit(unit).Span(12).Height(8)
	for _, q := range qs {
		p.WithTarget(q)
	}
	if len(qs) > 1 {
		p.WithTransformation(dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}})
	}
	return p.WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: organize})
}
