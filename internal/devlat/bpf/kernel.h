/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * The few kernel types and BPF helpers devlat.c uses, written out here
 * instead of a generated vmlinux.h or libbpf's headers, so that the
 * objects are built from this directory alone (make bpf; clang only).
 *
 * The structs carry preserve_access_index: clang records every field
 * access as a CO-RE relocation and the loader (cilium/ebpf) moves it to
 * the running kernel's offset, found by name in its BTF
 * (/sys/kernel/btf/vmlinux). Only the fields named here are read, and
 * their order and the structs' sizes do not matter.
 */
#ifndef IOPROBE_DEVLAT_KERNEL_H
#define IOPROBE_DEVLAT_KERNEL_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef __u32 dev_t;

#define SEC(name) __attribute__((section(name), used))
#define __always_inline inline __attribute__((always_inline))

/* BTF-defined maps (the layout libbpf and cilium/ebpf read). */
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name

#define BPF_MAP_TYPE_HASH 1
#define BPF_MAP_TYPE_ARRAY 2
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_F_RDONLY_PROG (1U << 7) /* the programs only read the map */

#define CORE_ATTR __attribute__((preserve_access_index))

struct gendisk;

struct block_device {
	dev_t bd_dev;
} CORE_ATTR;

struct gendisk {
	struct block_device *part0;
} CORE_ATTR;

struct list_head {
	struct list_head *next;
} CORE_ATTR;

/* blk-stat's users of a queue (block/blk-stat.h): while it has any, the
 * queue has QUEUE_FLAG_STATS and blk_mq_start_request stamps
 * rq->io_start_time_ns (and sets RQF_STATS). The flag's number is in an
 * anonymous enum, which CO-RE cannot relocate; what sets it can be read. */
struct blk_queue_stats {
	struct list_head callbacks;
	int accounting;
} CORE_ATTR;

/* Before Linux 6.x the count was a flag. */
struct blk_queue_stats___bool {
	__u8 enable_accounting;
} CORE_ATTR;

struct request_queue {
	struct gendisk *disk;
	struct blk_queue_stats *stats;
} CORE_ATTR;

/* A task's plug caches the clock from Linux 6.9 on: while cur_ktime is
 * set, the block layer's stamps in this task are that cached time. */
struct blk_plug {
	__u64 cur_ktime;
} CORE_ATTR;

struct task_struct {
	struct blk_plug *plug;
} CORE_ATTR;

struct bio {
	struct block_device *bi_bdev;
	__u16 bi_ioprio;
} CORE_ATTR;

struct blk_mq_hw_ctx {
	__u32 queue_num;
} CORE_ATTR;

/* A request's life (include/linux/blk-mq.h): idle until issued. */
enum mq_rq_state {
	MQ_RQ_IDLE = 0,
	MQ_RQ_IN_FLIGHT = 1,
	MQ_RQ_COMPLETE = 2,
};

struct request {
	struct request_queue *q;
	struct blk_mq_hw_ctx *mq_hctx;
	__u32 cmd_flags;
	__u32 rq_flags;
	int tag;
	__u32 __data_len;
	struct bio *bio;
	struct block_device *part;
	__u64 start_time_ns;
	__u64 io_start_time_ns;
	enum mq_rq_state state;
} CORE_ATTR;

/* The bits of rq_flags, by name: an enum since Linux 6.x (defines
 * before, which BTF does not carry). Values are the running kernel's
 * (CO-RE enum relocations). */
enum rqf_flags {
	__RQF_USE_SCHED = 5,
	__RQF_IO_STAT = 8,
	__RQF_STATS = 11,
};

/* Older kernels keep the I/O priority in the request itself. */
struct request___ioprio {
	__u16 ioprio;
} CORE_ATTR;

/* Linux 5.11-5.14: the disk hung off the request itself. */
struct request___rq_disk {
	struct gendisk *rq_disk;
} CORE_ATTR;

/* The op in cmd_flags (include/linux/blk_types.h). */
#define REQ_OP_MASK 0xff
#define REQ_OP_READ 0
#define REQ_OP_WRITE 1
#define REQ_OP_FLUSH 2
#define REQ_OP_DISCARD 3
#define REQ_OP_DRV_IN 34 /* driver-private (passthrough) ops from here on */

/* The I/O priority's hint (include/uapi/linux/ioprio.h, Linux 6.5 on):
 * 10 bits above the level. Hints 1-7 select a device's command duration
 * limits; ioprobe marks its own reads that are not the workload's with
 * the last hint, which no kernel defines and every device ignores
 * (internal/ownio, which holds the same value). */
#define IOPRIO_HINT_SHIFT 3
#define IOPRIO_HINT_MASK 0x3ff
#define OWN_HINT 0x3ff

/* Whether the running kernel has the field (a CO-RE relocation). */
#define field_exists(f) __builtin_preserve_field_info(f, 2 /* BPF_FIELD_EXISTS */)

/* Whether the running kernel has the enum's value, and the value. */
#define enum_value_exists(type, v) __builtin_preserve_enum_value(*(typeof(type) *)v, 0 /* BPF_ENUMVAL_EXISTS */)
#define enum_value(type, v) __builtin_preserve_enum_value(*(typeof(type) *)v, 1 /* BPF_ENUMVAL_VALUE */)

/* Helpers by their number in include/uapi/linux/bpf.h. */
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static __u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static struct task_struct *(*bpf_get_current_task_btf)(void) = (void *)158;

#endif
