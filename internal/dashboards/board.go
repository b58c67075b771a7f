package dashboards

//lint:file-ignore SA1019 Grafana's file provisioning loads the v1 dashboard JSON model this file builds; dashboardv2 is a different format

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/table"
)

// Tag is on every ioprobe dashboard; the dashboards link to each other by it.
const Tag = "ioprobe"

// datasourceVar picks the Prometheus every query goes to.
func datasourceVar() *dashboard.DatasourceVariableBuilder {
	return dashboard.NewDatasourceVariableBuilder("datasource").Label("Data source").Type("prometheus")
}

// scoped is the selector every query of every dashboard starts with: the
// mixin's _config.dashboardSelector (ioprobeSelector, a variable per
// scope label, the Job variable), filled in by Files with the defaults
// (job="ioprobe", job=~"$job") and by the mixin with the user's _config.
const scoped = "%(dashboardSelector)s"

// jobVar is the Prometheus job (the scrape job's job label, not ioprobe's
// ioprobe_job) among those ioprobeSelector and the scope variables before
// it select: two deployments in one Prometheus are told apart by it, as
// dashboard-linter's template-job-rule asks (named job, labelled Job,
// multi-valued, All as .+).
func jobVar() *dashboard.QueryVariableBuilder {
	return labelVar("job", "Job", "ioprobe_build_info{%(scopeSelector)s}", "job", true)
}

// labelVar is a variable over the values of a label: `label_values(series,
// label)`. A multi-valued one offers All, which matches every value of the
// label (.+: dashboard-linter's all-value, which unlike .* does not match
// series without it) rather than listing every value, so queries stay
// short on large fleets; queries use it as `label=~"$name"`. A
// single-valued one is used as `label="$name"`.
func labelVar(name, label, series, lbl string, multi bool) *dashboard.QueryVariableBuilder {
	q := fmt.Sprintf("label_values(%s, %s)", series, lbl)
	v := dashboard.NewQueryVariableBuilder(name).Label(label).Datasource(ds).
		Query(dashboard.StringOrMap{String: ptr(q)}).Definition(q).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc)
	if multi {
		v.Multi(true).IncludeAll(true).AllValue(".+").
			Current(dashboard.VariableOption{Text: dashboard.StringOrArrayOfString{ArrayOfString: []string{"All"}},
				Value: dashboard.StringOrArrayOfString{ArrayOfString: []string{"$__all"}}})
	}
	return v
}

// preferred makes a single-valued variable start on value when it exists.
func preferred(v *dashboard.QueryVariableBuilder, value string) *dashboard.QueryVariableBuilder {
	return v.Current(dashboard.VariableOption{Text: dashboard.StringOrArrayOfString{String: ptr(value)},
		Value: dashboard.StringOrArrayOfString{String: ptr(value)}})
}

// row is a dashboard row and the panels under it.
type row struct {
	title     string
	collapsed bool
	// repeat names a multi-valued variable: Grafana draws the row and
	// its panels once per chosen value, each with the variable set to
	// that value alone.
	repeat string
	panels []cog.Builder[dashboard.Panel]
}

// board is what each dashboard declares; build turns it into Grafana's model.
type board struct {
	uid, title, description string
	timeFrom, refresh       string
	vars                    []cog.Builder[dashboard.VariableModel]
	annotations             []cog.Builder[dashboard.AnnotationQuery]
	rows                    []row
}

