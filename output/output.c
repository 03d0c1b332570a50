/* output.c — the output object: where printf events, print() values, time() stamps, runtime
 * messages and whole script maps become bpftrace-shaped text or NDJSON. Maps are read from the
 * kernel into flat arrays (maps.c) and printed from there (dt_out_print_entries), which
 * reproduces bpftrace 0.17's choices: per-CPU values combined, plain maps sorted by value
 * (count/sum/int/min/max) or else by key, hist/lhist/avg/stats grouped per key, ordered by key
 * bytes and then by total or average, `top` keeping the last entries, and the same separators
 * (blank line after each map, two after avg/stats maps, none between stack values). */
#include "output/output_internal.h"
#include "common/common.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void dt_out_set_current(dt_out *o, bool current)
{
	o->current = current;
}

dt_out *dt_out_new(const dt_out_opts *opts)
{
	dt_out *o = xcalloc(1, sizeof(*o));
	o->f = opts->file ? opts->file : stdout;
	o->notice = opts->notice ? opts->notice : stderr;
	o->format = opts->format;
	o->json_frames = opts->json_frames;
	o->debug_info_at = opts->debug_info_at;
	o->stacks_apart = opts->stacks_apart;
	o->sym = opts->sym;
	o->stack_frames = opts->stack_frames;
	o->stack_ctx = opts->stack_ctx;
	o->ncpus = opts->ncpus;
	o->trailer = xstrdup(opts->str_trunc_trailer ? opts->str_trunc_trailer : "..");
	if (o->ncpus <= 0) {
		int n = libbpf_num_possible_cpus();
		o->ncpus = n > 0 ? n : 1;
	}
	return o;
}

void dt_out_free(dt_out *o)
{
	if (!o)
		return;
	fflush(o->f);
	free(o->line.s);
	free(o->trailer);
	free(o);
}

/* The first failure is kept with its errno: stdio only remembers that one happened. */
static void note_write_error(dt_out *o)
{
	if (!o->werr)
		o->werr = errno ? errno : EIO;
}

void dt_out_flush(dt_out *o)
{
	/* Set by a write made on the FILE directly (a stage dump) just before: errno still says
	 * why, and the flush that follows may succeed (stdio drops what it could not write). */
	if (ferror(o->f))
		note_write_error(o);
	errno = 0;
	if (fflush(o->f))
		note_write_error(o);
}

int dt_out_error(const dt_out *o)
{
	if (o->werr)
		return -o->werr;
	return ferror(o->f) ? -EIO : 0;
}

/* A failed write of the data stream is kept for dt_out_error; the notice stream is stderr's. */
static void emit_to(dt_out *o, FILE *f)
{
	errno = 0;
	if (fwrite(dt_sb_str(&o->line), 1, o->line.n, f) != o->line.n && f == o->f)
		note_write_error(o);
	dt_sb_reset(&o->line);
}

/* Every record but folded lines: in FOLDED the data stream holds folded lines only, so that a
 * pipe into flamegraph.pl or speedscope reads nothing else; the rest is text on the notice
 * stream. */
static void emit(dt_out *o)
{
	emit_to(o, o->format == DT_OUT_FOLDED ? o->notice : o->f);
}

/* {"type": "TYPE", "data": "TEXT"} — the JSON form of every text-only record. */
static void emit_json_text(dt_out *o, const char *type, const char *s, size_t n)
{
	dt_sb_printf(&o->line, "{\"type\": \"%s\", \"data\": \"", type);
	dt_json_escape(&o->line, s, n);
	dt_sb_puts(&o->line, "\"}\n");
	emit(o);
}

void dt_out_printf(dt_out *o, const char *fmt, const dt_type *args, const void *data, size_t len)
{
	dt_sbuf b = {0};
	dt_fmt_printf(o, &b, fmt, args, data, len);
	if (o->format == DT_OUT_JSON) {
		emit_json_text(o, "printf", dt_sb_str(&b), b.n);
	} else {
		dt_sb_putn(&o->line, dt_sb_str(&b), b.n);
		emit(o);
	}
	free(b.s);
}

char *dt_out_sprintf(dt_out *o, const char *fmt, const dt_type *args, const void *data, size_t len)
{
	dt_sbuf b = {0};

	dt_fmt_printf(o, &b, fmt, args, data, len);
	return b.s ? b.s : xstrdup("");
}

void dt_out_text(dt_out *o, const char *type, const char *s, size_t n)
{
	if (o->format == DT_OUT_JSON) {
		emit_json_text(o, type, s, n);
	} else {
		dt_sb_putn(&o->line, s, n);
		emit(o);
	}
}

