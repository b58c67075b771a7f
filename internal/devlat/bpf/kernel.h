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
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_MAP_TYPE_LRU_HASH 9
#define BPF_ANY 0

#define CORE_ATTR __attribute__((preserve_access_index))

struct gendisk;

struct block_device {
	dev_t bd_dev;
} CORE_ATTR;

struct gendisk {
	struct block_device *part0;
} CORE_ATTR;

struct request_queue {
	struct gendisk *disk;
} CORE_ATTR;

struct bio {
	struct block_device *bi_bdev;
} CORE_ATTR;

struct request {
	struct request_queue *q;
	__u32 cmd_flags;
	__u32 __data_len;
	struct bio *bio;
	struct block_device *part;
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

/* Whether the running kernel has the field (a CO-RE relocation). */
#define field_exists(f) __builtin_preserve_field_info(f, 2 /* BPF_FIELD_EXISTS */)

/* Helpers by their number in include/uapi/linux/bpf.h. */
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value, __u64 flags) = (void *)2;
static long (*bpf_map_delete_elem)(void *map, const void *key) = (void *)3;
static __u64 (*bpf_ktime_get_ns)(void) = (void *)5;

#endif
