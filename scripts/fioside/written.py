"""What a compressing or deduplicating device would make of a region
(scripts/fio-side.sh, issue 33 item 6): reads the first N bytes of DEV past
the page cache and prints, as JSON, its size after zstd -3 and after gzip
as shares of N, and the share of its 4 KiB blocks that repeat an earlier
one.  Usage: written.py DEV N"""
import gzip, hashlib, json, subprocess, sys

dev, n = sys.argv[1], int(sys.argv[2])
data = subprocess.run(["dd", "if=" + dev, "bs=1M", "count=%d" % (n >> 20), "iflag=direct", "status=none"],
                      check=True, capture_output=True).stdout
assert len(data) == n, (len(data), n)
z = subprocess.run(["zstd", "-3", "-c"], input=data, check=True, capture_output=True).stdout
seen, dups = set(), 0
for off in range(0, n, 4096):
    h = hashlib.sha256(data[off:off + 4096]).digest()
    dups += h in seen
    seen.add(h)
print(json.dumps({"zstd": len(z) / n, "gzip": len(gzip.compress(data, 6)) / n, "dup": dups / (n // 4096)}))
