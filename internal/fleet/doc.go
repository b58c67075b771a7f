// Package fleet is the client side of `ioprobe fleet`: it reads the host
// list (addresses, a file, every address of a DNS name), talks to the
// `ioprobe serve` daemons' run API (/api/v1/clock, /api/v1/runs), checks
// every host before starting any, posts one run with a common start
// instant to all of them, polls each for its state until it ends, and
// stops them all on request. It holds no samples: each host measures on
// its own and hands back its ioprobe.result/v1 at the end, which the
// caller merges (pkg/result.MergeFleet).
package fleet
