#!/usr/bin/env python3
"""Time an interrupted `ioprobe run` from SIGTERM to the end of the process,
the signal sent at a chosen stage (docs/reliability.md's figures).

usage (as root, so that the device-latency BPF programs load):
  sudo python3 scripts/sigexit-probe.py BIN plain|fio TARGET STAGE N OUTDIR
e.g.
  sudo python3 scripts/sigexit-probe.py ./ioprobe fio /dev/loop0 bpf 10 /tmp/sigexit

plain runs `ioprobe run --target TARGET --size 64MiB --read-pct 100
--duration 30s --ramp 0`; fio runs a job file (randread, io_uring, iodepth 16,
30 s) written to OUTDIR. Reads only. The stage is found in /proc/PID/fd:
  early    5 ms after the start (before ioprobe handles signals)
  ring     the run's first io_uring is open (its setup)
  bpf      an io_uring and a BPF map or program are open, no BPF link yet
           (the device-latency programs are loading: the setup)
  measure  1 s after both BPF links are attached (--ramp 0: measuring)
Each run's line and a SUMMARY line (median, max) are printed; a run the
backstop ended says backstop=True. To starve ioprobe of CPU, give BIN as a
wrapper that puts itself in a cgroup with a CPU quota and execs ioprobe."""
import os, sys, time, signal, subprocess, statistics, json
binp, mode, target, stage, n, outdir = sys.argv[1:7]
n = int(n)
os.makedirs(outdir, exist_ok=True)
job = os.path.join(outdir, "job.fio")
with open(job, "w") as f:
    f.write(f"[j]\nfilename={target}\nrw=randread\nbs=4k\niodepth=16\nioengine=io_uring\ndirect=1\nruntime=30\ntime_based=1\nsize=64m\n")
def fds(pid):
    kinds = set(); links = 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try: l = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError: continue
            if "io_uring" in l: kinds.add("ring")
            if "bpf-map" in l or "bpf-prog" in l: kinds.add("bpf")
            if "bpf_link" in l or "bpf-link" in l: links += 1
    except OSError:
        return None, 0
    return kinds, links
res = []
for i in range(n):
    if mode == "plain":
        cmd = [binp, "run", "--target", target, "--size", "64MiB", "--read-pct", "100", "--duration", "30s", "--ramp", "0", "--output", "json"]
    else:
        cmd = [binp, "run", "--fio-job", job, "--output", "json"]
    err = open(os.path.join(outdir, f"{stage}-{i}.err"), "w")
    out = open(os.path.join(outdir, f"{stage}-{i}.json"), "w")
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=out, stderr=err)
    seen = ""
    deadline = t0 + 60
    linked_at = None
    while time.monotonic() < deadline:
        if stage == "early":
            time.sleep(0.005); break
        k, links = fds(p.pid)
        if k is None: break
        if stage == "ring" and "ring" in k: seen = "ring"; break
        if stage == "bpf" and "bpf" in k and "ring" in k and links == 0: seen = "bpf"; break
        if stage == "measure" and links >= 2:
            if linked_at is None: linked_at = time.monotonic()
            elif time.monotonic() - linked_at >= 1.0: seen = "measure"; break
        if p.poll() is not None: break
        time.sleep(0.0005)
    k, links = fds(p.pid)
    ts = time.monotonic()
    p.send_signal(signal.SIGTERM)
    rc = p.wait()
    te = time.monotonic()
    err.close(); out.close()
    errtxt = open(os.path.join(outdir, f"{stage}-{i}.err")).read()
    backstop = "exiting on" in errtxt
    status = ""
    try:
        status = json.load(open(os.path.join(outdir, f"{stage}-{i}.json"))).get("status", "")
    except Exception:
        pass
    ms = (te - ts) * 1000
    res.append(ms)
    print(f"{stage} {i}: at {(ts-t0)*1000:.0f} ms after start (fds {sorted(k or [])} links {links}) exit after {ms:.0f} ms rc={rc} status={status} backstop={backstop}", flush=True)
print(f"SUMMARY bin={os.path.basename(binp)} mode={mode} target={target} stage={stage} n={n} median={statistics.median(res):.0f} ms max={max(res):.0f} ms min={min(res):.0f} ms load={os.getloadavg()[0]:.1f}", flush=True)