void dt_out_join(dt_out *o, const char *delim, const void *data, size_t len)
{
	struct dt_ev_join_hdr h = { 0 };
	dt_sbuf b = {0};

	memcpy(&h, data, DT_MIN(len, sizeof(h)));
	for (uint32_t i = 0; i < h.n && i < DT_JOIN_MAX_ARGS; i++) {
		size_t off = sizeof(h) + (size_t)i * h.size;
		if (off + h.size > len)
			break;
		if (i)
			dt_sb_puts(&b, delim);
		dt_sb_putn(&b, (const char *)data + off, strnlen((const char *)data + off, h.size));
	}
	if (o->format == DT_OUT_JSON) {
		emit_json_text(o, "join", dt_sb_str(&b), b.n);
	} else {
		dt_sb_putn(&o->line, dt_sb_str(&b), b.n);
		dt_sb_putc(&o->line, '\n');
		emit(o);
	}
	free(b.s);
}

void dt_out_value(dt_out *o, const dt_type *t, const void *data)
{
	if (o->format == DT_OUT_JSON) {
		dt_sb_puts(&o->line, "{\"type\": \"value\", \"data\": ");
		dt_fmt_value(o, &o->line, t, data, DT_FMT_JSON);
		dt_sb_puts(&o->line, "}\n");
	} else {
		dt_fmt_value(o, &o->line, t, data, DT_FMT_VALUE);
		dt_sb_putc(&o->line, '\n');
	}
	emit(o);
}

void dt_out_time(dt_out *o, const char *fmt)
{
	char buf[1024];
	time_t now = time(NULL);
	struct tm tm;
	size_t n = 0;

	if (localtime_r(&now, &tm))
		n = strftime(buf, sizeof(buf), fmt, &tm);
	if (n == 0)
		snprintf(buf, sizeof(buf), "(?)"); /* bpftrace's text for a time it cannot format */
	if (o->format == DT_OUT_JSON) {
		emit_json_text(o, "time", buf, strlen(buf));
	} else {
		dt_sb_puts(&o->line, buf);
		emit(o);
	}
}

void dt_out_message(dt_out *o, const char *fmt, ...)
{
	dt_sbuf b = {0};
	va_list ap;
	va_start(ap, fmt);
	dt_sb_vprintf(&b, fmt, ap);
	va_end(ap);
	if (o->format == DT_OUT_JSON) {
		emit_json_text(o, "message", dt_sb_str(&b), b.n);
	} else {
		dt_sb_printf(&o->line, "%s\n", dt_sb_str(&b));
		emit(o);
	}
	free(b.s);
}

void dt_out_attached(dt_out *o, uint64_t nprobes)
{
	if (o->format == DT_OUT_JSON)
		/* bpftrace's current shape: the count at the top too, as in its lost_events object. */
		dt_sb_printf(&o->line, "{\"type\": \"attached_probes\", \"count\": %" PRIu64
			     ", \"data\": {\"probes\": %" PRIu64 "}}\n", nprobes, nprobes);
	else
		dt_sb_printf(&o->line, "Attaching %" PRIu64 " probe%s...\n", nprobes,
			     nprobes == 1 ? "" : "s");
	emit(o);
}

bool dt_out_helper_error(dt_out *o, const char *helper, int64_t retcode, const char *msg,
			 const char *file, unsigned line, unsigned col)
{
	if (o->format != DT_OUT_JSON)
		return false;
	dt_sb_puts(&o->line, "{\"type\": \"helper_error\", ");
	if (msg) {
		dt_sb_puts(&o->line, "\"msg\": \"");
		dt_json_escape(&o->line, msg, strlen(msg));
		dt_sb_puts(&o->line, "\", ");
	}
	dt_sb_printf(&o->line, "\"helper\": \"%s\", \"retcode\": %" PRId64 ", ", helper, retcode);
	if (msg) {
		dt_sb_puts(&o->line, "\"filename\": \"");
		dt_json_escape(&o->line, file, strlen(file));
		dt_sb_puts(&o->line, "\", ");
	}
	dt_sb_printf(&o->line, "\"line\": %u, \"col\": %u}\n", line, col);
	emit(o);
	return true;
}

bool dt_out_runtime_error(dt_out *o, const char *msg, const char *file, unsigned line,
			  unsigned col)
{
	if (o->format != DT_OUT_JSON)
		return false;
	dt_sb_puts(&o->line, "{\"type\": \"runtime_error\", \"msg\": \"");
	dt_json_escape(&o->line, msg, strlen(msg));
	dt_sb_puts(&o->line, "\", \"filename\": \"");
	dt_json_escape(&o->line, file, strlen(file));
	dt_sb_printf(&o->line, "\", \"line\": %u, \"col\": %u}\n", line, col);
	emit(o);
	return true;
}

void dt_out_lost_events(dt_out *o, uint64_t lost)
{
	if (o->format == DT_OUT_JSON)
		dt_sb_printf(&o->line, "{\"type\": \"lost_events\", \"data\": {\"events\": %" PRIu64
			     "}}\n", lost);
	else
		dt_sb_printf(&o->line, "Lost %" PRIu64 " events\n", lost);
	emit(o);
}

