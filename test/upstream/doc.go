// Package upstream checks ioprobe's shipped files with the upstream
// projects' own Go code, in a module of its own so that ioprobe's
// dependencies stay as they are: the Kubernetes objects of
// configs/kubernetes decoded strictly into k8s.io/api's and the Prometheus
// Operator's types (with kube-linter's default container checks), and the
// Grafana dashboards, as shipped and as the mixin renders them, against
// the rules of Grafana's dashboard-linter, with Prometheus' PromQL parser.
// It has tests only; make test runs them (scripts/test.sh).
package upstream
