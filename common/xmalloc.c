/* xmalloc.c — the abort-on-OOM allocation family and the tiny utilities of common.h. */
#include "common/common.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void oom(size_t n)
{
	fprintf(stderr, "dwarftrace: out of memory (allocating %zu bytes)\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);
	if (!p)
		oom(n * sz);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		oom(strlen(fmt));
	va_end(ap);
	return s;
}

int dt_read_file(const char *path, char **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 4096, n = 0;
	char *buf;

	if (!f)
		return -errno;
	buf = xmalloc(cap);
	for (;;) {
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (n + 1 < cap) {
			if (ferror(f)) {
				int err = errno ? -errno : -EIO;
				fclose(f);
				free(buf);
				return err;
			}
			break;
		}
		cap *= 2;
		buf = xrealloc(buf, cap);
	}
	fclose(f);
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

uint64_t dt_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

unsigned dt_worker_threads(void)
{
	const char *e = getenv("DT_CG_THREADS");
	long n = 1;
	cpu_set_t set;

	if (e && *e)
		n = strtol(e, NULL, 10);
	else if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	return n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
}

/* include/linux/errno.h: codes the kernel keeps for itself, which still reach userspace from
 * bpf(2), perf_event_open(2) and uprobe attachment. */
const char *dt_strerror(int err)
{
	switch (err) {
	case 512: case 513: case 514: case 516:
		return "interrupted (the kernel asked for the call to be restarted)";
	case 515:
		return "no such ioctl for this kernel object";
	case 517:
		return "a kernel driver is not ready yet";
	case 518:
		return "stale file handle for this kernel";
	case 519:
		return "parameter not supported by this kernel";
	case 521:
		return "invalid file handle for this kernel";
	case 522:
		return "update out of sync with the kernel";
	case 523:
		return "invalid cookie for this kernel";
	case 524:
		return "operation not supported by this kernel";
	case 525:
		return "buffer or request too small for the kernel";
	case 526:
		return "the kernel could not serve this request";
	case 527:
		return "type not supported by the kernel";
	case 528:
		return "the kernel is busy, try again";
	case 529:
		return "the kernel request was queued, not done";
	case 530:
		return "the kernel request was cancelled before it ran";
	default:
		return strerror(err);
	}
}