func (b board) build() (dashboard.Dashboard, error) {
	d := dashboard.NewDashboardBuilder(b.title).Uid(b.uid).Description(b.description).
		// Not editable (dashboard-linter's uneditable-dashboard): these are
		// generated; Save as makes a copy of one's own.
		Tags([]string{Tag}).Readonly().Timezone(common.TimeZoneBrowser).
		Time(b.timeFrom, "now").Refresh(b.refresh).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Link(dashboard.NewDashboardLinkBuilder("ioprobe").Type(dashboard.DashboardLinkTypeDashboards).
			Tags([]string{Tag}).AsDropdown(true).IncludeVars(true).KeepTime(true)).
		WithVariable(datasourceVar()).WithVariable(jobVar())
	for _, v := range b.vars {
		d.WithVariable(v)
	}
	// Grafana's own annotations (alerts, manual notes) stay available.
	d.Annotation(dashboard.NewAnnotationQueryBuilder().Name("Annotations & Alerts").BuiltIn(1).Hide(true).
		Enable(true).IconColor("rgba(0, 211, 255, 1)").Type("dashboard").
		Datasource(common.DataSourceRef{Type: ptr("grafana"), Uid: ptr("-- Grafana --")}))
	for _, a := range b.annotations {
		d.Annotation(a)
	}
	for _, r := range b.rows {
		rb := dashboard.NewRowBuilder(r.title).Collapsed(r.collapsed)
		if r.repeat != "" {
			rb.Repeat(r.repeat)
		}
		if r.collapsed {
			for _, p := range r.panels {
				rb.WithPanel(p)
			}
			d.WithRow(rb)
			continue
		}
		d.WithRow(rb)
		for _, p := range r.panels {
			d.WithPanel(p)
		}
	}
	out, err := d.Build()
	if err != nil {
		return out, fmt.Errorf("dashboard %s: %w", b.uid, err)
	}
	numberPanels(&out)
	cleanPanels(&out)
	return out, nil
}

// cleanPanels drops what the SDK writes by default and Grafana's published
// types (@grafana/schema, test/grafana_schema_test.go) do not have: an
// interval variable's auto, auto_min and auto_count on every other
// variable, and the table's options.footer (Grafana 13 has per-field
// footers; ours showed none).
func cleanPanels(d *dashboard.Dashboard) {
	for i := range d.Templating.List {
		if v := &d.Templating.List[i]; v.Type != dashboard.VariableTypeInterval {
			v.Auto, v.AutoMin, v.AutoCount = nil, nil, nil
		}
	}
	clean := func(p *dashboard.Panel) {
		if o, ok := p.Options.(*table.Options); ok {
			o.Footer = nil
		}
	}
	for i := range d.Panels {
		if p := d.Panels[i].Panel; p != nil {
			clean(p)
		}
		if r := d.Panels[i].RowPanel; r != nil {
			for j := range r.Panels {
				clean(&r.Panels[j])
			}
		}
	}
}

// numberPanels gives every panel and row the id Grafana would otherwise
// make up on load, so links to a panel (viewPanel=N) stay valid.
func numberPanels(d *dashboard.Dashboard) {
	id := uint32(0)
	next := func() uint32 { id++; return id }
	for i := range d.Panels {
		p := &d.Panels[i]
		if p.Panel != nil {
			p.Panel.Id = ptr(next())
		}
		if p.RowPanel != nil {
			p.RowPanel.Id = next()
			for j := range p.RowPanel.Panels {
				p.RowPanel.Panels[j].Id = ptr(next())
			}
		}
	}
}

// promAnnotation marks events on every time series panel from a Prometheus
// query. Without useValueForTime, each stretch of samples above zero is one
// region; with it, the sample's value (in milliseconds) is the event's time.
func promAnnotation(name, color, expr, title, text, tags string, useValueForTime, enabled bool) *dashboard.AnnotationQueryBuilder {
	return dashboard.NewAnnotationQueryBuilder().Name(name).Datasource(ds).Enable(enabled).Hide(false).
		IconColor(color).
		Target(prometheus.NewDataqueryBuilder().RefId("Anno").Expr(expr)).
		Step("15s").TitleFormat(title).TextFormat(text).TagKeys(tags).UseValueForTime(useValueForTime)
}

// runsAnnotation is a region while a job of sel runs on a target;
// continuous jobs are left out, they would be one endless region.
func runsAnnotation(sel string) *dashboard.AnnotationQueryBuilder {
	return promAnnotation("Runs", "rgba(255, 152, 48, 0.6)",
		fmt.Sprintf("ioprobe_run_active{%s} == 1 unless on (job, instance, target, ioprobe_job) ioprobe_canary_paused{%s}", sel, sel),
		"{{ioprobe_job}} on {{target}}", "{{instance}}", "instance,target,ioprobe_job", false, true)
}
