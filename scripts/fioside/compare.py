"""Compares fio's and ioprobe's runs of the same job files (scripts/fio-side.sh).

For each job: the read share and mean transfer size from each tool's JSON
and from the loop device's /sys/block/DEV/stat; per-size counts and the
random share from strace of a short psync run of one thread. fio's kernel
figures are the counters around its run; ioprobe's are its own
summary.device, the counters over its measured window (before it,
ioprobe reads the device for signatures), which leave out the reads of
its looks for signatures after each interval of a run that writes
(summary.device.own_read_ops), and its strace figures start with its
measured run (started_at). A time-based job's kernel figures count I/Os as
issued (completed plus merged), a budgeted one's completed requests.
Prints a Markdown table; exits 1 when a share differs from fio's by more
than 2 points or a mean size by more than 2%.

Jobs without time_based (issue 22's items: units, rate per direction, the
random map, buffered writes; issue 33's) stop after fio's budget, so their
counts and bytes are compared too: exactly, except the random map's I/O
count, which varies with the random offsets (3%, about 3 standard
deviations of ioprobe's run-to-run spread of the mean size for 32 MiB,
1.1%; its size shares from strace within 4 points, 5 standard
deviations). A job with a rate also shows each direction's I/Os per
second, which must stay within 5% of its cap; the read share of a capped
mix is compared within 10 points (each direction runs on its own
schedule). A buffered job's kernel figures are the page cache's writeback
(4 KiB pages, some read first), compared tool against tool within 5%. A
second table gives what reached the device: requests completed, I/Os
merged into them and the mean request size, which must agree within 2%
(fio submits each I/O on its own, and so does ioprobe by default: 4 KiB
sequential reads reach the device as 4 KiB requests).
"""
import collections, csv, datetime, glob, json, os, re, sys

work, dev = sys.argv[1], sys.argv[2]
# strace -ff -ttt: one file per thread (PREFIX.TID), no interleaved lines.
CALL = re.compile(r'^([\d.]+) (pread64|pwrite64)\((\d+), .*, (\d+), (\d+)\)\s+= (-?\d+)')
OPEN = re.compile(r'^([\d.]+) openat\((AT_FDCWD|\d+), "([^"]*)".*\)\s+= (\d+)')
CLOSE = re.compile(r'^([\d.]+) close\((\d+)\)')


def counters(fields):
    f = [int(x) for x in fields]
    # I/Os as issued: completed plus merged into another request.
    return f[0] + f[1], f[2] * 512, f[4] + f[5], f[6] * 512


def stat(path):
    return counters(open(path).read().split())


def completed(path):
    """The counters without merges: what summary.device counts."""
    f = [int(x) for x in open(path).read().split()]
    return f[0], f[2] * 512, f[4], f[6] * 512


def figures(rio, rb, wio, wb):
    n = rio + wio
    return {"read%": 100.0 * rio / n if n else 0, "mean": (rb + wb) / n if n else 0, "ios": n}


def window(doc):
    """ioprobe's measured run on the wall clock (epoch seconds)."""
    t = doc["started_at"].replace("Z", "")
    start = datetime.datetime.fromisoformat(t[:26]).replace(tzinfo=datetime.timezone.utc).timestamp()
    w = doc["workload"]
    start += w.get("ramp_seconds", 0)
    return start, start + w["duration_seconds"]


def fio_json(path):
    rio = rb = wio = wb = 0
    riops = wiops = 0.0
    for j in json.load(open(path))["jobs"]:
        rio += j["read"]["total_ios"]; rb += j["read"]["io_bytes"]
        wio += j["write"]["total_ios"]; wb += j["write"]["io_bytes"]
        riops += j["read"]["iops"]; wiops += j["write"]["iops"]
    f = figures(rio, rb, wio, wb)
    f.update(bytes=rb + wb, riops=riops, wiops=wiops)
    return f


def ioprobe_json(doc):
    s = doc["summary"]
    f = figures(s["read_ops"], s["read_bytes"], s["write_ops"], s["write_bytes"])
    f.update(bytes=s["read_bytes"] + s["write_bytes"], riops=s.get("read_iops", 0), wiops=s.get("write_iops", 0))
    return f


def ioprobe_device(doc, issued=False):
    """ioprobe's summary.device (the kernel's counters over its measured
    window, its looks' reads already left out: own_read_ops); issued adds
    the I/Os the block layer merged (I/Os as issued, as fio's time-based
    figures count them)."""
    d = doc["summary"].get("device") or {}
    rio, wio = d.get("read_ops", 0), d.get("write_ops", 0)
    if issued:
        rio, wio = rio + d.get("read_merges", 0), wio + d.get("write_merges", 0)
    return figures(rio, d.get("read_bytes", 0), wio, d.get("write_bytes", 0))


