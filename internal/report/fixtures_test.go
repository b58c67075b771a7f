package report

import (
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/ioprobe/ioprobe/internal/cpuacct"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// Hand-built results for the golden files. Latency figures come from real
// histograms so that they are the numbers a run would record.

func histogram(n int, f func(i int) int64) *result.Histogram {
	h := result.NewHistogram()
	for i := range n {
		h.Record(f(i))
	}
	return h
}

// summarise fills the summary figures that follow from the histograms,
// byte counts and elapsed time.
func summarise(r *result.Result, readBytes, writeBytes uint64, elapsed float64) {
	s := &r.Summary
	s.ReadOps, s.WriteOps = r.Histogram.Read.Count(), r.Histogram.Write.Count()
	s.Ops = s.ReadOps + s.WriteOps
	s.ReadBytes, s.WriteBytes = readBytes, writeBytes
	s.Bytes = readBytes + writeBytes
	s.ElapsedSeconds = elapsed
	if elapsed > 0 {
		s.IOPS = float64(s.Ops) / elapsed
		s.ReadIOPS = float64(s.ReadOps) / elapsed
		s.WriteIOPS = float64(s.WriteOps) / elapsed
		s.ThroughputBytesPerSecond = float64(s.Bytes) / elapsed
		s.MBPerSecond = s.ThroughputBytesPerSecond / 1e6
	}
	s.Latency = result.LatencyOf(r.Histogram.Combined())
	s.ReadLatency = result.LatencyOf(r.Histogram.Read)
	s.WriteLatency = result.LatencyOf(r.Histogram.Write)
}

func ptr[T any](v T) *T { return &v }

// nvmeDisk is a datacenter NVMe disk as sysfs describes one.
func nvmeDisk(name string, size int64, sched string, numa int) result.Disk {
	return result.Disk{Name: name, Model: "SAMSUNG MZQL21T9HCJR-00A07", Firmware: "GDC5602Q", Bus: "nvme",
		Queue: result.Queue{SizeBytes: size, LogicalBlockBytes: 512, PhysicalBlockBytes: 512, Scheduler: sched, NrRequests: 1023,
			MaxSectorsKB: 128, ReadAheadKB: 128, WriteCache: "write through", DiscardMaxBytes: 2 << 40},
		NUMANode: &numa, SerialSHA256: fmt.Sprintf("%x", sha256.Sum256([]byte("S64ANX0R"+name))), SerialFrom: "device/serial"}
}

// mixedResult: OLTP-like 8 KiB mix on flash, two targets (one on LVM on a
// mirror of two disks), a few errors.
func mixedResult() *result.Result {
	r := &result.Result{
		Schema:    result.Schema,
		Version:   "0.3.0",
		StartedAt: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC),
		Status:    result.StatusErrors,
		Message:   "3 I/O errors; first: read of 8192 bytes at offset 4096 (target 0, worker 1): input/output error",
		Host: result.Host{Hostname: "db01", Kernel: "6.8.0-45-generic",
			CPUModel: "Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz", LogicalCPUs: 8, ClockHz: 3e9},
		Workload: result.Workload{Name: "oltp", BlockSizes: []result.BlockSize{{Bytes: 8192, Weight: 1}},
			ReadPct: 67, RandomPct: 100, QueueDepth: 16, Workers: 2, RampSeconds: 10, DurationSeconds: 60,
			RegionBytes: 1 << 30, Engine: "uring", EngineRequested: "auto",
			EngineReason: "io_uring with SINGLE_ISSUER, DEFER_TASKRUN"},
		Targets: []result.Target{
			{Path: "/dev/nvme0n1", Kind: "block", SizeBytes: 2000398934016, Direct: true, LogicalBlockBytes: 512, Device: "nvme0n1",
				Stack: []result.Layer{{Kind: result.LayerDisk, Name: "nvme0n1"}},
				Disk:  ptr(nvmeDisk("nvme0n1", 2000398934016, "none", 0))},
			{Path: "/data/probe.dat", Kind: "file", SizeBytes: 8 << 30, Direct: true, LogicalBlockBytes: 4096, Device: "dm-0", Created: true,
				Stack: []result.Layer{
					{Kind: result.LayerFile, Name: "/data/probe.dat", SizeBytes: 8 << 30, AllocatedBytes: ptr(int64(8 << 30)), Extents: ptr(int64(3))},
					{Kind: result.LayerFilesystem, Name: "/data", Depth: 1, FSType: "xfs", MountOptions: "rw,noatime",
						SuperOptions: "rw,attr2,inode64,logbufs=8,logbsize=32k,noquota", Source: "/dev/mapper/vg0-data", Device: "dm-0", BlockBytes: 4096},
					{Kind: result.LayerDM, Name: "dm-0", Depth: 2, DMName: "vg0-data", DMUUIDPrefix: "LVM", Slaves: []string{"md0"},
						Queue: &result.Queue{SizeBytes: 1 << 40, LogicalBlockBytes: 512, PhysicalBlockBytes: 512, MaxSectorsKB: 512, ReadAheadKB: 128, WriteCache: "write back", DiscardMaxBytes: 2 << 30}},
					{Kind: result.LayerMD, Name: "md0", Depth: 3, Level: "raid1", Slaves: []string{"nvme1n1p1", "nvme2n1p1"},
						Queue: &result.Queue{SizeBytes: 1 << 40, LogicalBlockBytes: 512, PhysicalBlockBytes: 512, MaxSectorsKB: 128, ReadAheadKB: 128, WriteCache: "write back", DiscardMaxBytes: 2 << 30}},
					{Kind: result.LayerPartition, Name: "nvme1n1p1", Depth: 4, Number: 1, OffsetBytes: 1 << 20, SizeBytes: 1 << 40},
					{Kind: result.LayerDisk, Name: "nvme1n1", Depth: 5},
					{Kind: result.LayerPartition, Name: "nvme2n1p1", Depth: 4, Number: 1, OffsetBytes: 1 << 20, SizeBytes: 1 << 40},
					{Kind: result.LayerDisk, Name: "nvme2n1", Depth: 5},
				},
				Disk:  ptr(nvmeDisk("nvme1n1", 2000398934016, "none", 1)),
				Disks: []result.Disk{nvmeDisk("nvme1n1", 2000398934016, "none", 1), nvmeDisk("nvme2n1", 2000398934016, "mq-deadline", 1)}},
		},
		Histogram: result.Histograms{
			Read: histogram(496_300, func(i int) int64 {
				if i%1000 == 999 {
					return 2_500_000
				}
				return 80_000 + int64(i*7919%100_000)
			}),
			Write: histogram(244_450, func(i int) int64 {
				if i%500 == 499 {
					return 8_000_000
				}
				return 150_000 + int64(i*104_729%300_000)
			}),
		},
	}
	summarise(r, 496_300*8192, 244_450*8192, 60.003)
	r.Summary.Errors = 3
	r.Summary.ErrorsByClass = map[string]uint64{"eio": 2, "short": 1}
	// 8 CPUs for 60.003 s at USER_HZ 100 is 48,002 ticks; 7.12% of them busy.
	u := cpuacct.Usage{ProcessUser: 4100 * time.Millisecond, ProcessSystem: 4330 * time.Millisecond,
		Host:   cpuacct.Stat{All: cpuacct.CPUTimes{User: 1900, System: 1318, SoftIRQ: 200, Idle: 44284, IOWait: 300}},
		UserHZ: 100}
	r.Summary.CPU = cpuacct.Derive(u, cpuacct.Work{Ops: r.Summary.Ops, Bytes: r.Summary.Bytes,
		ElapsedSeconds: r.Summary.ElapsedSeconds, LogicalCPUs: r.Host.LogicalCPUs, ClockHz: r.Host.ClockHz})
	// The file system wrote a little metadata too.
	r.Summary.Device = &result.DeviceStats{Devices: []string{"nvme0n1", "dm-0"},
		ReadOps: 496_300, WriteOps: 244_457, ReadBytes: 496_300 * 8192, WriteBytes: 244_450*8192 + 7*4096}
	for i := range 60 {
		r.Intervals = append(r.Intervals, result.Interval{TSeconds: float64(i + 1),
			IOPS: 12_300 + float64(i*37%100), BytesPerSecond: (12_300 + float64(i*37%100)) * 8192,
			LatencyMeanSeconds: 0.000150, LatencyP99Seconds: 0.0021})
	}
	return r
}

