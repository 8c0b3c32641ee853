// Package chart holds the nriwasm Helm chart (Chart.yaml, values.yaml,
// values.schema.json, templates/) and its tests: every meaningful
// combination of values rendered and linted with Helm as a library, each
// rendered object decoded strictly into its Kubernetes API type, the
// generated agent configuration loaded by host/config, and the RBAC and
// admission policy compared with the ones the integration suite tests
// against a real API server (integration/kubeapi/rbac). README.md beside
// this file documents every value.
package chart
