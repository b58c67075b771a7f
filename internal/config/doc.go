// Package config reads the daemon's configuration (`ioprobe serve
// --config FILE`): the targets it may touch, the jobs it runs on a schedule
// or continuously, and the modules /probe may run on demand.
//
// It owns decoding (YAML through one viper.New() instance per Load),
// strictness (an unknown key or a value of the wrong type is an error that
// names the key and its line, found with the go.yaml.in/yaml/v3 node API
// because viper keeps no line numbers), defaults, and validation with exact
// error texts. A Config is immutable once Load returns it, so the daemon
// can swap the live one atomically on reload. Load never looks at the
// machine; CheckRuns does (with a check the caller gives, touching no
// data), for --config.check and the daemon's start.
package config
