// Package cli holds ioprobe's cobra commands, one file each, and maps
// errors to the documented exit codes. It is the only package that imports
// cobra; commands are built by constructor functions (no init, no globals)
// and their logic lives in runX functions that tests call directly.
package cli
