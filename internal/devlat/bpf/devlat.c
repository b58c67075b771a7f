// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * Per-request device time, measured in the kernel on the block layer's
 * tracepoints, for the devices in the filter map only:
 *
 *   request's start  -> issue      queue time (rq->start_time_ns, the
 *                                  kernel's own stamp that diskstats
 *                                  count a request's time from)
 *   issue            -> completion device service time (the driver and
 *                                  the device)
 *
 * Two programs, and nothing per request in a hash map. The issue time is
 * the kernel's own where it stamps one that is true: while blk-stat has
 * users on the queue (writeback throttling, the default on most queues,
 * and the like), blk_mq_start_request stamps rq->io_start_time_ns and
 * sets RQF_STATS, and the issue program only checks that it will. Inside
 * a plug that caches the clock (Linux 6.9 on) that stamp is the plug's
 * cached time, up to a batch's submission early, and on a queue without
 * blk-stat there is none: then the issue program stamps the time itself
 * in a preallocated array slot per driver tag of each watched queue
 * (times: [hardware queue][tag]), which a request holds from before it
 * is issued until after it completes; the slot also names the request,
 * so that a completion never takes another's time. A request's own stamp
 * wins over the kernel's.
 *
 * The kernel stamps rq->start_time_ns when the request is made, if its
 * queue keeps I/O statistics (iostats, the default) or has an I/O
 * scheduler (RQF_IO_STAT, RQF_USE_SCHED: blk_mq_need_time_stamp);
 * without either the request has no queue time (counted in
 * others.no_start): recent kernels leave the field as the request's
 * previous use left it, so it is read only under those flags. Inside a
 * caching plug it too is the plug's time.
 *
 * Each time lands in ioprobe's own log-linear histogram layout
 * (pkg/result/histogram.go: exact below 256 ns, then 128 linear
 * sub-buckets per power of two up to 2^40 ns), bucket for bucket, so the
 * kernel's histograms and ioprobe's merge exactly. Per-CPU arrays: no
 * atomics and no shared cache lines on the completion path.
 *
 * ioprobe's own reads that are not the workload's (the safety checks)
 * carry an I/O priority hint (OWN_HINT) and are counted apart.
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

/* Series of a device, in the order the hist map holds them. */
enum series {
	SERVICE_READ,
	SERVICE_WRITE,
	SERVICE_FLUSH,
	QUEUE_READ,
	QUEUE_WRITE,
	NUM_SERIES,
};

struct stat {
	__u64 count, sum_ns, min_ns, max_ns, bytes;
};

/* One half of a series' buckets with the statistics of the values that
 * landed in it: one lookup per value. Reading adds the halves. */
struct half {
	struct stat st;
	__u64 b[HALF];
};

/* What is counted, not timed. */
struct other {
	__u64 discards, discard_bytes;
	__u64 own, own_bytes; /* ioprobe's own (OWN_HINT) requests */
	__u64 untimed;        /* completed without an issue time */
	__u64 no_start;       /* reads and writes without a start time */
};

/* A watched device (dev, its kernel dev_t; 0: an empty entry), and
 * where its queue's tags lie in times. */
struct watch {
	__u32 dev;
	__u32 slot;
	__u32 flags;
	__u32 base;  /* first entry of the queue in times */
	__u32 nr_hw; /* hardware queues */
	__u32 depth; /* tags per hardware queue */
};

/* The whole disk of a watched partition whose disk is not watched
 * itself: only its flushes count, for the partition (a flush request is
 * the disk's; the partition's own diskstats never count one). */
#define FLUSHES_ONLY 1

/* The watched devices, by open addressing on their dev_t: a device is in
 * one of the PROBES entries from its hash on (internal/devlat plan.go
 * places them), and the first empty entry ends the search. An array, not
 * a hash map: a request of a device not watched costs one load, and no
 * helper call. Read-only to the programs. */
#define PROBES 4
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct watch);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_RDONLY_PROG);
} filter SEC(".maps");

/* The filter's size less one (a power of two), set at load. */
volatile const __u32 filter_mask = 0;

/* The request issued with a tag, and when. */
struct issued {
	__u64 rq;
	__u64 ns;
};

