/* debuginfo.c — where the symbols of a stripped object come from when neither the object nor its
 * separate debug file on this machine (elfproc's search: build-id tree, debuglink, --debuginfo
 * dirs) carries them: the MiniDebugInfo section (.gnu_debugdata, an xz-compressed ELF holding
 * .symtab, as Fedora and CentOS ship), and last a debuginfod server (DEBUGINFOD_URLS). Both are
 * symbolization policy, so they live here, on elfproc's objects. Network fetches never run on the
 * output path: one worker
 * thread takes build-ids from a queue and fetches them through libdebuginfod (which keeps its own
 * on-disk cache, so a second run is local); the symbolizer asks later whether a file has arrived
 * and merges it then. */
#include "symbols/symbols_internal.h"
#include "common/common.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <lzma.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- MiniDebugInfo */

dt_elf *dt_dbg_minidebuginfo(dt_elf *e)
{
	dt_elf_section d;
	dt_elf *mini = NULL;
	int err = EINVAL;

	if (dt_elf_section_get(e, ".gnu_debugdata", &d) < 0 || !d.data || !d.size) {
		errno = ENOENT;
		return NULL;
	}

	/* The decompressed size is not stored up front: grow the buffer as the decoder asks. A
	 * 1 GiB memory limit keeps a hostile file from taking the machine. */
	lzma_stream st = LZMA_STREAM_INIT;
	size_t cap = DT_MAX(d.size * 4, (size_t)65536);
	uint8_t *buf = xmalloc(cap);
	lzma_ret r;

	if (lzma_stream_decoder(&st, 1ull << 30, 0) != LZMA_OK) {
		free(buf);
		errno = ENOMEM;
		return NULL;
	}
	st.next_in = d.data;
	st.avail_in = d.size;
	st.next_out = buf;
	st.avail_out = cap;
	for (;;) {
		r = lzma_code(&st, LZMA_FINISH);
		if (r == LZMA_STREAM_END)
			break;
		if (r != LZMA_OK && r != LZMA_BUF_ERROR)
			goto out;
		if (st.avail_out == 0) {
			size_t used = cap;
			cap *= 2;
			buf = xrealloc(buf, cap);
			st.next_out = buf + used;
			st.avail_out = cap - used;
		} else if (r == LZMA_BUF_ERROR) {
			/* No progress possible with output room left: truncated input. */
			goto out;
		}
	}
	mini = dt_elf_open_mem(buf, (size_t)st.total_out, "MiniDebugInfo");
	err = errno;
out:
	lzma_end(&st);
	free(buf);
	if (!mini)
		errno = err;
	return mini;
}

/* ---------------------------------------------------------------- debuginfod */

enum job_state { JOB_QUEUED, JOB_DONE };

struct job {
	uint8_t id[64];
	size_t idn;
	enum job_state state;
	char *path;           /* the cached debug file, when the server had it */
	int err;
	struct job *next;
};

struct dt_dbgd {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool started, stop;
	struct job *jobs;      /* every request, newest first */
	size_t queued;
};

dt_dbgd *dt_dbgd_new(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	dt_dbgd *d;

	if (!urls || !*urls)
		return NULL;
	d = xcalloc(1, sizeof(*d));
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	return d;
}

static struct job *next_queued(dt_dbgd *d)
{
	for (struct job *j = d->jobs; j; j = j->next)
		if (j->state == JOB_QUEUED)
			return j;
	return NULL;
}

/* libdebuginfod is opened on first use, not linked: it pulls in libcurl, gnutls, krb5, ldap and
 * ~25 more libraries whose loading and constructors (curl_global_init) cost every run ~6 ms and
 * ~6 MB of RSS, while only runs with DEBUGINFOD_URLS set and a stripped object ever fetch. The
 * three entry points come from the header's types, so a signature change still fails to build. */
static struct {
	pthread_once_t once;
	__typeof__(debuginfod_begin) *begin;
	__typeof__(debuginfod_find_debuginfo) *find_debuginfo;
	__typeof__(debuginfod_end) *end;
} dbgd_lib = { .once = PTHREAD_ONCE_INIT };