void dt_out_maps_start(dt_out *o)
{
	/* bpftrace 0.17 writes two newlines before the maps it prints at exit, in JSON mode too;
	 * blank lines are not NDJSON, and not folded lines either. */
	if (o->format != DT_OUT_TEXT)
		return;
	dt_sb_puts(&o->line, "\n\n");
	emit(o);
}

/* ---------------------------------------------------------------- map entries */

typedef struct ent {
	const uint8_t *key;
	const uint8_t *val;  /* first CPU's value (or the only one) */
	int64_t v;           /* combined plain value; average for avg/stats; total for hist */
	int64_t count, total;
	uint64_t *buckets;   /* hist/lhist */
} ent;

typedef int (*ent_cmp)(const ent *a, const ent *b, void *ctx);

/* bpftrace sorts with std::sort over the kernel's iteration order, which for the map sizes people
 * read is an insertion sort and so stable; a stable merge sort gives the same order every time. */
static void stable_sort(ent *v, size_t n, ent_cmp cmp, void *ctx)
{
	if (n < 2)
		return;
	ent *tmp = xmalloc(n * sizeof(*tmp));
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = DT_MIN(lo + w, n), hi = DT_MIN(lo + 2 * w, n);
			size_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				tmp[k++] = cmp(&v[j], &v[i], ctx) < 0 ? v[j++] : v[i++];
			while (i < mid)
				tmp[k++] = v[i++];
			while (j < hi)
				tmp[k++] = v[j++];
		}
		memcpy(v, tmp, n * sizeof(*tmp));
	}
	free(tmp);
}

struct sort_ctx {
	const dt_map_sym *m;
	uint32_t key_bytes;
	bool is_signed;
};

static int cmp_value(const ent *a, const ent *b, void *p)
{
	const struct sort_ctx *c = p;
	if (c->is_signed)
		return a->v < b->v ? -1 : a->v > b->v;
	return (uint64_t)a->v < (uint64_t)b->v ? -1 : (uint64_t)a->v > (uint64_t)b->v;
}

static int cmp_key_bytes(const ent *a, const ent *b, void *p)
{
	const struct sort_ctx *c = p;
	return memcmp(a->key, b->key, c->key_bytes);
}

/* bpftrace's sort_by_key: integers compared as unsigned, strings with strncmp, first element
 * first; other element types do not take part. */
static int cmp_key_elems(const ent *a, const ent *b, void *p)
{
	const struct sort_ctx *c = p;
	const dt_type *k = c->m->key;
	/* A key of several parts; a record is one part. */
	bool parts = k->kind == DT_T_TUPLE && !k->tuple.names;
	uint32_t n = parts ? k->tuple.n : 1;
	for (uint32_t i = 0; i < n; i++) {
		const dt_type *e = parts ? k->tuple.elems[i] : k;
		uint32_t off = parts ? k->tuple.offsets[i] : 0;
		int r = 0;
		if (e->kind == DT_T_INT || e->kind == DT_T_PTR) {
			uint64_t x = (uint64_t)dt_fmt_read_int(a->key + off, e->size, false);
			uint64_t y = (uint64_t)dt_fmt_read_int(b->key + off, e->size, false);
			r = x < y ? -1 : x > y;
		} else if (e->kind == DT_T_STR) {
			r = strncmp((const char *)a->key + off, (const char *)b->key + off, e->size);
		}
		if (r)
			return r;
	}
	return 0;
}

/* With json_frames a map keyed by a stack is a list of {"key": ..., "value": ...} entries: its
 * key is a JSON array of frame objects, which a JSON object key (a string) cannot hold. */
static bool json_entries(const dt_out *o, const dt_map_sym *m)
{
	return o->format == DT_OUT_JSON && o->json_frames && dt_prof_key_has_stack(m->key);
}

static void put_key(dt_out *o, dt_sbuf *b, const dt_map_sym *m, const uint8_t *key, bool json)
{
	const dt_type *k = m->key;
	if (!k)
		return;
	if (json && json_entries(o, m)) {
		dt_sb_puts(b, "{\"key\": ");
		dt_fmt_value(o, b, k, key, DT_FMT_JSON);
		dt_sb_puts(b, ", \"value\": ");
		return;
	}
	bool parts = k->kind == DT_T_TUPLE && !k->tuple.names; /* a record is one part */
	uint32_t n = parts ? k->tuple.n : 1;
	dt_sbuf tmp = {0};
	for (uint32_t i = 0; i < n; i++) {
		const dt_type *e = parts ? k->tuple.elems[i] : k;
		uint32_t off = parts ? k->tuple.offsets[i] : 0;
		if (i)
			dt_sb_puts(&tmp, json ? "," : ", ");
		dt_fmt_value(o, &tmp, e, key + off, DT_FMT_KEY);
	}
	if (json) {
		dt_sb_putc(b, '"');
		dt_json_escape(b, dt_sb_str(&tmp), tmp.n);
		dt_sb_puts(b, "\": ");
	} else {
		dt_sb_printf(b, "[%s]", dt_sb_str(&tmp));
	}
	free(tmp.s);
}