/* [base + hardware queue * depth + tag] of each watched queue. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct issued);
	__uint(max_entries, 1);
} times SEC(".maps");

/* [(slot * NUM_SERIES + series) * 2 + half] -> statistics and buckets. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct half);
	__uint(max_entries, NUM_SERIES * 2);
} hist SEC(".maps");

/* [slot] -> what is counted, not timed. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct other);
	__uint(max_entries, 1);
} others SEC(".maps");

/* Times are recorded only while this is 1 (a run's measured window);
 * issues are stamped all the time, so that a request issued before the
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
	struct half *h = bpf_map_lookup_elem(&hist, &key);

	if (!h || off >= HALF)
		return;
	h->b[off]++;
	if (h->st.count == 0 || v < h->st.min_ns)
		h->st.min_ns = v;
	if (v > h->st.max_ns)
		h->st.max_ns = v;
	h->st.count++;
	h->st.sum_ns += v;
	h->st.bytes += bytes;
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

/* The filter's hash of a dev_t (plan.go's filterHash). */
static __always_inline __u32 filter_hash(__u32 dev)
{
	return (dev * 0x9e3779b1U) >> 16;
}

/* The watched device of a request of op, else 0. Driver-private
 * (passthrough) requests are not I/O the diskstats count: skipped. */
static __always_inline struct watch *watched(struct request *rq, __u32 op)
{
	struct watch *w = 0;
	__u32 dev, key, i;

	if (op >= REQ_OP_DRV_IN)
		return 0;
	dev = request_dev(rq);
	key = filter_hash(dev);
#pragma unroll
	for (i = 0; i < PROBES; i++) {
		__u32 k = (key + i) & filter_mask;

		w = bpf_map_lookup_elem(&filter, &k);
		if (!w || w->dev == 0)
			return 0;
		if (w->dev == dev)
			break;
	}
	if (!w || w->dev != dev)
		return 0;
	if ((w->flags & FLUSHES_ONLY) && op != REQ_OP_FLUSH)
		return 0;
	return w;
}

/* The request's slot in times: its driver tag on its hardware queue
 * (held from before block_rq_issue until after block_rq_complete), or 0
 * when out of the range sized at load (the queue grew since). */
static __always_inline struct issued *issue_slot(struct request *rq, struct watch *w)
{
	__u32 hw = rq->mq_hctx ? rq->mq_hctx->queue_num : 0;
	__u32 tag = (__u32)rq->tag; /* -1 (no driver tag) is out of range */
	__u32 key;

	if (hw >= w->nr_hw || tag >= w->depth)
		return 0;
	key = w->base + hw * w->depth + tag;
	return bpf_map_lookup_elem(&times, &key);
}

/* The request's I/O priority: its own field where the kernel has one
 * (older kernels), else its first bio's (a flush the block layer made
 * has no bio: 0). */
static __always_inline __u16 request_ioprio(struct request *rq)
{
	if (field_exists(((struct request___ioprio *)rq)->ioprio))
		return ((struct request___ioprio *)rq)->ioprio;
	if (rq->bio)
		return rq->bio->bi_ioprio;
	return 0;
}

/* Whether the kernel stamped the request's start: under the flags it
 * stamps it for. A kernel whose flags BTF does not name (before the
 * enum) zeroes the start it does not stamp: a non-zero start is one. */
static __always_inline int start_stamped(struct request *rq)
{
	__u32 f = rq->rq_flags, want = 0;

	if (!enum_value_exists(enum rqf_flags, __RQF_IO_STAT))
		return 1;
	want = 1U << (enum_value(enum rqf_flags, __RQF_IO_STAT) & 31);
	if (enum_value_exists(enum rqf_flags, __RQF_USE_SCHED))
		want |= 1U << (enum_value(enum rqf_flags, __RQF_USE_SCHED) & 31);
	return (f & want) != 0;
}

/* The op's class as the diskstats group it: flush, discard, write (every
 * odd op but discard), read (the rest). */
#define CLASS_READ 0
#define CLASS_WRITE 1
#define CLASS_FLUSH 2
#define CLASS_DISCARD 3

static __always_inline __u32 op_class(__u32 op)
{
	if (op == REQ_OP_FLUSH)
		return CLASS_FLUSH;
	if (op == REQ_OP_DISCARD)
		return CLASS_DISCARD;
	return (op & 1) ? CLASS_WRITE : CLASS_READ;
}

