// Command bpffloor is a reference for scripts/bench-devlat.sh: it attaches
// two empty programs (return 0) to block_rq_issue and block_rq_complete,
// as internal/devlat attaches its own, prints their program ids and holds
// them until its standard input closes. bpftool's run_time_ns ÷ run_cnt
// of these is what any tp_btf program costs there before it does
// anything (the tracepoint's call into BPF and, with
// kernel.bpf_stats_enabled, the statistics' own clock reads): the floor
// under the device-latency programs' figure.
//
//	bpffloor < FIFO
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bpffloor:", err)
		os.Exit(1)
	}
}

func run() error {
	_ = rlimit.RemoveMemlock()
	for _, tp := range []string{"block_rq_issue", "block_rq_complete"} {
		prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
			Name: "floor_" + tp[len("block_rq_"):], Type: ebpf.Tracing, AttachType: ebpf.AttachTraceRawTp, AttachTo: tp,
			Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}, License: "GPL",
		})
		if err != nil {
			return fmt.Errorf("loading the empty program for %s: %w", tp, err)
		}
		defer prog.Close()
		l, err := link.AttachTracing(link.TracingOptions{Program: prog, AttachType: ebpf.AttachTraceRawTp})
		if err != nil {
			return fmt.Errorf("attaching to %s: %w", tp, err)
		}
		defer l.Close()
		info, err := prog.Info()
		if err != nil {
			return err
		}
		id, _ := info.ID()
		fmt.Println(id)
	}
	_, err := io.Copy(io.Discard, os.Stdin) // until the caller closes it
	return err
}