def events(prefix):
    """Every traced call of every thread, in time order."""
    out = []
    for path in glob.glob(prefix + ".*"):
        tid = path.rsplit(".", 1)[1]
        for line in open(path):
            for kind, rx in (("io", CALL), ("open", OPEN), ("close", CLOSE)):
                m = rx.match(line)
                if m:
                    out.append((float(m.group(1)), tid, kind, m.groups()[1:]))
                    break
    return sorted(out)


def calls(prefix, on):
    """The traced pread64/pwrite64 calls on the files on() accepts, in time
    order: (time, thread, descriptor, call, length, offset, result). What a
    descriptor names: the thread's own open of it if it made one (fio's
    jobs are processes with their own tables), else the latest open of
    that number by any thread (ioprobe's threads share one)."""
    mine, anyone = {}, {}
    for t, tid, kind, g in events(prefix):
        if kind == "open":
            dirfd, path, fd = g
            if path.startswith("/proc/self/fd/"):
                # ioprobe reopens its target through /proc/self/fd for a
                # buffered or O_DSYNC group: the same file.
                path = anyone.get(path[len("/proc/self/fd/"):], path)
            elif dirfd != "AT_FDCWD" and not path.startswith("/"):
                # ioprobe opens a file by name within its directory.
                path = mine.get((tid, dirfd), anyone.get(dirfd, "")) + "/" + path
            mine[(tid, fd)] = anyone[fd] = path
            continue
        if kind == "close":
            mine.pop((tid, g[0]), None)
            continue
        call, fd, ln, off, res = g
        if on(mine.get((tid, fd), anyone.get(fd))):
            yield t, tid, fd, call, int(ln), int(off), int(res)


def trace(prefix, since=0.0, where=None, looks=False):
    """Per-size counts and the random shares of the I/Os on the device
    (or on the files under the directory where): offset != the end of the
    thread's previous I/O on the file, and != the end of its previous I/O
    in the same direction (fio's last_pos[ddir]); and the lowest offset and
    highest end reached. looks: leave out ioprobe's own looks for
    signatures of a run that writes (its safety checks: 64 KiB reads at
    the places its scan before since read, again just before the first
    write and after each interval)."""
    on = (lambda path: path == dev) if where is None else (lambda path: path is not None and path.startswith(where))
    last, lastdir = {}, {}
    sizes = collections.Counter()
    rand = randdir = n = 0
    lo, hi = None, 0
    scanned = set()
    for t, tid, fd, call, ln, off, res in calls(prefix, on):
        look = looks and call == "pread64" and ln == 65536
        if t < since:
            if look:
                scanned.add(off)
            continue
        if res != ln or (look and off in scanned):
            continue
        lo, hi = off if lo is None else min(lo, off), max(hi, off + ln)
        key, dkey = (tid, fd), (tid, fd, call)
        if key in last and dkey in lastdir:
            n += 1
            rand += off != last[key]
            randdir += off != lastdir[dkey]
            sizes[ln] += 1
        last[key] = lastdir[dkey] = off + ln
    pct = lambda x: 100.0 * x / n if n else 0
    return sizes, pct(rand), pct(randdir), n, (lo or 0, hi)


def share(sizes, k):
    return 100.0 * sizes[k] / (sum(sizes.values()) or 1)


def job_files():
    """Each job file's path, name and the prefix of its outputs (the
    strace'd runs' copies left out)."""
    for jf in sorted(glob.glob(os.path.join(work, "*.fio"))):
        if not jf.endswith(".trace.fio"):
            name = os.path.basename(jf)[:-4]
            yield jf, name, os.path.join(work, name)


