package ownio

// Hint is the I/O priority hint ioprobe's own I/O carries: the same value
// as OWN_HINT in internal/devlat/bpf/kernel.h.
const Hint = 0x3ff
