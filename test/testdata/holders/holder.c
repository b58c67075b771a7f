/*
 * holder MODE PATH: holds PATH (a device or a file) the way MODE says,
 * prints "ready" once it does and waits to be killed. The holder tests
 * (test/holders_test.go) build it with gcc and point ioprobe at PATH.
 *
 *   rdwr    open(O_RDWR) and keep the descriptor
 *   mmap    open(O_RDWR), mmap its first page MAP_SHARED PROT_WRITE and
 *           close the descriptor: only /proc/PID/maps shows it
 *   thread  a thread calls unshare(CLONE_FILES) and opens it O_RDWR: the
 *           descriptor is only in /proc/PID/task/TID/fd
 *   uring   open(O_RDWR), register it in an io_uring
 *           (IORING_REGISTER_FILES) and close the descriptor: only the
 *           ring's fdinfo shows it
 *   posix   open(O_RDWR) and take a POSIX write lock (fcntl F_SETLK)
 *   ofd     open(O_RDONLY) and take an OFD read lock (F_OFD_SETLK)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *path;
static int ready[2];

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void *own_table(void *arg)
{
	(void)arg;
	if (unshare(CLONE_FILES))
		die("unshare");
	if (open(path, O_RDWR) < 0)
		die("open");
	if (write(ready[1], "x", 1) != 1)
		die("write");
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: holder rdwr|mmap|thread|uring|posix|ofd PATH\n");
		return 2;
	}
	const char *mode = argv[1];
	path = argv[2];
	if (!strcmp(mode, "thread")) {
		pthread_t t;
		char c;
		if (pipe(ready) || pthread_create(&t, NULL, own_table, NULL))
			die("thread");
		if (read(ready[0], &c, 1) != 1)
			die("read");
		close(ready[0]);
		close(ready[1]);
	} else {
		int fd = open(path, strcmp(mode, "ofd") ? O_RDWR : O_RDONLY);
		if (fd < 0)
			die("open");
		if (!strcmp(mode, "mmap")) {
			if (mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED)
				die("mmap");
			close(fd);
		} else if (!strcmp(mode, "uring")) {
			struct io_uring_params p;
			memset(&p, 0, sizeof p);
			int ring = syscall(__NR_io_uring_setup, 4, &p);
			if (ring < 0)
				die("io_uring_setup");
			if (syscall(__NR_io_uring_register, ring, IORING_REGISTER_FILES, &fd, 1) < 0)
				die("io_uring_register");
			close(fd);
		} else if (!strcmp(mode, "posix") || !strcmp(mode, "ofd")) {
			struct flock l = {.l_type = strcmp(mode, "ofd") ? F_WRLCK : F_RDLCK, .l_whence = SEEK_SET};
			if (fcntl(fd, strcmp(mode, "ofd") ? F_SETLK : F_OFD_SETLK, &l))
				die("fcntl");
		} else if (strcmp(mode, "rdwr")) {
			fprintf(stderr, "holder: unknown mode %s\n", mode);
			return 2;
		}
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
