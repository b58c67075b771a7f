// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * Per-request device time, measured in the kernel on the block layer's
 * tracepoints, for the devices in the filter map only:
 *
 *   block_rq_insert  -> block_rq_issue     queue time (in the scheduler or
 *                                          the software queues)
 *   block_rq_issue   -> block_rq_complete  device service time (the
 *                                          driver and the device)
 *
 * A request issued without ever being inserted (blk-mq's direct issue,
 * when no scheduler holds it back) has a service time and no queue time:
 * the queue histograms count inserted requests only.
 *
 * Each time lands in ioprobe's own log-linear histogram layout
 * (pkg/result/histogram.go: exact below 256 ns, then 128 linear
 * sub-buckets per power of two up to 2^40 ns), bucket for bucket, so the
 * kernel's histograms and ioprobe's merge exactly. Per-CPU arrays: no
 * atomics and no shared cache lines on the completion path.
 *
 * Per-request state is keyed by the request's address, which the kernel
 * reuses: every insert starts afresh, and an issue without an insert
 * checks the filter again.
 */
#include "kernel.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* ioprobe's histogram layout (pkg/result/histogram.go). */
#define SUB_BITS 7
#define LINEAR_LIMIT 256 /* 2 << SUB_BITS: exact below */
#define MAX_EXP 40
#define NUM_BUCKETS (LINEAR_LIMIT + (MAX_EXP - SUB_BITS - 1) * (1 << SUB_BITS)) /* 4352 */
/* A per-CPU value is at most 32 KiB: a histogram is two halves. */
#define HALF (NUM_BUCKETS / 2)

/* Series of a device, in the order the hist and stats maps hold them. */
enum series {
	SERVICE_READ,
	SERVICE_WRITE,
	SERVICE_FLUSH,
	QUEUE_READ,
	QUEUE_WRITE,
	NUM_SERIES,
};

struct half {
	__u64 b[HALF];
};

struct stat {
	__u64 count, sum_ns, min_ns, max_ns, bytes;
};

/* Discards are counted, their times are not kept. */
struct other {
	__u64 discards, discard_bytes;
};

struct inflight {
	__u64 insert_ns; /* 0 once issued, or when never inserted */
	__u64 issue_ns;  /* 0 until issued */
	__u32 slot;
	__u32 pad;
};

/* Kernel dev_t (major << 20 | minor) -> the device's slot. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} filter SEC(".maps");

/* Request address -> its times. LRU: a request freed without a
 * completion the programs saw (merged away, ended on a dead queue) must
 * not fill the map for ever. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u64);
	__type(value, struct inflight);
	__uint(max_entries, 16384);
} inflight SEC(".maps");

/* [(slot * NUM_SERIES + series) * 2 + half] -> bucket counts. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct half);
	__uint(max_entries, NUM_SERIES * 2);
} hist SEC(".maps");

/* [slot * NUM_SERIES + series] -> count, sum, min, max, bytes. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct stat);
	__uint(max_entries, NUM_SERIES);
} stats SEC(".maps");

/* [slot] -> discards. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct other);
	__uint(max_entries, 1);
} others SEC(".maps");

/* Times are recorded only while this is 1 (a run's measured window);
 * requests are followed all the time, so that one issued before the
 * window and completed in it counts, as the kernel's diskstats count it. */
volatile __u32 recording = 0;

/* floor(log2(v)) for v > 0, by halving: no loop for the verifier. */
static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0, s;

	s = (v > 0xffffffffULL) << 5;
	v >>= s;
	r |= s;
	s = (v > 0xffff) << 4;
	v >>= s;
	r |= s;
	s = (v > 0xff) << 3;
	v >>= s;
	r |= s;
	s = (v > 0xf) << 2;
	v >>= s;
	r |= s;
	s = (v > 0x3) << 1;
	v >>= s;
	r |= s;
	return r | (__u32)(v >> 1);
}

/* ioprobe's bucketIndex, in integer operations. */
static __always_inline __u32 bucket_index(__u64 v)
{
	__u32 e;

	if (v < LINEAR_LIMIT)
		return (__u32)v;
	e = log2_u64(v);
	if (e >= MAX_EXP)
		return NUM_BUCKETS - 1;
	return LINEAR_LIMIT + (e - SUB_BITS - 1) * (1 << SUB_BITS) +
	       ((__u32)(v >> (e - SUB_BITS)) & ((1 << SUB_BITS) - 1));
}

static __always_inline void record(__u32 slot, __u32 series, __u64 v, __u64 bytes)
{
	__u32 idx = bucket_index(v);
	__u32 key = (slot * NUM_SERIES + series) * 2 + (idx >= HALF);
	__u32 off = idx >= HALF ? idx - HALF : idx;
	struct half *h;
	struct stat *st;

	h = bpf_map_lookup_elem(&hist, &key);
	if (!h || off >= HALF)
		return;
	h->b[off]++;
	key = slot * NUM_SERIES + series;
	st = bpf_map_lookup_elem(&stats, &key);
	if (!st)
		return;
	if (st->count == 0 || v < st->min_ns)
		st->min_ns = v;
	if (v > st->max_ns)
		st->max_ns = v;
	st->count++;
	st->sum_ns += v;
	st->bytes += bytes;
}

