// Package devlat measures block devices' own latency in the kernel: BPF
// programs on the block layer's request tracepoints (block_rq_insert,
// block_rq_issue, block_rq_complete) time every request of the watched
// devices from issue to completion (the device's service time: driver
// and device) and from insert to issue (queue time), and record them in
// per-CPU maps laid out as ioprobe's own latency histogram
// (pkg/result.Histogram), so that the kernel's histograms and ioprobe's
// merge exactly.
//
// The programs are C (bpf/), compiled by clang through cilium/ebpf's
// bpf2go into devlat_bpfel.o and its loader devlat_bpfel.go, both
// committed (make bpf regenerates them). They are CO-RE: the kernel
// fields they read are fitted to the running kernel by name from its BTF
// when they load, so one binary runs on any kernel with BTF (Linux 5.11
// and later: the tracepoints' current arguments).
//
// Loading needs root or CAP_BPF with CAP_PERFMON, a kernel with BTF and
// not locked down for confidentiality. When it cannot load, Open says why
// in one line (Unavailable) and the caller goes on without it.
package devlat
