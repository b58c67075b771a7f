// Package devlat measures block devices' own latency in the kernel: BPF
// programs on the block layer's request tracepoints (block_rq_issue,
// block_rq_complete) time every request of the watched devices from
// issue to completion (the device's service time: driver and device) and
// from the request's start (the kernel's rq->start_time_ns) to issue
// (queue time), and record them in per-CPU maps laid out as ioprobe's own
// latency histogram (pkg/result.Histogram), so that the kernel's
// histograms and ioprobe's merge exactly.
//
// Nothing per request goes through a hash map: the issue time waits in a
// preallocated array slot per driver tag of each watched queue, sized
// from sysfs at Open. ioprobe's own reads that are not the workload's
// (internal/ownio marks them with an I/O priority hint) are counted
// apart, and a partition's flushes, which are its whole disk's requests,
// are counted for the partition.
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