// readResult: sequential 64 KiB reads from a disk array, merged from two
// hosts; the kernel merged adjacent requests.
func readResult() *result.Result {
	r := &result.Result{
		Schema:    result.Schema,
		Version:   "0.3.0",
		StartedAt: time.Date(2025, 6, 1, 13, 30, 15, 0, time.UTC),
		Status:    result.StatusOK,
		Host:      result.Host{Hostname: "esx-lab", Kernel: "5.15.0-119-generic", CPUModel: "Intel(R) Xeon(R) CPU E5-2690 v2 @ 3.00GHz", LogicalCPUs: 4, ClockHz: 3e9},
		Workload: result.Workload{Name: "seq-read-64k", BlockSizes: []result.BlockSize{{Bytes: 65536, Weight: 1}},
			ReadPct: 100, RandomPct: 0, QueueDepth: 16, Workers: 1, RampSeconds: 5, DurationSeconds: 30,
			Engine: "sync", EngineRequested: "sync"},
		Targets: []result.Target{{Path: "/dev/sdb", Kind: "block", SizeBytes: 600127266816, Direct: true, LogicalBlockBytes: 512, Device: "sdb"}},
		Histogram: result.Histograms{
			Read: histogram(86_340, func(i int) int64 {
				return 3_000_000 + int64(i*7919%4_000_000)
			}),
			Write: result.NewHistogram(),
		},
		Merged: &result.MergeInfo{Runs: 2, Hosts: []string{"esx-lab", "esx-lab2"},
			StorageDiffers: []string{"disk scheduler: mq-deadline on esx-lab; none on esx-lab2"}},
	}
	summarise(r, 86_340*65536, 0, 30.001)
	u := cpuacct.Usage{ProcessUser: 300 * time.Millisecond, ProcessSystem: 1900 * time.Millisecond,
		Host:   cpuacct.Stat{All: cpuacct.CPUTimes{User: 250, System: 1200, IRQ: 40, SoftIRQ: 400, Idle: 9000, IOWait: 1110}},
		UserHZ: 100}
	r.Summary.CPU = cpuacct.Derive(u, cpuacct.Work{Ops: r.Summary.Ops, Bytes: r.Summary.Bytes,
		ElapsedSeconds: r.Summary.ElapsedSeconds, LogicalCPUs: r.Host.LogicalCPUs, ClockHz: r.Host.ClockHz})
	r.Summary.Device = &result.DeviceStats{Devices: []string{"sdb"}, ReadOps: 43_170, WriteOps: 12,
		ReadBytes: 86_340 * 65536, WriteBytes: 12 * 4096}
	return r
}