/* The header of a JSON map record; keyed maps wrap their entries in an object (a list with
 * json_entries). */
static void json_open(dt_out *o, dt_sbuf *b, const char *type, const dt_map_sym *m)
{
	dt_sb_printf(b, "{\"type\": \"%s\", \"data\": {\"", type);
	dt_json_escape(b, m->name, strlen(m->name));
	dt_sb_puts(b, "\": ");
	if (m->key)
		dt_sb_putc(b, json_entries(o, m) ? '[' : '{');
}

/* After one entry's value: the entry object's end with json_entries. */
static void json_entry_end(dt_out *o, dt_sbuf *b, const dt_map_sym *m)
{
	if (json_entries(o, m))
		dt_sb_putc(b, '}');
}

static void json_close(dt_out *o, dt_sbuf *b, const dt_map_sym *m)
{
	if (m->key)
		dt_sb_putc(b, json_entries(o, m) ? ']' : '}');
	dt_sb_puts(b, "}}\n");
}

static bool sorted_by_value(const dt_type *t)
{
	return t->kind == DT_T_COUNT || t->kind == DT_T_SUM || t->kind == DT_T_INT ||
	       t->kind == DT_T_PTR || t->kind == DT_T_MIN || t->kind == DT_T_MAX;
}

static void put_plain_value(dt_out *o, dt_sbuf *b, const dt_type *t, const ent *e, uint64_t div,
			    bool json)
{
	switch (t->kind) {
	case DT_T_COUNT:
		dt_sb_printf(b, "%" PRIu64, (uint64_t)e->v / div);
		break;
	case DT_T_INT:
	case DT_T_PTR:
		if (div == 1) {
			dt_fmt_int(o, b, t, e->v, json);
			break;
		}
		/* fall through */
	case DT_T_SUM:
		if (t->is_signed)
			dt_sb_printf(b, "%" PRId64, e->v / (int64_t)div);
		else
			dt_sb_printf(b, "%" PRIu64, (uint64_t)e->v / div);
		break;
	case DT_T_MIN:
	case DT_T_MAX:
		dt_sb_printf(b, "%" PRId64, e->v / (int64_t)div);
		break;
	default:
		dt_fmt_value(o, b, t, e->val, json ? DT_FMT_JSON : DT_FMT_VALUE);
		break;
	}
}

/* ---------------------------------------------------------------- merged stacks */

struct keytext {
	char *text;
	size_t i;
};

static int cmp_keytext(const void *a, const void *b)
{
	const struct keytext *x = a, *y = b;
	int r = strcmp(x->text, y->text);
	return r ? r : (x->i > y->i) - (x->i < y->i);
}

/* Whether entries of this value type can be combined into one: counts and sums add, min/max
 * keep the extreme, hist/lhist add bucket by bucket, avg/stats add counts and totals. An int or a
 * stack value (`@[ustack] = x`) has no sum. */
static bool mergeable(const dt_type *t)
{
	return t->kind == DT_T_COUNT || t->kind == DT_T_SUM || t->kind == DT_T_MIN ||
	       t->kind == DT_T_MAX || t->kind == DT_T_HIST || t->kind == DT_T_LHIST ||
	       t->kind == DT_T_AVG || t->kind == DT_T_STATS;
}

static void combine(ent *into, const ent *from, const dt_type *t, uint32_t nb)
{
	switch (t->kind) {
	case DT_T_MIN:
		into->v = DT_MIN(into->v, from->v);
		break;
	case DT_T_MAX:
		into->v = DT_MAX(into->v, from->v);
		break;
	case DT_T_AVG:
	case DT_T_STATS:
		into->count += from->count;
		into->total += from->total;
		into->v = into->count ? into->total / into->count : 0;
		break;
	default: /* count, sum, hist, lhist (v is the total) */
		into->v += from->v;
		for (uint32_t b = 0; into->buckets && b < nb; b++)
			into->buckets[b] += from->buckets[b];
		break;
	}
}

/* Entries of a stack-keyed map whose keys print the same — the stacks of several processes,
 * or two stack ids that symbolize alike — are one line to a reader, so they become one entry
 * (the first, in iteration order) with the values combined; stacks_apart keeps bpftrace's one
 * entry per stack. Returns the new count; merged-away entries' buckets are freed. */