static void dbgd_lib_open(void)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "dwarftrace: debuginfod unavailable: %s\n", dlerror());
		return;
	}
	dbgd_lib.begin = (__typeof__(dbgd_lib.begin))dlsym(h, "debuginfod_begin");
	dbgd_lib.find_debuginfo =
		(__typeof__(dbgd_lib.find_debuginfo))dlsym(h, "debuginfod_find_debuginfo");
	dbgd_lib.end = (__typeof__(dbgd_lib.end))dlsym(h, "debuginfod_end");
	if (!dbgd_lib.begin || !dbgd_lib.find_debuginfo || !dbgd_lib.end) {
		fprintf(stderr, "dwarftrace: debuginfod unavailable: libdebuginfod.so.1 lacks "
			"the client API\n");
		dbgd_lib.begin = NULL;
	}
	/* The handle stays open for the process's life: the worker may still hold a client. */
}

static void *worker(void *arg)
{
	dt_dbgd *d = arg;

	pthread_once(&dbgd_lib.once, dbgd_lib_open);
	/* One client for the thread's life: it holds the connection settings and the cache. */
	debuginfod_client *c = dbgd_lib.begin ? dbgd_lib.begin() : NULL;

	pthread_mutex_lock(&d->lock);
	for (;;) {
		struct job *j = NULL;

		while (!d->stop && !(j = next_queued(d)))
			pthread_cond_wait(&d->cond, &d->lock);
		if (d->stop)
			break;
		uint8_t id[64];
		size_t idn = j->idn;
		memcpy(id, j->id, idn);
		pthread_mutex_unlock(&d->lock);

		char *path = NULL;
		int fd = c ? dbgd_lib.find_debuginfo(c, id, (int)idn, &path) : -ENOSYS;

		if (fd >= 0)
			close(fd);
		pthread_mutex_lock(&d->lock);
		j->state = JOB_DONE;
		j->err = fd < 0 ? fd : 0;
		j->path = fd >= 0 ? path : NULL;
		if (fd < 0)
			free(path);
		d->queued--;
		pthread_cond_broadcast(&d->cond);
	}
	pthread_mutex_unlock(&d->lock);
	if (c)
		dbgd_lib.end(c);
	return NULL;
}

static struct job *find_job(dt_dbgd *d, const uint8_t *id, size_t idn)
{
	for (struct job *j = d->jobs; j; j = j->next)
		if (j->idn == idn && !memcmp(j->id, id, idn))
			return j;
	return NULL;
}

int dt_dbgd_request(dt_dbgd *d, const uint8_t *id, size_t idn)
{
	int err = 0;

	if (!d || !idn || idn > sizeof(((struct job *)0)->id))
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	if (!find_job(d, id, idn)) {
		struct job *j = xcalloc(1, sizeof(*j));

		memcpy(j->id, id, idn);
		j->idn = idn;
		j->next = d->jobs;
		d->jobs = j;
		d->queued++;
		if (!d->started) {
			err = -pthread_create(&d->thread, NULL, worker, d);
			d->started = err == 0;
		}
		pthread_cond_broadcast(&d->cond);
	}
	pthread_mutex_unlock(&d->lock);
	return err;
}

int dt_dbgd_result(dt_dbgd *d, const uint8_t *id, size_t idn, char **path)
{
	int rc;

	*path = NULL;
	if (!d)
		return -ENOENT;
	pthread_mutex_lock(&d->lock);
	struct job *j = find_job(d, id, idn);
	if (!j)
		rc = -ENOENT;
	else if (j->state == JOB_QUEUED)
		rc = -EINPROGRESS;
	else if (j->path)
		rc = 0, *path = xstrdup(j->path);
	else
		rc = j->err ? j->err : -ENOENT;
	pthread_mutex_unlock(&d->lock);
	return rc;
}

bool dt_dbgd_wait(dt_dbgd *d, uint64_t timeout_ns)
{
	struct timespec ts;
	bool idle;

	if (!d)
		return true;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(timeout_ns / 1000000000ull);
	ts.tv_nsec += (long)(timeout_ns % 1000000000ull);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&d->lock);
	while (d->queued && pthread_cond_timedwait(&d->cond, &d->lock, &ts) == 0)
		;
	idle = d->queued == 0;
	pthread_mutex_unlock(&d->lock);
	return idle;
}

void dt_dbgd_free(dt_dbgd *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	/* A fetch in flight cannot be interrupted through libdebuginfod's API short of a progress
	 * callback; detach instead of blocking the exit on the network. */
	if (d->started && d->queued)
		pthread_detach(d->thread);
	else if (d->started)
		pthread_join(d->thread, NULL);
	else
		goto free_jobs;
	if (d->queued)
		return; /* the detached worker still uses d: leak it rather than free under it */
free_jobs:
	for (struct job *j = d->jobs, *next; j; j = next) {
		next = j->next;
		free(j->path);
		free(j);
	}
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