rows, bad = [], False
for jf, name, p in job_files():
    doc = json.load(open(p + ".ioprobe.json"))
    text = open(jf).read()
    budget = "time_based" not in text
    rated = "rate" in text
    # A job on files of its own (directory=) does not use the loop
    # device: its kernel figures are another device's, not compared, and
    # strace follows the files under its directory.
    files = re.search(r"^directory=(.*)$", text, re.M)
    where = files.group(1) + "/" if files else None
    out = {
        "fio JSON": fio_json(p + ".fio.json"),
        "fio diskstats": figures(*(b - a for a, b in zip((completed if budget else stat)(p + ".fio.stat0"), (completed if budget else stat)(p + ".fio.stat1")))),
        "ioprobe JSON": ioprobe_json(doc),
        "ioprobe diskstats": ioprobe_device(doc, not budget),
    }
    if files:
        del out["fio diskstats"], out["ioprobe diskstats"]
    tdoc = json.load(open(p + ".trace.json"))
    ts = {"fio": trace(p + ".fio.strace", 0.0, where), "ioprobe": trace(p + ".ioprobe.strace", window(tdoc)[0], where, "safety_checks" in tdoc)}
    ref = out["fio JSON"]
    share_tol = 10 if rated else 2
    mean_tol = 0.03 if "bssplit" in text and "norandommap" not in text else 0.02
    buffered = "direct=1" not in text
    for src, f in out.items():
        r, tol = ref, mean_tol
        if buffered and "diskstats" in src:
            # The kernel sees the page cache's writeback, not the
            # writes: compared tool against tool (the last write's pages
            # are written back at fio's close, after ioprobe's window).
            r, tol = out["fio diskstats"], 0.05
        ok = abs(f["read%"] - r["read%"]) <= share_tol and abs(f["mean"] - r["mean"]) <= tol * r["mean"]
        rate = ""
        if budget and "JSON" in src:
            exact = mean_tol == 0.02
            ok &= f["bytes"] == ref["bytes"] and (f["ios"] == ref["ios"] if exact else abs(f["ios"] - ref["ios"]) <= 0.03 * ref["ios"])
        if rated and "JSON" in src:
            cap = 100 * 1.05
            ok &= f["riops"] <= cap and f["wiops"] <= cap
            rate = "%.1f / %.1f" % (f["riops"], f["wiops"])
        bad |= not ok
        rows.append((name, src, "%.2f%%" % f["read%"], "%.0f B" % f["mean"], "", "", "", str(f["ios"]), rate, "" if ok else "DIFFERS"))
    fs = ts["fio"]
    # The random map's shortened sizes vary run to run: the 4k share of
    # h's 32 MiB pass by 0.82 points (1 sd over 300 simulated passes).
    size_tol = 4 if mean_tol == 0.03 else 2
    for tool, (sizes, rnd, rnddir, n, reach) in ts.items():
        mix = " ".join("%dk %.1f%%" % (k // 1024, share(sizes, k)) for k in sorted(sizes))
        ok = abs(rnddir - fs[2]) <= 2 and all(abs(share(sizes, k) - share(fs[0], k)) <= size_tol for k in set(sizes) | set(fs[0]))
        if "offset" in text:
            # Where the region lies (issue 33 item 4): the same first and
            # last byte reached.
            ok &= reach == fs[4]
            mix += " (bytes %d-%d)" % reach
        bad |= not ok
        rows.append((name, tool + " strace", "", "", mix, "%.2f%%" % rnd, "%.2f%%" % rnddir, str(n), "", "" if ok else "DIFFERS"))

# Each of fio's jobs (a clone, or a job of several run at once) on its
# own (issue 33 items 2 and 3): its I/Os (exact, both tools stop after
# fio's budget), its runtime and IOPS; of jobs that differ only in size,
# one with half the I/Os of another or less ends first in both tools; and
# each IOPS is its I/Os over its own runtime. ioprobe's entries are its
# result as fio-json.
jobrows = []
for jf, name, p in job_files():
    if "time_based" in open(jf).read():
        continue
    tools = {"fio": json.load(open(p + ".fio.json"))["jobs"], "ioprobe": json.load(open(p + ".ioprobe.fio.json"))["jobs"]}
    if len(tools["fio"]) < 2:
        continue
    ok = len(tools["fio"]) == len(tools["ioprobe"])
    ends = {}
    for tool, jobs in tools.items():
        ends[tool] = []
        for j in jobs:
            ios = j["read"]["total_ios"] + j["write"]["total_ios"]
            rt = max(j["read"]["runtime"], j["write"]["runtime"])
            iops = j["read"]["iops"] + j["write"]["iops"]
            ends[tool].append((ios, rt))
            # runtime is in whole ms: half of one is iops / 2000 I/Os.
            ok &= rt > 0 and abs(iops * rt / 1000 - ios) <= max(1, 0.02 * ios, iops / 2000 + 1)
            jobrows.append([name, tool, j["jobname"], str(ios), "%d ms" % rt, "%.0f" % iops])
    if ok:
        for (fi, _), (ii, _) in zip(ends["fio"], ends["ioprobe"]):
            ok &= fi == ii
        # Ends compared only between jobs that differ in size alone.
        alike = len({(j["job options"].get("rw"), j["job options"].get("bs")) for j in tools["fio"]}) == 1
        for tool, e in ends.items():
            for a in e if alike else []:
                for b in e:
                    if 2 * a[0] <= b[0]:
                        ok &= a[1] < b[1]
    bad |= not ok
    for r in jobrows:
        if r[0] == name:
            r.append("" if ok else "DIFFERS")

# A point of several jobs: CSV's total row says the mix measured (issue 33
# item 8): fio's share of reads over all its jobs, every size.
csvrows = []
for jf, name, p in job_files():
    rows_ = list(csv.reader(open(p + ".ioprobe.csv")))
    head, body = rows_[0], rows_[1:]
    if len(body) < 2:
        continue
    total = body[-1]
    f = fio_json(p + ".fio.json")
    got = int(total[head.index("read_pct")])
    sizes = sorted(int(x.split(":")[0]) for x in total[head.index("block_sizes")].split(";"))
    want = sorted({int(j["job options"].get("bs", "4k").rstrip("k")) * 1024 for j in json.load(open(p + ".fio.json"))["jobs"]})
    ok = abs(got - f["read%"]) <= 0.5 and sizes == want
    bad |= not ok
    csvrows.append((name, "%.2f%%" % f["read%"], str(got), " ".join(map(str, want)), total[head.index("block_sizes")], "" if ok else "DIFFERS"))

print("| job | source | read share | mean transfer | sizes | random (any direction) | random (per direction, fio's) | I/Os | IOPS read / write | |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for r in rows:
    print("| " + " | ".join(r) + " |")


def requests(rio, rmerge, rb, wio, wmerge, wb):
    n = rio + wio
    return {"requests": n, "merged": rmerge + wmerge, "size": (rb + wb) / n if n else 0}


# What reached the device: the requests it completed, their mean size and
# the I/Os the block layer merged into them (fio submits each I/O on its
# own, and so does ioprobe by default). ioprobe's are its summary.device
# (its measured window). A buffered job's are the page cache's, a job on
# files of its own another device's: not compared.
print()
print("| job | tool | requests at the device | merged | mean request | |")
print("| --- | --- | --- | --- | --- | --- |")
for jf, name, p in job_files():
    text = open(jf).read()
    a = [int(x) for x in open(p + ".fio.stat0").read().split()]
    b = [int(x) for x in open(p + ".fio.stat1").read().split()]
    d = [y - x for x, y in zip(a, b)]
    fr = requests(d[0], d[1], d[2] * 512, d[4], d[5], d[6] * 512)
    idoc = json.load(open(p + ".ioprobe.json"))
    dev = idoc["summary"].get("device") or {}
    ir = requests(dev.get("read_ops", 0), dev.get("read_merges", 0), dev.get("read_bytes", 0),
                  dev.get("write_ops", 0), dev.get("write_merges", 0), dev.get("write_bytes", 0))
    compared = "direct=1" in text and not re.search(r"^directory=", text, re.M)
    ok = not compared or abs(ir["size"] - fr["size"]) <= 0.02 * fr["size"]
    bad |= not ok
    for tool, r in (("fio", fr), ("ioprobe", ir)):
        print("| %s | %s | %d | %d | %.0f B | %s |" % (name, tool, r["requests"], r["merged"], r["size"],
                                                    "" if ok else "DIFFERS" if tool == "ioprobe" else ""))

print()
print("| job file | tool | job | I/Os | runtime | IOPS | |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for r in jobrows:
    print("| " + " | ".join(r) + " |")
print()
print("| job file | fio read share | ioprobe CSV total read_pct | fio sizes | ioprobe CSV total block_sizes | |")
print("| --- | --- | --- | --- | --- | --- |")
for r in csvrows:
    print("| " + " | ".join(r) + " |")


# Issue 33 items 5-7: fio's random distribution (p: 64 bins of the region
# from each tool's offsets under strace, a two-sample chi-square at
# alpha 0.001, and the rank-frequency curves' largest gap within the
# two-sample Kolmogorov-Smirnov bound at 0.001); what the writes carry
# (q: the written region by zstd and gzip within 1% of it, its repeated
# 4 KiB blocks within 3 points: 8,192 buffers at 20%, 0.44 points each);
# ioscheduler= (r: the device under the scheduler for the run, left so
# by fio, put back by ioprobe, which says so in its result).
def offsets(prefix, n):
    """The offsets of the last n 4 KiB reads of the device (ioprobe's
    looks at the device come before its run)."""
    device = sys.argv[2]  # the global dev is reused above for a device's figures
    out = [off for _, _, _, call, ln, off, res in calls(prefix, lambda path: path == device)
           if call == "pread64" and ln == 4096 and res == 4096]
    return out[-n:]


def chi2(a, b, least=10):
    na, nb = sum(a), sum(b)
    groups, ga, gb = [], 0, 0
    for x, y in zip(a, b):
        ga, gb = ga + x, gb + y
        if ga + gb >= least:
            groups.append((ga, gb))
            ga = gb = 0
    if ga + gb and groups:
        groups[-1] = (groups[-1][0] + ga, groups[-1][1] + gb)
    stat = 0.0
    for x, y in groups:
        ea, eb = (x + y) * na / (na + nb), (x + y) * nb / (na + nb)
        stat += (x - ea) ** 2 / ea + (y - eb) ** 2 / eb
    df = len(groups) - 1
    bound = df * (1 - 2 / (9 * df) + 3.0902 * (2 / (9 * df)) ** 0.5) ** 3
    return stat, df, bound


def rank_curve(offs):
    counts = sorted(collections.Counter(offs).values(), reverse=True)
    out, s = [], 0
    for c in counts:
        s += c
        out.append(s / len(offs))
    return out


extra = []
for jf, name, p in job_files():
    text = open(jf).read()
    if "random_distribution=" in text:
        m = re.search(r"^io_size=(\d+)m", text, re.M)
        n = int(m.group(1)) * 256
        size = int(re.search(r"^size=(\d+)m", text, re.M).group(1)) << 20
        fo, io = offsets(p + ".fio.strace", n), offsets(p + ".ioprobe.strace", n)
        binned = lambda offs: [sum(1 for o in offs if o * 64 // size == i) for i in range(64)]
        stat, df, bound = chi2(binned(fo), binned(io))
        cf, ci = rank_curve(fo), rank_curve(io)
        gap = max(abs((cf[k] if k < len(cf) else 1) - (ci[k] if k < len(ci) else 1)) for k in range(max(len(cf), len(ci))))
        ks = 1.95 * (2 / n) ** 0.5
        ok = len(fo) == n and len(io) == n and stat < bound and gap < ks
        bad |= not ok
        top = lambda c: " / ".join("%.3f" % c[min(k, len(c)) - 1] for k in (1, 10, 100))
        extra.append((name, "offsets: chi-square %.1f, %d df (bound %.1f); rank-frequency gap %.4f (bound %.4f)" % (stat, df, bound, gap, ks),
                      "busiest 1 / 10 / 100 blocks: fio %s, ioprobe %s" % (top(cf), top(ci)), "" if ok else "DIFFERS"))
    if os.path.exists(p + ".fio.written"):
        fw, iw = json.load(open(p + ".fio.written")), json.load(open(p + ".ioprobe.written"))
        ok = abs(fw["zstd"] - iw["zstd"]) <= 0.01 and abs(fw["gzip"] - iw["gzip"]) <= 0.01 and abs(fw["dup"] - iw["dup"]) <= 0.03
        bad |= not ok
        fmt = lambda w: "zstd %.4f, gzip %.4f, repeated 4 KiB blocks %.2f%%" % (w["zstd"], w["gzip"], 100 * w["dup"])
        extra.append((name, "written: fio " + fmt(fw), "ioprobe " + fmt(iw), "" if ok else "DIFFERS"))
    if "ioscheduler=" in text:
        want = re.search(r"^ioscheduler=(\S+)", text, re.M).group(1)
        fs, isch = open(p + ".fio.sched").read().strip(), open(p + ".ioprobe.sched").read().strip()
        doc = json.load(open(p + ".ioprobe.json"))
        got = doc.get("io_schedulers") or [{}]
        ok = fs == want and isch == "none" and got[0].get("scheduler") == want and got[0].get("was") == "none" and got[0].get("restored") is True
        bad |= not ok
        extra.append((name, "scheduler after the run: fio %s (left switched), ioprobe %s" % (fs, isch),
                      "ioprobe's io_schedulers: %s; engine %s, iodepth %s" % (json.dumps(got), doc["workload"]["engine"], doc["workload"]["queue_depth"]),
                      "" if ok else "DIFFERS"))
if extra:
    print()
    print("| job | issue 33 items 5-7 | | |")
    print("| --- | --- | --- | --- |")
    for r in extra:
        print("| " + " | ".join(r) + " |")
sys.exit(1 if bad else 0)