static size_t merge_same_keys(dt_out *o, const dt_map_sym *m, ent *v, size_t n, uint32_t nb)
{
	if (o->stacks_apart || n < 2 || !dt_prof_key_has_stack(m->key) || !mergeable(m->value))
		return n;
	struct keytext *kt = xcalloc(n, sizeof(*kt));
	bool *gone = xcalloc(n, sizeof(*gone));
	for (size_t i = 0; i < n; i++) {
		dt_sbuf b = {0};
		put_key(o, &b, m, v[i].key, false);
		kt[i] = (struct keytext){ .text = b.s ? b.s : xstrdup(""), .i = i };
	}
	qsort(kt, n, sizeof(*kt), cmp_keytext);
	for (size_t i = 1, first = 0; i < n; i++) {
		if (strcmp(kt[i].text, kt[first].text)) {
			first = i;
			continue;
		}
		combine(&v[kt[first].i], &v[kt[i].i], m->value, nb);
		gone[kt[i].i] = true;
	}
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		if (gone[i])
			free(v[i].buckets);
		else
			v[w++] = v[i];
	}
	for (size_t i = 0; i < n; i++)
		free(kt[i].text);
	free(kt);
	free(gone);
	return w;
}

struct folded {
	char *text;
	int64_t v;
};

static int cmp_folded(const void *a, const void *b)
{
	return strcmp(((const struct folded *)a)->text, ((const struct folded *)b)->text);
}

static int cmp_folded_value(const void *a, const void *b)
{
	const struct folded *x = a, *y = b;
	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return strcmp(x->text, y->text);
}

/* -f folded: one "frames value" line per distinct folded stack. Entries that differ only in
 * addresses inside one function fold into one line, so lines are merged (values added) and
 * printed by value, biggest last as in text. Stacks that could not be read (a kernel stack
 * of a sample taken in user mode) are left out: a folded line must have frames. */
static void print_folded(dt_out *o, const dt_map_sym *m, ent *v, size_t n, uint64_t top,
			 uint64_t div)
{
	struct folded *f = xcalloc(n ? n : 1, sizeof(*f));
	size_t k = 0;
	dt_sbuf *b = &o->line;

	for (size_t i = 0; i < n; i++) {
		dt_sbuf line = {0};
		dt_prof_folded_key(o, &line, m->key, v[i].key);
		if (!line.s || !strcmp(line.s, "[empty]")) {
			free(line.s);
			continue;
		}
		f[k].text = line.s;
		f[k++].v = v[i].v;
	}
	qsort(f, k, sizeof(*f), cmp_folded);
	size_t w = 0;
	for (size_t i = 0; i < k; i++) {
		if (w && !o->stacks_apart && !strcmp(f[w - 1].text, f[i].text)) {
			f[w - 1].v += f[i].v;
			free(f[i].text);
		} else {
			f[w++] = f[i];
		}
	}
	qsort(f, w, sizeof(*f), cmp_folded_value);
	for (size_t i = top && top < w ? w - top : 0; i < w; i++) {
		ent e = { .v = f[i].v };
		dt_sb_puts(b, f[i].text);
		dt_sb_putc(b, ' ');
		put_plain_value(o, b, m->value, &e, div, false);
		dt_sb_putc(b, '\n');
	}
	for (size_t i = 0; i < w; i++)
		free(f[i].text);
	free(f);
	emit_to(o, o->f);
}

static void print_plain(dt_out *o, const dt_map_sym *m, ent *v, size_t n, uint64_t top,
			uint64_t div)
{
	const dt_type *t = m->value;
	bool json = o->format == DT_OUT_JSON;
	struct sort_ctx sc = { .m = m, .is_signed = t->is_signed || t->kind == DT_T_MIN ||
						    t->kind == DT_T_MAX };
	dt_sbuf *b = &o->line;

	if (o->format != DT_OUT_FOLDED || !dt_prof_key_has_stack(m->key))
		n = merge_same_keys(o, m, v, n, 0);
	if (sorted_by_value(t))
		stable_sort(v, n, cmp_value, &sc);
	else if (m->key)
		stable_sort(v, n, cmp_key_elems, &sc);
	if (o->format == DT_OUT_FOLDED && dt_prof_key_has_stack(m->key) && sorted_by_value(t)) {
		print_folded(o, m, v, n, top, div);
		return;
	}

	if (json) {
		if (!n)
			return;
		json_open(o, b, "map", m);
	}
	size_t skip = top && n > top ? n - top : 0;
	for (size_t i = skip; i < n; i++) {
		if (json) {
			if (i > skip)
				dt_sb_puts(b, ", ");
			put_key(o, b, m, v[i].key, true);
			put_plain_value(o, b, t, &v[i], div, true);
			json_entry_end(o, b, m);
			continue;
		}
		/* Stack values end with their own newline, so bpftrace puts nothing between them. */
		if (i > skip && t->kind != DT_T_STACK)
			dt_sb_putc(b, '\n');
		dt_sb_puts(b, m->name);
		put_key(o, b, m, v[i].key, false);
		dt_sb_puts(b, ": ");
		put_plain_value(o, b, t, &v[i], div, false);
	}
	if (json)
		json_close(o, b, m);
	else
		dt_sb_putc(b, '\n');
	emit(o);
}

