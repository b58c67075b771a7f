// Package strictjson finds what encoding/json would take silently in an
// untrusted document: a key that matches a field only when case is
// ignored ("Lines" for "lines": encoding/json matches keys
// case-insensitively, so a check that reads the key as written misses
// it) and a key an object gives twice (encoding/json keeps the last, a
// reader of the first sees another value). The run API's requests, the
// result, suite and fleet documents that report and compare read, and the
// daemons' answers that the fleet reads are checked with it before they
// are decoded.
package strictjson
