package test

// handFSCases are hand-built filesystem headers, each from the published
// format its source names, for the types no Debian package here creates.
var handFSCases = []sigCase{}
