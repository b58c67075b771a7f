// Package dashboards generates grafana/: the Grafana dashboards that rebuild
// the reference reports' tables and figures from what `ioprobe serve`
// exports (docs/metrics.md), and the provisioning files that load them.
//
// The dashboards are written with the Grafana Foundation SDK's typed
// builders, so a misspelt option is a compile error rather than a panel that
// silently ignores it. Files returns every generated file; cmd/gen writes
// them; a test fails when the committed grafana/ differs from what this code
// generates. Which panel rebuilds which table or figure is in
// docs/dashboards.md.
//
// The dashboards' queries are a contract with two other places: the metric
// names and labels of docs/metrics.md, and the recording rules of
// configs/prometheus/rules.yml that some panels read. The end-to-end tests in
// test/ run every panel's query against a real Prometheus scraping a real
// daemon with those rules loaded.
package dashboards

//go:generate go run ./cmd/gen -out ../../grafana -rules ../../configs/prometheus -mixin ../../mixin