/* Whether blk_mq_start_request will stamp the request's issue time
 * itself (QUEUE_FLAG_STATS: blk-stat has users on the queue), with the
 * clock and not a plug's cached time, and the completion can tell
 * (RQF_STATS has a name in the kernel's BTF). */
static __always_inline int kernel_stamps_issue(struct request *rq)
{
	struct blk_queue_stats *st;
	struct task_struct *task;
	struct blk_plug *plug;

	if (!enum_value_exists(enum rqf_flags, __RQF_STATS))
		return 0;
	/* The plug first: on Linux 6.18 a request is mostly issued in one. */
	if (field_exists(((struct blk_plug *)0)->cur_ktime)) {
		task = bpf_get_current_task_btf();
		plug = task->plug;
		if (plug && plug->cur_ktime)
			return 0;
	}
	st = rq->q ? rq->q->stats : 0;
	if (!st)
		return 0;
	if ((void *)st->callbacks.next != (void *)&st->callbacks)
		return 1;
	if (field_exists(st->accounting))
		return st->accounting != 0;
	return ((struct blk_queue_stats___bool *)st)->enable_accounting != 0;
}

SEC("tp_btf/block_rq_issue")
int rq_issue(__u64 *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	struct issued *in;
	struct watch *w;

	w = watched(rq, rq->cmd_flags & REQ_OP_MASK);
	if (!w || kernel_stamps_issue(rq))
		return 0;
	in = issue_slot(rq, w);
	if (!in)
		return 0;
	in->ns = bpf_ktime_get_ns();
	in->rq = (__u64)rq;
	return 0;
}

SEC("tp_btf/block_rq_complete")
int rq_complete(__u64 *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	__u32 nr_bytes = (__u32)ctx[2];
	__u32 op = rq->cmd_flags & REQ_OP_MASK;
	struct watch *w = watched(rq, op);
	struct issued *in;
	struct other *o;
	__u64 issued = 0, now, start;
	__u32 class, slot;
	int own;

	if (!w)
		return 0;
	/* A partial completion: the request goes on. */
	if (nr_bytes < rq->__data_len)
		return 0;
	/* The programs' own stamp when they made one (only then is the
	 * slot written: otherwise its cache line stays shared), else the
	 * kernel's. */
	in = issue_slot(rq, w);
	if (in && in->rq == (__u64)rq) {
		issued = in->ns;
		in->rq = 0;
	} else if (enum_value_exists(enum rqf_flags, __RQF_STATS) &&
		   (rq->rq_flags & (1U << (enum_value(enum rqf_flags, __RQF_STATS) & 31)))) {
		issued = rq->io_start_time_ns;
	}
	/* Ended without being issued (the request that asked for a flush,
	 * which the flush machinery ends itself; one that failed before
	 * issue): diskstats do not count it either. */
	if (!recording || rq->state == MQ_RQ_IDLE)
		return 0;
	slot = w->slot;
	class = op_class(op);
	own = ((request_ioprio(rq) >> IOPRIO_HINT_SHIFT) & IOPRIO_HINT_MASK) == OWN_HINT;
	if (class == CLASS_DISCARD || own || !issued) {
		o = bpf_map_lookup_elem(&others, &slot);
		if (!o)
			return 0;
		if (class == CLASS_DISCARD) {
			o->discards++;
			o->discard_bytes += nr_bytes;
		} else if (own) {
			o->own++;
			o->own_bytes += nr_bytes;
		} else {
			o->untimed++;
		}
		return 0;
	}
	now = bpf_ktime_get_ns();
	if (now >= issued)
		record(slot, SERVICE_READ + class, now - issued, nr_bytes);
	if (class == CLASS_FLUSH)
		return 0;
	/* The start is the plug's cached time when the request was made in
	 * a plug (Linux 6.9 on): never after the issue, which is read from
	 * the clock itself; were it after, the two are one instant. */
	start = start_stamped(rq) ? rq->start_time_ns : 0;
	if (start) {
		record(slot, QUEUE_READ + class, issued > start ? issued - start : 0, 0);
	} else {
		o = bpf_map_lookup_elem(&others, &slot);
		if (o)
			o->no_start++;
	}
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