/* hist/lhist: the map holds one entry per (key, bucket); regroup per key. */
static int print_hist(dt_out *o, const dt_map_sym *m, const dt_map_layout *l, ent *v, size_t n,
		      size_t ncpu, size_t stride, uint64_t top, uint64_t div)
{
	const dt_type *t = m->value;
	bool json = o->format == DT_OUT_JSON;
	uint32_t nb = dt_out_nbuckets(t);
	struct sort_ctx sc = { .m = m, .key_bytes = l->user_key_size, .is_signed = true };
	dt_sbuf *b = &o->line;
	size_t ng = 0;

	if (l->key_size < 8 || l->user_key_size > l->key_size - 8)
		return -EINVAL;
	stable_sort(v, n, cmp_key_bytes, &sc);
	/* Fold entries with the same key prefix into the first of them. */
	for (size_t i = 0; i < n; i++) {
		uint64_t bucket, count = 0;
		memcpy(&bucket, v[i].key + l->key_size - 8, 8);
		for (size_t c = 0; c < ncpu; c++) {
			uint64_t x;
			memcpy(&x, v[i].val + c * stride, 8);
			count += x;
		}
		if (!ng || memcmp(v[ng - 1].key, v[i].key, l->user_key_size) != 0) {
			v[ng] = v[i];
			v[ng].buckets = xcalloc(nb, sizeof(uint64_t));
			v[ng].v = 0;
			ng++;
		}
		if (bucket < nb) {
			v[ng - 1].buckets[bucket] += count;
			v[ng - 1].v += (int64_t)count;
		}
	}
	ng = merge_same_keys(o, m, v, ng, nb);
	stable_sort(v, ng, cmp_value, &sc);

	if (json) {
		if (!ng)
			goto out;
		json_open(o, b, "hist", m);
	}
	size_t skip = top && ng > top ? ng - top : 0;
	for (size_t i = skip; i < ng; i++) {
		if (json) {
			if (i > skip)
				dt_sb_puts(b, ", ");
			put_key(o, b, m, v[i].key, true);
		} else {
			if (i > skip)
				dt_sb_putc(b, '\n');
			dt_sb_puts(b, m->name);
			put_key(o, b, m, v[i].key, false);
			dt_sb_puts(b, m->current ? ":\n" : ": \n"); /* 0.17 left a blank there */
		}
		if (t->kind == DT_T_HIST)
			dt_fmt_hist(b, v[i].buckets, nb, t->hist.bits, div, json);
		else
			dt_fmt_lhist(b, v[i].buckets, nb, t->lhist.min, t->lhist.max, t->lhist.step,
				     json);
		if (json)
			json_entry_end(o, b, m);
	}
	if (json)
		json_close(o, b, m);
	else
		dt_sb_putc(b, '\n');
	emit(o);
out:
	for (size_t i = 0; i < ng; i++)
		free(v[i].buckets);
	return 0;
}

/* One interval row's time: "hh:mm:ss.mmm" in text, "YYYY-mm-dd hh:mm:ss.nnnnnnnnn" in JSON. */
static void tseries_time(dt_sbuf *b, uint64_t ns, bool json)
{
	time_t s = (time_t)(ns / 1000000000);
	struct tm tm;
	char buf[32];

	localtime_r(&s, &tm);
	strftime(buf, sizeof(buf), json ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &tm);
	if (json)
		dt_sb_printf(b, "%s.%09" PRIu64, buf, ns % 1000000000);
	else
		dt_sb_printf(b, "%s.%03" PRIu64, buf, ns % 1000000000 / 1000000);
}

/* The axis line: min at the left edge of the 53-column graph, max at its right edge. */
static void tseries_axis(dt_sbuf *b, int64_t lo, int64_t hi)
{
	char l[24], h[24];
	snprintf(l, sizeof(l), "%" PRId64, lo);
	snprintf(h, sizeof(h), "%" PRId64, hi);
	dt_sb_printf(b, "%13s%-*s%s\n", "", (int)(53 - strlen(h)), l, h);
}

