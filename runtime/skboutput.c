/* skboutput.c — skboutput("file.pcap", skb, len, offset): the packets bpf_skb_output copies into
 * the session's perf event array (DT_AUX_SKB_OUTPUT, one buffer per CPU, each sample a struct
 * dt_skb_hdr and then the packet's first `len` bytes) are written from `offset` on to their
 * pcap files with libpcap, as bpftrace writes them: raw IP (DLT_RAW), the sample's boot time
 * made wall-clock time. The files are created (truncated) when the program's resources are
 * prepared, before anything attaches, so that a file that cannot be written stops the run at
 * once; they are flushed as packets come and closed when the session ends. */
#include "runtime/session_internal.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
/* pcap/bpf.h's classic BPF types would clash with linux/bpf.h's; nothing here filters. */
#define PCAP_DONT_INCLUDE_PCAP_BPF_H
struct bpf_program;
#include <pcap/pcap.h>
#include <pcap/dlt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* bpftrace's default for BPFTRACE_PERF_RB_PAGES: pages per CPU of the perf buffer. */
#define SKB_PAGES_DEFAULT 64

struct skb_file {
	char *path;
	pcap_dumper_t *d;
};

struct dt_skb {
	int map_fd;                 /* the perf event array */
	struct perf_buffer *pb;
	pcap_t *dead;               /* libpcap's handle for writing without capturing */
	DT_VEC(struct skb_file) files; /* one per path, whichever calls name it */
	uint64_t lost, written, short_pkts;
};

static struct skb_file *file_of(struct dt_skb *k, const char *path)
{
	for (size_t i = 0; i < k->files.n; i++)
		if (!strcmp(k->files.v[i].path, path))
			return &k->files.v[i];
	return NULL;
}

static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	dt_session *s = ctx;
	struct dt_skb *k = s->skb;
	struct dt_skb_hdr h;

	(void)cpu;
	if (size < sizeof(h))
		return;
	memcpy(&h, data, sizeof(h));
	dt_unit *u = dt_session_unit_by_id(s, h.unit);
	if (!u || !u->prog || h.event_id >= u->prog->nevents)
		return;
	const dt_event_desc *e = &u->prog->events[h.event_id];
	struct skb_file *f = e->func == DT_F_SKBOUTPUT ? file_of(k, e->fmt) : NULL;
	if (!f || !f->d)
		return;
	/* A perf sample's size is rounded up to 8 bytes: the header says how many are packet. */
	uint32_t len = DT_MIN(h.len, size - (uint32_t)sizeof(h));
	uint32_t off = (uint32_t)e->call->call.args[3]->i.value;
	if (off >= len) {
		k->short_pkts++; /* nothing past the offset: nothing to write, as bpftrace */
		return;
	}
	uint64_t ns = h.ns + s->wall_offset_ns;
	struct pcap_pkthdr ph = {
		.ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			.tv_usec = (suseconds_t)(ns % 1000000000ull / 1000) },
		.caplen = len - off,
		.len = len - off,
	};
	pcap_dump((u_char *)f->d, &ph, (const u_char *)data + sizeof(h) + off);
	pcap_dump_flush(f->d);
	k->written++;
}

static void on_lost(void *ctx, int cpu, __u64 n)
{
	dt_session *s = ctx;

	(void)cpu;
	s->skb->lost += n;
}

/* BPFTRACE_PERF_RB_PAGES or the config block's perf_rb_pages, as the session read them; libbpf
 * wants a power of two. */
static uint32_t perf_pages(const dt_session *s)
{
	uint32_t v = s->o.perf_rb_pages ? s->o.perf_rb_pages : SKB_PAGES_DEFAULT, p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

int dt_skb_prepare(dt_session *s, dt_unit *u)
{
	struct dt_skb *k = s->skb;
	char errbuf[PCAP_ERRBUF_SIZE];

	if (!k) {
		k = s->skb = xcalloc(1, sizeof(*k));
		k->map_fd = bpf_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "skboutput", 4, 4,
					   (uint32_t)DT_MAX(libbpf_num_possible_cpus(), 1), NULL);
		if (k->map_fd < 0) {
			int rc = -errno;

			fprintf(s->err, "dwarftrace: skboutput: cannot create its perf event array: "
				"%s\n", dt_strerror(-rc));
			return rc;
		}
		k->pb = perf_buffer__new(k->map_fd, perf_pages(s), on_sample, on_lost, s, NULL);
		if (!k->pb) {
			int rc = -errno;

			fprintf(s->err, "dwarftrace: skboutput: cannot open its perf buffers: %s\n",
				dt_strerror(-rc));
			return rc;
		}
		k->dead = pcap_open_dead(DLT_RAW, 65535);
		if (!k->dead) {
			fprintf(s->err, "dwarftrace: skboutput: libpcap cannot make a handle\n");
			return -ENOMEM;
		}
	}
	for (uint32_t i = 0; !s->o.dry_run && i < u->prog->nevents; i++) {
		const dt_event_desc *e = &u->prog->events[i];

		/* A dry run writes no file. */
		if (e->func != DT_F_SKBOUTPUT || file_of(k, e->fmt))
			continue;
		struct skb_file f = { .path = xstrdup(e->fmt) };
		f.d = pcap_dump_open(k->dead, f.path);
		DT_VEC_PUSH(&k->files, f);
		if (!f.d) {
			/* libpcap's words name the file ("PATH: No such file or directory"). */
			snprintf(errbuf, sizeof(errbuf), "%s", pcap_geterr(k->dead));
			fprintf(s->err, "dwarftrace: skboutput: cannot write the pcap file: %s\n",
				errbuf);
			return -EIO;
		}
	}
	return 0;
}

int dt_skb_map_fd(dt_session *s)
{
	return s->skb ? s->skb->map_fd : -ENOENT;
}

int dt_skb_poll_fd(dt_session *s)
{
	return s->skb && s->skb->pb ? perf_buffer__epoll_fd(s->skb->pb) : -1;
}

int dt_skb_consume(dt_session *s)
{
	if (!s->skb || !s->skb->pb)
		return 0;
	uint64_t before = s->skb->written;
	int rc = perf_buffer__consume(s->skb->pb);

	return rc < 0 ? rc : (int)(s->skb->written - before);
}

void dt_skb_report(dt_session *s)
{
	struct dt_skb *k = s->skb;

	if (!k)
		return;
	if (k->lost)
		fprintf(s->err, "WARNING: skboutput: %llu packets lost: the perf buffers were full "
			"(BPFTRACE_PERF_RB_PAGES, %u pages a CPU now, holds more)\n",
			(unsigned long long)k->lost, perf_pages(s));
	if (s->o.verbose)
		fprintf(s->err, "skboutput: %llu packets written, %llu no longer than their "
			"offset\n", (unsigned long long)k->written,
			(unsigned long long)k->short_pkts);
}

void dt_skb_free(dt_session *s)
{
	struct dt_skb *k = s->skb;

	if (!k)
		return;
	if (k->pb)
		perf_buffer__consume(k->pb); /* what is still there goes to the files */
	for (size_t i = 0; i < k->files.n; i++) {
		if (k->files.v[i].d)
			pcap_dump_close(k->files.v[i].d);
		free(k->files.v[i].path);
	}
	free(k->files.v);
	perf_buffer__free(k->pb);
	if (k->map_fd >= 0)
		close(k->map_fd);
	if (k->dead)
		pcap_close(k->dead);
	free(k);
	s->skb = NULL;
}