// writeResult: a 4 KiB / 64 KiB write mix stopped by Ctrl-C, host CPU
// not measured, device unknown.
func writeResult() *result.Result {
	r := &result.Result{
		Schema:    result.Schema,
		Version:   "0.3.0",
		StartedAt: time.Date(2025, 6, 2, 8, 0, 0, 0, time.UTC),
		Status:    result.StatusInterrupted,
		Message:   "interrupted by SIGINT after 12.4 s of 60 s",
		Host:      result.Host{Hostname: "vm-1", Kernel: "6.12.48+deb13-cloud-amd64", CPUModel: "AMD EPYC", LogicalCPUs: 2, ClockHz: 2596.148e6},
		Workload: result.Workload{Name: "log", BlockSizes: []result.BlockSize{{Bytes: 4096, Weight: 70}, {Bytes: 65536, Weight: 30}},
			ReadPct: 0, RandomPct: 0, QueueDepth: 1, Workers: 1, DurationSeconds: 60, RegionBytes: 256 << 20,
			Engine: "sync", EngineRequested: "auto", EngineReason: "io_uring disabled by kernel.io_uring_disabled=2",
			AlignBytes: 4096, RateIOPS: 5000},
		Targets: []result.Target{{Path: "/var/tmp/ioprobe.dat", Kind: "file", SizeBytes: 256 << 20, Direct: true, LogicalBlockBytes: 4096, Device: ""}},
		Histogram: result.Histograms{
			Read: result.NewHistogram(),
			Write: histogram(61_998, func(i int) int64 {
				return 40_000 + int64(i*7919%20_000)
			}),
		},
	}
	summarise(r, 0, 43_399*4096+18_599*65536, 12.4)
	r.Summary.CPU = cpuacct.Derive(cpuacct.Usage{ProcessUser: 500 * time.Millisecond, ProcessSystem: 2 * time.Second},
		cpuacct.Work{Ops: r.Summary.Ops, Bytes: r.Summary.Bytes, ElapsedSeconds: 12.4, LogicalCPUs: 2, ClockHz: r.Host.ClockHz})
	return r
}

// emptyResult: stopped during ramp-up; nothing was measured.
func emptyResult() *result.Result {
	r := &result.Result{
		Schema:    result.Schema,
		Version:   "0.3.0",
		StartedAt: time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC),
		Status:    result.StatusInterrupted,
		Message:   "interrupted by SIGTERM during ramp-up",
		Host:      result.Host{Hostname: "vm-1", LogicalCPUs: 2},
		Workload: result.Workload{BlockSizes: []result.BlockSize{{Bytes: 4096, Weight: 1}}, ReadPct: 70, RandomPct: 100,
			QueueDepth: 16, Workers: 1, RampSeconds: 10, DurationSeconds: 60, Engine: "uring"},
		Targets:   []result.Target{{Path: "/dev/vdb", Kind: "block", SizeBytes: 10 << 30, Direct: true, LogicalBlockBytes: 512, Device: "vdb"}},
		Histogram: result.Histograms{Read: result.NewHistogram(), Write: result.NewHistogram()},
	}
	summarise(r, 0, 0, 0)
	r.Summary.Device = &result.DeviceStats{Devices: []string{"vdb"}}
	return r
}