/* One key's intervals, epochs first..last (value NULL: nothing recorded there). */
static void tseries_graph(dt_sbuf *b, const dt_type *t, uint64_t first, uint64_t last,
			  const int64_t *vals, const bool *have)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (uint64_t e = first; e <= last; e++)
		if (have[e - first]) {
			lo = vals[e - first] < lo ? vals[e - first] : lo;
			hi = vals[e - first] > hi ? vals[e - first] : hi;
		}
	if (lo == hi) { /* bpftrace widens by one each way, an unsigned value not below 0 */
		if (lo > 0 || !t->tseries.is_unsigned)
			lo--;
		hi++;
	}
	tseries_axis(b, lo, hi);
	dt_sb_puts(b, "hh:mm:ss.ms  |___________________________________________________|\n");
	for (uint64_t e = first; e <= last; e++) {
		char g[54];
		memset(g, ' ', 53);
		g[0] = g[52] = '|';
		g[53] = 0;
		if (lo < 0 && hi > 0)
			g[(int64_t)((__int128)-lo * 52 / ((__int128)hi - lo))] = '.';
		if (have[e - first])
			g[(int64_t)(((__int128)vals[e - first] - lo) * 52 / ((__int128)hi - lo))] = '*';
		tseries_time(b, e * t->tseries.interval, false);
		dt_sb_printf(b, " %s ", g);
		if (have[e - first])
			dt_sb_printf(b, "%" PRId64 "\n", vals[e - first]);
		else
			dt_sb_puts(b, "-\n");
	}
	dt_sb_puts(b, "             v___________________________________________________v\n");
	tseries_axis(b, lo, hi);
}

/* tseries: the map holds one entry per (key, slot); each key shows the intervals from its first
 * recorded one within the last n up to the newest interval of the whole map. */
static int print_tseries(dt_out *o, const dt_map_sym *m, const dt_map_layout *l, ent *v, size_t n)
{
	const dt_type *t = m->value;
	bool json = o->format == DT_OUT_JSON;
	uint64_t ni = t->tseries.n, last = 0;
	struct sort_ctx sc = { .m = m, .key_bytes = l->user_key_size, .is_signed = true };
	dt_sbuf *b = &o->line;
	size_t ng = 0, shown = 0;
	bool any = false;

	if (l->key_size < 8 || l->user_key_size > l->key_size - 8)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		struct dt_agg_tseries s;
		memcpy(&s, v[i].val, sizeof(s));
		if (s.count && (!any || s.epoch > last))
			last = s.epoch;
		any |= s.count != 0;
	}
	uint64_t from = last >= ni - 1 ? last - (ni - 1) : 0;
	stable_sort(v, n, cmp_key_bytes, &sc);
	int64_t *vals = xcalloc(ni, sizeof(int64_t));
	bool *have = xcalloc(ni, sizeof(bool));

	if (json)
		json_open(o, b, "tseries", m);
	for (size_t i = 0; i < n; i = ng) {
		uint64_t first = last + 1;
		memset(have, 0, ni * sizeof(bool));
		for (ng = i; ng < n && !memcmp(v[ng].key, v[i].key, l->user_key_size); ng++) {
			struct dt_agg_tseries s;
			memcpy(&s, v[ng].val, sizeof(s));
			if (!s.count || s.epoch < from || s.epoch > last)
				continue;
			have[s.epoch - from] = true;
			/* bpftrace takes epoch 0 for a slot never written, and shows the interval
			 * that starts at time 0 as 0 whatever was recorded there; only its test
			 * clock (BPFTRACE_DUMMY_TS_MAP) gets there, and its tests expect that. */
			vals[s.epoch - from] = s.epoch == 0 ? 0 :
					       t->tseries.agg == DT_TS_AVG ?
						       s.value / (int64_t)s.count : s.value;
			first = s.epoch < first ? s.epoch : first;
		}
		if (first > last)
			continue;
		if (json) {
			if (shown)
				dt_sb_puts(b, ", ");
			put_key(o, b, m, v[i].key, true);
			dt_sb_putc(b, '[');
			bool sep = false;
			for (uint64_t e = first; e <= last; e++) {
				if (!have[e - from])
					continue;
				dt_sb_puts(b, sep ? ", {\"interval_start\": \"" :
						    "{\"interval_start\": \"");
				tseries_time(b, e * t->tseries.interval, true);
				dt_sb_printf(b, "\", \"value\": %" PRId64 "}", vals[e - from]);
				sep = true;
			}
			dt_sb_putc(b, ']');
			json_entry_end(o, b, m);
		} else {
			if (shown)
				dt_sb_putc(b, '\n');
			dt_sb_puts(b, m->name);
			put_key(o, b, m, v[i].key, false);
			dt_sb_puts(b, ":\n");
			tseries_graph(b, t, first, last, vals + (first - from),
				      have + (first - from));
		}
		shown++;
	}
	free(vals);
	free(have);
	if (json) {
		if (!shown && !m->key)
			dt_sb_puts(b, "[]");
		json_close(o, b, m);
	} else {
		if (!shown)
			return 0;
		dt_sb_putc(b, '\n');
	}
	emit(o);
	return 0;
}

