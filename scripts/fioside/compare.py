"""Compares fio's and ioprobe's runs of the same job files (scripts/fio-side.sh).

For each job: the read share and mean transfer size from each tool's JSON
and from the loop device's /sys/block/DEV/stat deltas; per-size counts and
the random share (offset != the previous I/O's end on the same thread and
file) from strace of a short psync run. Prints a Markdown table and exits 1
when a figure differs by more than 2 points (shares) or 2% (sizes).
"""
import collections, glob, json, os, re, sys

work, dev = sys.argv[1], sys.argv[2]
CALL = re.compile(r'^(\d+)\s+(pread64|pwrite64)\((\d+), .*, (\d+), (\d+)\)\s+= (-?\d+)')
OPEN = re.compile(r'^(\d+)\s+openat\(.*"([^"]*)".*\)\s+= (\d+)')
CLOSE = re.compile(r'^(\d+)\s+close\((\d+)\)')


def stat(path):
    f = [int(x) for x in open(path).read().split()]
    # I/Os as issued: completed plus merged into another request.
    return f[0] + f[1], f[2] * 512, f[4] + f[5], f[6] * 512


def delta(a, b):
    return tuple(y - x for x, y in zip(stat(a), stat(b)))


def figures(rio, rb, wio, wb):
    n = rio + wio
    return {"read%": 100.0 * rio / n if n else 0, "mean": (rb + wb) / n if n else 0, "ios": n}


def fio_json(path):
    rio = rb = wio = wb = 0
    for j in json.load(open(path))["jobs"]:
        rio += j["read"]["total_ios"]; rb += j["read"]["io_bytes"]
        wio += j["write"]["total_ios"]; wb += j["write"]["io_bytes"]
    return figures(rio, rb, wio, wb)


def ioprobe_json(path):
    doc = json.load(open(path))
    s = doc["summary"]
    return figures(s["read_ops"], s["read_bytes"], s["write_ops"], s["write_bytes"])


def trace(path):
    """Per-size counts and the random share of the I/Os on the device."""
    last = {}
    sizes = collections.Counter()
    rand = n = 0
    devfds = set()  # descriptors open on the device (not the binary, /proc, ...)
    for line in open(path):
        o = OPEN.match(line)
        if o:
            (devfds.add if o.group(2) == dev else devfds.discard)(o.group(3))
            continue
        c = CLOSE.match(line)
        if c:
            devfds.discard(c.group(2))
            continue
        m = CALL.match(line)
        if not m or m.group(3) not in devfds:
            continue
        tid, _, fd, ln, off, res = m.groups()
        ln, off = int(ln), int(off)
        if int(res) != ln or ln < 512:
            continue
        key = (tid, fd)
        if key in last:
            n += 1
            rand += off != last[key]
            sizes[ln] += 1
        last[key] = off + ln
    return sizes, (100.0 * rand / n if n else 0), n


rows, bad = [], False
for jf in sorted(glob.glob(os.path.join(work, "*.fio"))):
    if jf.endswith(".trace.fio"):
        continue
    name = os.path.basename(jf)[:-4]
    p = os.path.join(work, name)
    out = {
        "fio": fio_json(p + ".fio.json"),
        "ioprobe": ioprobe_json(p + ".ioprobe.json"),
        "fio diskstats": figures(*delta(p + ".fio.stat0", p + ".fio.stat1")),
        "ioprobe diskstats": figures(*delta(p + ".fio.stat1", p + ".ioprobe.stat1")),
    }
    ts = {t: trace(p + "." + t + ".strace") for t in ("fio", "ioprobe")}
    ref = out["fio"]
    for src, f in out.items():
        ok = abs(f["read%"] - ref["read%"]) <= 2 and abs(f["mean"] - ref["mean"]) <= 0.02 * ref["mean"]
        bad |= not ok
        rows.append((name, src, "%.2f%%" % f["read%"], "%.0f B" % f["mean"], "", "", str(f["ios"]), "" if ok else "DIFFERS"))
    fsizes = ts["fio"][0]
    for tool, (sizes, rnd, n) in ts.items():
        tot = sum(sizes.values()) or 1
        mix = " ".join("%d:%.1f%%" % (k, 100.0 * v / tot) for k, v in sorted(sizes.items()))
        ok = abs(rnd - ts["fio"][1]) <= 2 and all(abs(100.0 * sizes[k] / tot - 100.0 * fsizes[k] / (sum(fsizes.values()) or 1)) <= 2 for k in set(sizes) | set(fsizes))
        bad |= not ok
        rows.append((name, tool + " strace", "", "", mix, "%.2f%%" % rnd, str(n), "" if ok else "DIFFERS"))

print("| job | source | read share | mean transfer | sizes (strace) | random share (strace) | I/Os | |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for r in rows:
    print("| " + " | ".join(r) + " |")
sys.exit(1 if bad else 0)