/*
 * The device a request counts against, as the kernel's diskstats count
 * it: the partition or disk it was submitted to (rq->part, set when the
 * queue keeps I/O statistics), else its bio's, else the whole disk (a
 * flush the block layer made itself).
 */
static __always_inline __u32 request_dev(struct request *rq)
{
	struct block_device *bdev = rq->part;
	struct gendisk *disk = 0;

	if (!bdev && rq->bio)
		bdev = rq->bio->bi_bdev;
	if (bdev)
		return bdev->bd_dev;
	if (field_exists(((struct request___rq_disk *)rq)->rq_disk))
		disk = ((struct request___rq_disk *)rq)->rq_disk;
	else if (rq->q)
		disk = rq->q->disk;
	if (disk && disk->part0)
		return disk->part0->bd_dev;
	return 0;
}

/* The request's slot when its device is watched, else -1. Driver-private
 * (passthrough) requests are not I/O the diskstats count: skipped. */
static __always_inline int watched(struct request *rq)
{
	__u32 dev;
	__u32 *slot;

	if ((rq->cmd_flags & REQ_OP_MASK) >= REQ_OP_DRV_IN)
		return -1;
	dev = request_dev(rq);
	slot = bpf_map_lookup_elem(&filter, &dev);
	return slot ? (int)*slot : -1;
}

/* The op's class as the diskstats group it: flush, discard, write (every
 * odd op but discard), read (the rest). */
#define CLASS_READ 0
#define CLASS_WRITE 1
#define CLASS_FLUSH 2
#define CLASS_DISCARD 3

static __always_inline __u32 op_class(struct request *rq)
{
	__u32 op = rq->cmd_flags & REQ_OP_MASK;

	if (op == REQ_OP_FLUSH)
		return CLASS_FLUSH;
	if (op == REQ_OP_DISCARD)
		return CLASS_DISCARD;
	return (op & 1) ? CLASS_WRITE : CLASS_READ;
}

SEC("tp_btf/block_rq_insert")
int rq_insert(__u64 *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	struct inflight in = {};
	__u64 key = (__u64)rq;
	int slot = watched(rq);

	if (slot < 0)
		return 0;
	in.insert_ns = bpf_ktime_get_ns();
	in.slot = slot;
	bpf_map_update_elem(&inflight, &key, &in, BPF_ANY);
	return 0;
}

SEC("tp_btf/block_rq_issue")
int rq_issue(__u64 *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	__u64 key = (__u64)rq;
	__u64 now = bpf_ktime_get_ns();
	struct inflight *in = bpf_map_lookup_elem(&inflight, &key);
	struct inflight fresh = {};
	__u32 class;
	int slot;

	if (in && in->insert_ns) {
		class = op_class(rq);
		if (recording && class <= CLASS_WRITE && now > in->insert_ns)
			record(in->slot, QUEUE_READ + class, now - in->insert_ns, 0);
		in->insert_ns = 0;
		in->issue_ns = now;
		return 0;
	}
	slot = watched(rq);
	if (slot < 0) {
		if (in)
			bpf_map_delete_elem(&inflight, &key);
		return 0;
	}
	fresh.issue_ns = now;
	fresh.slot = slot;
	bpf_map_update_elem(&inflight, &key, &fresh, BPF_ANY);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int rq_complete(__u64 *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	__u32 nr_bytes = (__u32)ctx[2];
	__u64 key = (__u64)rq;
	struct inflight *in = bpf_map_lookup_elem(&inflight, &key);
	struct other *o;
	__u64 now;
	__u32 class, slot;

	if (!in)
		return 0;
	/* A partial completion: the request goes on. */
	if (nr_bytes < rq->__data_len)
		return 0;
	if (in->issue_ns && recording) {
		now = bpf_ktime_get_ns();
		class = op_class(rq);
		slot = in->slot;
		if (class == CLASS_DISCARD) {
			o = bpf_map_lookup_elem(&others, &slot);
			if (o) {
				o->discards++;
				o->discard_bytes += nr_bytes;
			}
		} else if (now >= in->issue_ns) {
			record(slot, SERVICE_READ + class, now - in->issue_ns, nr_bytes);
		}
	}
	bpf_map_delete_elem(&inflight, &key);
	return 0;
}

/* A request sent back to be issued again (it will be inserted again), or
 * merged into another and freed: forget it. */
SEC("tp_btf/block_rq_requeue")
int rq_requeue(__u64 *ctx)
{
	__u64 key = ctx[0];

	bpf_map_delete_elem(&inflight, &key);
	return 0;
}

SEC("tp_btf/block_rq_merge")
int rq_merge(__u64 *ctx)
{
	__u64 key = ctx[0];

	bpf_map_delete_elem(&inflight, &key);
	return 0;
}

/* For the tests only (never attached): bucket_index of a value, so that
 * a test can hold it against ioprobe's bucketIndex value by value. */
struct bucket_args {
	__u64 v;
};

SEC("syscall")
int bucket_of(struct bucket_args *a)
{
	return bucket_index(a->v);
}