static void print_stats(dt_out *o, const dt_map_sym *m, const dt_map_layout *l, ent *v, size_t n,
			size_t ncpu, size_t stride, uint64_t top, uint64_t div)
{
	const dt_type *t = m->value;
	bool json = o->format == DT_OUT_JSON;
	struct sort_ctx sc = { .m = m, .key_bytes = l->key_size, .is_signed = true };
	dt_sbuf *b = &o->line;

	for (size_t i = 0; i < n; i++) {
		v[i].count = v[i].total = 0;
		for (size_t c = 0; c < ncpu; c++) {
			const uint8_t *p = v[i].val + c * stride;
			if (t->kind == DT_T_AVG) {
				struct dt_agg_avg a;
				memcpy(&a, p, sizeof(a));
				v[i].count += (int64_t)a.count;
				v[i].total += a.total;
			} else {
				struct dt_agg_stats s;
				memcpy(&s, p, sizeof(s));
				v[i].count += (int64_t)s.count;
				v[i].total += s.total;
			}
		}
		v[i].v = v[i].count ? v[i].total / v[i].count : 0;
	}
	n = merge_same_keys(o, m, v, n, 0);
	stable_sort(v, n, cmp_key_bytes, &sc);
	stable_sort(v, n, cmp_value, &sc);

	if (json) {
		if (!n)
			return;
		json_open(o, b, "stats", m);
	}
	/* bpftrace applies `top` to avg() maps only. */
	size_t skip = t->kind == DT_T_AVG && top && n > top ? n - top : 0;
	for (size_t i = skip; i < n; i++) {
		if (i > skip)
			dt_sb_puts(b, json ? ", " : "\n");
		if (json) {
			put_key(o, b, m, v[i].key, true);
		} else {
			dt_sb_puts(b, m->name);
			put_key(o, b, m, v[i].key, false);
			dt_sb_puts(b, ": ");
		}
		if (t->kind == DT_T_AVG)
			dt_sb_printf(b, "%" PRId64, v[i].v / (int64_t)div);
		else if (json)
			dt_sb_printf(b, "{\"count\": %" PRId64 ", \"average\": %" PRId64
				     ", \"total\": %" PRId64 "}", v[i].count, v[i].v, v[i].total);
		else if (m->current) /* bpftrace's current record form */
			dt_sb_printf(b, "{ .count = %" PRId64 ", .average = %" PRId64
				     ", .total = %" PRId64 " }", v[i].count, v[i].v, v[i].total);
		else
			dt_sb_printf(b, "count %" PRId64 ", average %" PRId64 ", total %" PRId64,
				     v[i].count, v[i].v, v[i].total);
		if (json)
			json_entry_end(o, b, m);
	}
	if (json)
		json_close(o, b, m);
	else
		dt_sb_puts(b, "\n\n");
	emit(o);
}

int dt_out_print_entries(dt_out *o, const dt_map_sym *m, const dt_map_layout *l, const void *keys,
			 const void *values, size_t n, uint64_t top, uint64_t div)
{
	const dt_type *t = m->value;
	size_t ncpu = l->percpu ? (size_t)o->ncpus : 1;
	size_t stride = l->percpu ? DT_ALIGN(l->value_size, 8) : l->value_size;
	int err = 0;

	if (!t || !l->key_size)
		return -EINVAL;
	if (!div)
		div = 1;
	ent *v = xcalloc(n ? n : 1, sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		v[i].key = (const uint8_t *)keys + i * l->key_size;
		v[i].val = (const uint8_t *)values + i * stride * ncpu;
		v[i].v = dt_out_plain_value(t, v[i].val, ncpu, stride);
	}

	switch (t->kind) {
	case DT_T_HIST:
	case DT_T_LHIST:
		err = print_hist(o, m, l, v, n, ncpu, stride, top, div);
		break;
	case DT_T_TSERIES:
		err = print_tseries(o, m, l, v, n);
		break;
	case DT_T_AVG:
	case DT_T_STATS:
		print_stats(o, m, l, v, n, ncpu, stride, top, div);
		break;
	default:
		print_plain(o, m, v, n, top, div);
		break;
	}
	free(v);
	return err;
}

int dt_out_print_map(dt_out *o, const dt_map_sym *m, int map_fd, uint64_t top, uint64_t div,
		     bool call)
{
	dt_map_layout l;
	void *keys, *vals;
	size_t n;
	int ncpus, err;

	err = dt_out_read_map(o, m, map_fd, &l, &keys, &vals, &n, &ncpus);
	if (err)
		return err;
	if (!n && call && m->current && !m->key && !l.bucketed) {
		/* One entry of zeroes: the zero key, and the zero value on every CPU. */
		free(keys);
		free(vals);
		keys = xcalloc(1, l.key_size);
		vals = xcalloc(l.percpu ? (size_t)ncpus : 1, DT_ALIGN(l.value_size, 8));
		n = 1;
	}
	int saved_ncpus = o->ncpus;
	o->ncpus = ncpus;
	err = dt_out_print_entries(o, m, &l, keys, vals, n, top, div);
	o->ncpus = saved_ncpus;
	free(keys);
	free(vals);
	return err;
}
