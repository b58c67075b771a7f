/*
 * bareloop: the floor for ioprobe's sync engine. One thread, queue depth
 * 1, random O_DIRECT reads with pread(2), the monotonic clock read just
 * before and just after each (as ioprobe's sync engine reads it, through
 * the vDSO), the latency summed: nothing else. What ioprobe costs beyond
 * this loop per I/O is its own (a generator, a histogram, the Go runtime's
 * system call entry and exit).
 *
 *   bareloop [-b BYTES] [-r IOPS] [-s BYTES] -t SECONDS FILE
 *
 *   -b  transfer size (default 4096), also the alignment of every offset
 *   -s  the region read, from offset 0 (default: the whole file or device)
 *   -r  pace to IOPS reads a second on an absolute schedule, sleeping with
 *       clock_nanosleep(TIMER_ABSTIME) between them: the floor for a
 *       rate-limited canary (default: as fast as it goes)
 *   -t  run time
 *
 * It prints one JSON object: {"ios":N,"seconds":S,"iops":X,
 * "latency_mean_ns":M,"latency_min_ns":A,"latency_max_ns":B,"errors":E}.
 * Built by scripts/bench-fio.sh and scripts/bench-idle.sh with gcc -O2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static inline int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void usage(void)
{
	fprintf(stderr, "usage: bareloop [-b BYTES] [-r IOPS] [-s BYTES] -t SECONDS FILE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	long long bs = 4096, region = 0;
	double seconds = 0, rate = 0;
	int opt;
	while ((opt = getopt(argc, argv, "b:r:s:t:")) != -1) {
		switch (opt) {
		case 'b': bs = atoll(optarg); break;
		case 'r': rate = atof(optarg); break;
		case 's': region = atoll(optarg); break;
		case 't': seconds = atof(optarg); break;
		default: usage();
		}
	}
	if (optind != argc - 1 || bs <= 0 || seconds <= 0 || rate < 0)
		usage();
	const char *path = argv[optind];
	int fd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "bareloop: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (region == 0) {
		struct stat st;
		unsigned long long bytes = 0;
		if (fstat(fd, &st) == 0 && S_ISBLK(st.st_mode))
			ioctl(fd, BLKGETSIZE64, &bytes);
		else
			bytes = st.st_size;
		region = (long long)bytes;
	}
	uint64_t blocks = (uint64_t)(region / bs);
	if (blocks == 0) {
		fprintf(stderr, "bareloop: %s: region smaller than one block\n", path);
		return 1;
	}
	void *buf;
	if (posix_memalign(&buf, 4096, bs) != 0)
		return 1;

	uint64_t x = 0x9e3779b97f4a7c15ULL ^ (uint64_t)now_ns(); /* xorshift64 */
	int64_t interval = rate > 0 ? (int64_t)(1e9 / rate) : 0;
	int64_t start = now_ns(), end = start + (int64_t)(seconds * 1e9);
	int64_t next = start, t1 = start;
	uint64_t ios = 0, errors = 0;
	int64_t sum = 0, lo = INT64_MAX, hi = 0;
	while (t1 < end) {
		if (interval) {
			struct timespec ts = { next / 1000000000, next % 1000000000 };
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
			next += interval;
		}
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		off_t off = (off_t)(x % blocks) * bs;
		int64_t t0 = now_ns();
		ssize_t n = pread(fd, buf, bs, off);
		t1 = now_ns();
		if (n != bs) {
			errors++;
			continue;
		}
		int64_t lat = t1 - t0;
		sum += lat;
		if (lat < lo)
			lo = lat;
		if (lat > hi)
			hi = lat;
		ios++;
	}
	double wall = (t1 - start) / 1e9;
	printf("{\"ios\":%llu,\"seconds\":%.6f,\"iops\":%.2f,\"latency_mean_ns\":%.1f,"
	       "\"latency_min_ns\":%lld,\"latency_max_ns\":%lld,\"errors\":%llu}\n",
	       (unsigned long long)ios, wall, ios / wall, ios ? (double)sum / ios : 0.0,
	       (long long)(ios ? lo : 0), (long long)hi, (unsigned long long)errors);
	return errors ? 1 : 0;
}
