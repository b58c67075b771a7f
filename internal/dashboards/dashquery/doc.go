// Package dashquery reads Grafana dashboard files for what they ask
// Prometheus, and fills in their template variables and macros the way
// Grafana's Prometheus data source does, so that tests can run every panel,
// annotation and variable query of a dashboard against a real Prometheus
// without a Grafana.
package dashquery
