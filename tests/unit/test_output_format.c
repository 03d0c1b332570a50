/* test_output_format.c — golden tests of the output side: every map shape, printf conversions,
 * JSON records and stack rendering, asserted byte for byte. Unless a comment says otherwise, each
 * expected string was copied from what bpftrace 0.17 printed on this machine for the program
 * quoted above the case (`bpftrace -e '…' | cat -A`, or `bpftrace -f json -e '…'`). Maps are fed
 * to dt_out_print_entries as the flat key/value arrays dt_out_print_map reads from the kernel, in
 * the iteration order bpftrace saw, so the sorting rules are exercised too. */
#include "output/output_internal.h"
#include "common/common.h"
#include "bpf-lib/dt_walker.h"
#include "t.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#define NCPUS 2

/* ---------------------------------------------------------------- fixtures */

static dt_type T_S64 = { .kind = DT_T_INT, .size = 8, .align = 8, .is_signed = true };
static dt_type T_S32 = { .kind = DT_T_INT, .size = 4, .align = 8, .is_signed = true };
static dt_type T_STR = { .kind = DT_T_STR, .size = 64, .align = 1 };
static dt_type T_STR16 = { .kind = DT_T_STR, .size = 16, .align = 1 };
static dt_type T_COUNT = { .kind = DT_T_COUNT, .size = 8, .align = 8 };
static dt_type T_SUM = { .kind = DT_T_SUM, .size = 8, .align = 8, .is_signed = true };
static dt_type T_MIN = { .kind = DT_T_MIN, .size = 16, .align = 8, .is_signed = true };
static dt_type T_AVG = { .kind = DT_T_AVG, .size = 16, .align = 8, .is_signed = true };
static dt_type T_STATS = { .kind = DT_T_STATS, .size = 32, .align = 8, .is_signed = true };
static dt_type T_HIST = { .kind = DT_T_HIST, .size = 8, .align = 8 };
static dt_type T_KSYM = { .kind = DT_T_KSYM, .size = 8, .align = 8 };
static dt_type T_KSTACK = { .kind = DT_T_STACK, .size = 16, .align = 8,
			    .stack = { DT_STACK_KERNEL, DT_STACKMODE_DEFAULT, 2 } };
static dt_type T_KSTACK_PERF = { .kind = DT_T_STACK, .size = 16, .align = 8,
				 .stack = { DT_STACK_KERNEL, DT_STACKMODE_PERF, 2 } };

static dt_type *key2_elems[] = { &T_S64, &T_STR };
static uint32_t key2_offs[] = { 0, 8 };
/* (int64, string[64]) */
static dt_type T_KEY_IS = { .kind = DT_T_TUPLE, .size = 72, .align = 8,
			    .tuple = { 2, key2_elems, key2_offs } };
static dt_type *key3_elems[] = { &T_KSTACK, &T_S64 };
static uint32_t key3_offs[] = { 0, 16 };
/* (kstack, int64) */
static dt_type T_KEY_STACK_INT = { .kind = DT_T_TUPLE, .size = 24, .align = 8,
				   .tuple = { 2, key3_elems, key3_offs } };

/* Two kernel addresses that the symbolizer can name (filled from /proc/kallsyms). */
static uint64_t k_vfs_read, k_ksys_read;

/* The fake stack source: id 1 is [vfs_read+5, ksys_read+10], anything else cannot be read. */
static int fake_frames(void *ctx, const dt_type *t, const struct dt_stack_ref *ref,
		       uint64_t *frames, uint32_t max)
{
	if (ref->id != 1 || max < 2)
		return -ENOENT;
	frames[0] = k_vfs_read + 5;
	frames[1] = k_ksys_read + 10;
	return 2;
}

struct cap {
	char *buf;
	size_t len;
	FILE *f;
	dt_out *o;
	dt_symbolizer *sym;
};

/* --json-frames and --no-merge-stacks for the captures opened while they are set. */
static bool cap_json_frames, cap_stacks_apart;

static void cap_open(struct cap *c, dt_out_format fmt)
{
	memset(c, 0, sizeof(*c));
	c->f = open_memstream(&c->buf, &c->len);
	c->sym = dt_sym_new();
	dt_out_opts o = { .file = c->f, .format = fmt, .sym = c->sym, .stack_frames = fake_frames,
			  .ncpus = NCPUS, .json_frames = cap_json_frames,
			  .stacks_apart = cap_stacks_apart };
	c->o = dt_out_new(&o);
}

/* Closes the capture and returns what was printed (owned by the caller). */
static char *cap_close(struct cap *c)
{
	dt_out_free(c->o);
	dt_sym_free(c->sym);
	fclose(c->f);
	return c->buf;
}

/* A map under construction: keys and (per-CPU) values appended in iteration order. */
struct fmap {
	dt_map_sym m;
	dt_map_layout l;
	uint8_t keys[64 * 128];
	uint8_t vals[64 * 256];
	size_t n;
};

static void fmap_init(struct fmap *f, const char *name, const dt_type *key, const dt_type *val)
{
	memset(f, 0, sizeof(*f));
	f->m.name = name;
	f->m.key = key;
	f->m.value = val;
	dt_map_layout_of(&f->m, &f->l);
}

/* Appends one entry; `val` is one CPU's value (the other CPUs get zeroes unless `val2`). */
static void fmap_add(struct fmap *f, const void *key, const void *val, const void *val2)
{
	size_t vs = f->l.percpu ? DT_ALIGN(f->l.value_size, 8) * NCPUS : f->l.value_size;
	memcpy(f->keys + f->n * f->l.key_size, key, f->l.key_size);
	memset(f->vals + f->n * vs, 0, vs);
	memcpy(f->vals + f->n * vs, val, f->l.value_size);
	if (val2 && f->l.percpu)
		memcpy(f->vals + f->n * vs + DT_ALIGN(f->l.value_size, 8), val2, f->l.value_size);
	f->n++;
}

static char *fmap_print(struct fmap *f, dt_out_format fmt, uint64_t top, uint64_t div)
{
	struct cap c;
	cap_open(&c, fmt);
	CHECK_EQ_INT(dt_out_print_entries(c.o, &f->m, &f->l, f->keys, f->vals, f->n, top, div), 0);
	return cap_close(&c);
}

static void key_is(uint8_t *k, int64_t i, const char *s)
{
	memset(k, 0, 72);
	memcpy(k, &i, 8);
	strncpy((char *)k + 8, s, 63);
}

/* A hist key: user key bytes then the u64 bucket index. */
static void add_bucket(struct fmap *f, const void *ukey, uint64_t bucket, uint64_t count)
{
	uint8_t k[128] = {0};
	/* The user key is padded to user_key_size with zeroes, as codegen stores it. */
	memcpy(k, ukey, f->m.key ? f->m.key->size : 0);
	memcpy(k + f->l.user_key_size, &bucket, 8);
	fmap_add(f, k, &count, NULL);
}

static struct fmap fm; /* big: keep it off the stack */

/* ---------------------------------------------------------------- plain maps */

/* bpftrace -e 'BEGIN { @a = count(); @b[1,"x"] = sum(5); … exit(); }' */
static void scalar_count_and_tuple_key(void)
{
	uint64_t zero = 0, one = 1;
	int64_t five = 5;
	uint8_t k[72];
	char *s;

	fmap_init(&fm, "@a", NULL, &T_COUNT);
	fmap_add(&fm, &zero, &one, NULL);
	s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "@a: 1\n");
	free(s);

	fmap_init(&fm, "@b", &T_KEY_IS, &T_SUM);
	key_is(k, 1, "x");
	fmap_add(&fm, k, &five, NULL);
	s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "@b[1, x]: 5\n");
	free(s);
}

/* bpftrace -e 'BEGIN { @b[3]=sum(-5); @b[1]=sum(5); @b[2]=sum(5); @b[0]=sum(5); exit() }'
 * printed @b[3]: -5 / @b[1]: 5 / @b[2]: 5 / @b[0]: 5 — sorted by value, signed, ties in the
 * kernel's iteration order (which we feed as 3, 1, 2, 0; per-CPU parts are summed). */
static void sum_sorted_signed_stable(void)
{
	int64_t keys[] = { 3, 1, 2, 0 }, vals[] = { -5, 5, 2, 5 }, v2[] = { 0, 0, 3, 0 };
	fmap_init(&fm, "@b", &T_S64, &T_SUM);
	for (int i = 0; i < 4; i++)
		fmap_add(&fm, &keys[i], &vals[i], &v2[i]);
	char *s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "@b[3]: -5\n@b[1]: 5\n@b[2]: 5\n@b[0]: 5\n");
	free(s);
}

/* bpftrace -e 'BEGIN{@a[1]=1;@a[2]=2;@a[3]=3; print(@a,2); print(@a, 0, 10); exit()}' */
static void top_and_div(void)
{
	int64_t keys[] = { 2, 3, 1 };
	fmap_init(&fm, "@a", &T_S64, &T_S64);
	for (int i = 0; i < 3; i++)
		fmap_add(&fm, &keys[i], &keys[i], NULL);
	char *s = fmap_print(&fm, DT_OUT_TEXT, 2, 0);
	CHECK_EQ_STR(s, "@a[2]: 2\n@a[3]: 3\n");
	free(s);
	s = fmap_print(&fm, DT_OUT_TEXT, 0, 10);
	CHECK_EQ_STR(s, "@a[1]: 0\n@a[2]: 0\n@a[3]: 0\n");
	free(s);
}

/* bpftrace -e 'BEGIN { @g[comm] = min(-3); @s = "str"; exit(); }' — min over the CPUs that
 * set a value; string values sorted by key. */
static void min_and_string_values(void)
{
	char comm[16] = "bpftrace";
	struct dt_agg_minmax a = { -3, 1 }, b = { 7, 1 };
	fmap_init(&fm, "@g", &T_STR16, &T_MIN);
	fmap_add(&fm, comm, &a, &b);
	char *s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "@g[bpftrace]: -3\n");
	free(s);

	/* bpftrace -e 'BEGIN { @str[2]="b"; @str[1]="a"; exit(); }' */
	char v1[64] = "a", v2[64] = "b";
	int64_t k1 = 1, k2 = 2;
	fmap_init(&fm, "@str", &T_S64, &T_STR);
	fmap_add(&fm, &k2, v2, NULL);
	fmap_add(&fm, &k1, v1, NULL);
	s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "@str[1]: a\n@str[2]: b\n");
	free(s);
}

/* bpftrace -e 'BEGIN { @x["b", -1] = 1; … }' sorts non-aggregate maps by key: ints unsigned
 * (so -1 sorts last), strings with strncmp, first element first. (Expected order derived from
 * bpftrace's sort_by_key, since int-valued maps sort by value.) */
static void sort_by_key_rules(void)
{
	uint8_t k[72];
	char v[64] = "v";
	struct { int64_t i; const char *s; } in[] = { { -1, "b" }, { 2, "a" }, { 1, "b" },
						      { 5, "a" }, { 5, "" } };
	fmap_init(&fm, "@x", &T_KEY_IS, &T_STR);
	for (int i = 0; i < 5; i++) {
		key_is(k, in[i].i, in[i].s);
		fmap_add(&fm, k, v, NULL);
	}
	char *s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "@x[1, b]: v\n@x[2, a]: v\n@x[5, ]: v\n@x[5, a]: v\n@x[-1, b]: v\n");
	free(s);
}

/* bpftrace -e 'BEGIN { @a[1]=1; delete(@a[1]); @c = count(); zero(@c); exit() }' printed an
 * empty line for the empty map and "@c: 0"; empty avg/stats maps print two newlines. */
static void empty_maps(void)
{
	fmap_init(&fm, "@a", &T_S64, &T_S64);
	char *s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "\n");
	free(s);
	s = fmap_print(&fm, DT_OUT_JSON, 0, 0);
	CHECK_EQ_STR(s, "");
	free(s);
	fmap_init(&fm, "@b", NULL, &T_STATS);
	s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "\n\n");
	free(s);
	fmap_init(&fm, "@h", NULL, &T_HIST);
	s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "\n");
	free(s);
}

/* ---------------------------------------------------------------- hist, lhist, avg, stats */

#define BAR "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@"
#define NOBAR "                                                    "

/* bpftrace -e 'BEGIN { @c = hist(1000); exit(); }' */
static void hist_scalar(void)
{
	uint64_t zero = 0;
	fmap_init(&fm, "@c", NULL, &T_HIST);
	add_bucket(&fm, &zero, dt_hist_bucket(1000, 0), 1);
	char *s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "@c: \n[512, 1K)              1 |" BAR "|\n\n");
	free(s);
	s = fmap_print(&fm, DT_OUT_JSON, 0, 0);
	CHECK_EQ_STR(s, "{\"type\": \"hist\", \"data\": {\"@c\": [{\"min\": 512, \"max\": 1023, "
			"\"count\": 1}]}}\n");
	free(s);
}

/* bpftrace -e 'BEGIN{@x[1]=hist(3); @x[2]=hist(100); @x[2]=hist(-1); @x[2]=hist(0); exit()}' */
static void hist_keyed(void)
{
	int64_t k1 = 1, k2 = 2;
	fmap_init(&fm, "@x", &T_S64, &T_HIST);
	add_bucket(&fm, &k2, dt_hist_bucket(100, 0), 1);
	add_bucket(&fm, &k1, dt_hist_bucket(3, 0), 1);
	add_bucket(&fm, &k2, dt_hist_bucket(-1, 0), 1);
	add_bucket(&fm, &k2, dt_hist_bucket(0, 0), 1);
	char *s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "@x[1]: \n"
			"[2, 4)                 1 |" BAR "|\n"
			"\n"
			"@x[2]: \n"
			"(..., 0)               1 |" BAR "|\n"
			"[0]                    1 |" BAR "|\n"
			"[1]                    0 |" NOBAR "|\n"
			"[2, 4)                 0 |" NOBAR "|\n"
			"[4, 8)                 0 |" NOBAR "|\n"
			"[8, 16)                0 |" NOBAR "|\n"
			"[16, 32)               0 |" NOBAR "|\n"
			"[32, 64)               0 |" NOBAR "|\n"
			"[64, 128)              1 |" BAR "|\n"
			"\n");
	free(s);
}

/* bpftrace -e 'BEGIN{@y[(int32)-3]=hist(1); @y[(int32)4]=hist(1); @y[(int32)1]=hist(1);
 * @y[(int32)1]=hist(1); exit()}': per key sorted by total, ties by key bytes (4 before -3). */
static void hist_key_order(void)
{
	int32_t keys[] = { -3, 4, 1 };
	uint64_t counts[] = { 1, 1, 2 };
	fmap_init(&fm, "@y", &T_S32, &T_HIST);
	for (int i = 0; i < 3; i++)
		add_bucket(&fm, &keys[i], dt_hist_bucket(1, 0), counts[i]);
	char *s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "@y[4]: \n[1]                    1 |" BAR "|\n\n"
			"@y[-3]: \n[1]                    1 |" BAR "|\n\n"
			"@y[1]: \n[1]                    2 |" BAR "|\n\n");
	free(s);
}

/* Bars are scaled in float as bpftrace does: 1 of 3 is 17 columns, 2 of 3 is 34 (expected text
 * computed from bpftrace's formula int(v / (float)max * 52)). Also the K/M labels. */
static void hist_bars_and_labels(void)
{
	uint64_t zero = 0;
	fmap_init(&fm, "@h", NULL, &T_HIST);
	add_bucket(&fm, &zero, dt_hist_bucket(1024, 0), 1);
	add_bucket(&fm, &zero, dt_hist_bucket(2048, 0), 2);
	add_bucket(&fm, &zero, dt_hist_bucket(1 << 20, 0), 3);
	char *s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK(s && strstr(s, "[1K, 2K)               1 |@@@@@@@@@@@@@@@@@                   "
			     "                |\n[2K, 4K)               2 |"));
	CHECK(s && strstr(s, "[512K, 1M)             0 |"));
	CHECK(s && strstr(s, "[1M, 2M)               3 |" BAR "|\n\n"));
	free(s);
}

/* bpftrace -e 'BEGIN { @d = lhist(5,0,10,1); exit(); }' and, with -f json,
 * @d=lhist(5,0,10,1); @d=lhist(-5,0,10,1); @d=lhist(100,0,10,1) */
static void lhist_text_and_json(void)
{
	static dt_type T_LHIST = { .kind = DT_T_LHIST, .size = 8, .align = 8,
				   .lhist = { 0, 10, 1 } };
	uint64_t zero = 0;
	fmap_init(&fm, "@d", NULL, &T_LHIST);
	CHECK_EQ_INT(dt_out_nbuckets(&T_LHIST), 12);
	add_bucket(&fm, &zero, 6, 1);
	char *s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "@d: \n[5, 6)                 1 |" BAR "|\n\n");
	free(s);
	add_bucket(&fm, &zero, 0, 1);
	add_bucket(&fm, &zero, 11, 1);
	s = fmap_print(&fm, DT_OUT_JSON, 0, 0);
	CHECK_EQ_STR(s, "{\"type\": \"hist\", \"data\": {\"@d\": [{\"max\": -1, \"count\": 1}, "
			"{\"min\": 0, \"max\": 0, \"count\": 0}, {\"min\": 1, \"max\": 1, \"count\": 0}, "
			"{\"min\": 2, \"max\": 2, \"count\": 0}, {\"min\": 3, \"max\": 3, \"count\": 0}, "
			"{\"min\": 4, \"max\": 4, \"count\": 0}, {\"min\": 5, \"max\": 5, \"count\": 1}, "
			"{\"min\": 6, \"max\": 6, \"count\": 0}, {\"min\": 7, \"max\": 7, \"count\": 0}, "
			"{\"min\": 8, \"max\": 8, \"count\": 0}, {\"min\": 9, \"max\": 9, \"count\": 0}, "
			"{\"min\": 10, \"count\": 1}]}}\n");
	free(s);
	s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK(s && strncmp(s, "@d: \n(..., 0)               1 |", 31) == 0);
	CHECK(s && strstr(s, "\n[10, ...)              1 |"));
	free(s);
}

/* bpftrace -e 'BEGIN { @a = lhist(3000, 0, 8192, 1024); @a = lhist(2048, 0, 8192, 1024);
 * @a = lhist(9000, 0, 8192, 1024); exit(); }' — K labels, trimmed ends, the >= max bucket. */
static void lhist_k_labels(void)
{
	static dt_type T_LH = { .kind = DT_T_LHIST, .size = 8, .align = 8,
				.lhist = { 0, 8192, 1024 } };
	uint64_t zero = 0;
	fmap_init(&fm, "@a", NULL, &T_LH);
	CHECK_EQ_INT(dt_out_nbuckets(&T_LH), 10);
	add_bucket(&fm, &zero, 3, 2);
	add_bucket(&fm, &zero, 9, 1);
	char *s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "@a: \n"
			"[2K, 3K)               2 |" BAR "|\n"
			"[3K, 4K)               0 |" NOBAR "|\n"
			"[4K, 5K)               0 |" NOBAR "|\n"
			"[5K, 6K)               0 |" NOBAR "|\n"
			"[6K, 7K)               0 |" NOBAR "|\n"
			"[7K, 8K)               0 |" NOBAR "|\n"
			"[8K, ...)              1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
			"\n");
	free(s);

	/* Our departure, following lang's dt_lhist_nbuckets: lhist(v, 0, 10, 3) has a short last
	 * bucket [9, 10) where bpftrace 0.17 counted 9 as "[10, ...)". */
	static dt_type T_LH3 = { .kind = DT_T_LHIST, .size = 8, .align = 8, .lhist = { 0, 10, 3 } };
	fmap_init(&fm, "@b", NULL, &T_LH3);
	add_bucket(&fm, &zero, 4, 1);
	s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "@b: \n[9, 10)                1 |" BAR "|\n\n");
	free(s);
}

/* bpftrace -e 'BEGIN{@y[1]=avg(5); @y[2]=avg(-7); @z[1]=stats(-5); @z[1]=stats(4); exit()}' and
 * the -f json forms of @e = avg(4); @f2["k"] = stats(7). */
static void avg_and_stats(void)
{
	int64_t k1 = 1, k2 = 2;
	struct dt_agg_avg a1 = { 5, 1 }, a2 = { -7, 1 };
	fmap_init(&fm, "@y", &T_S64, &T_AVG);
	fmap_add(&fm, &k1, &a1, NULL);
	fmap_add(&fm, &k2, &a2, NULL);
	char *s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "@y[2]: -7\n@y[1]: 5\n\n");
	free(s);

	struct dt_agg_stats s1 = { 1, -5, -5, -5 }, s2 = { 1, 4, 4, 4 };
	fmap_init(&fm, "@z", &T_S64, &T_STATS);
	fmap_add(&fm, &k1, &s1, &s2);
	s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "@z[1]: count 2, average 0, total -1\n\n");
	free(s);

	uint64_t zero = 0;
	struct dt_agg_avg a4 = { 4, 1 };
	fmap_init(&fm, "@e", NULL, &T_AVG);
	fmap_add(&fm, &zero, &a4, NULL);
	s = fmap_print(&fm, DT_OUT_JSON, 0, 0);
	CHECK_EQ_STR(s, "{\"type\": \"stats\", \"data\": {\"@e\": 4}}\n");
	free(s);

	char k[16] = "k";
	struct dt_agg_stats s7 = { 1, 7, 7, 7 };
	fmap_init(&fm, "@f2", &T_STR16, &T_STATS);
	fmap_add(&fm, k, &s7, NULL);
	s = fmap_print(&fm, DT_OUT_JSON, 0, 0);
	CHECK_EQ_STR(s, "{\"type\": \"stats\", \"data\": {\"@f2\": {\"k\": {\"count\": 1, "
			"\"average\": 7, \"total\": 7}}}}\n");
	free(s);
}

/* ---------------------------------------------------------------- JSON maps and values */

/* bpftrace -f json -e 'BEGIN { @b[1,"x"] = sum(5); @b[2,"y\"q"] = sum(-5); @s = "st\tr\n";
 * @t[1]=(1,"a"); print((1,"b")); exit(); }' */
static void json_maps_and_values(void)
{
	uint8_t k[72];
	int64_t five = 5, mfive = -5;
	fmap_init(&fm, "@b", &T_KEY_IS, &T_SUM);
	key_is(k, 1, "x");
	fmap_add(&fm, k, &five, NULL);
	key_is(k, 2, "y\"q");
	fmap_add(&fm, k, &mfive, NULL);
	char *s = fmap_print(&fm, DT_OUT_JSON, 0, 0);
	CHECK_EQ_STR(s, "{\"type\": \"map\", \"data\": {\"@b\": {\"2,y\\\"q\": -5, \"1,x\": 5}}}\n");
	free(s);

	char str[64] = "st\tr\n";
	uint64_t zero = 0;
	fmap_init(&fm, "@s", NULL, &T_STR);
	fmap_add(&fm, &zero, str, NULL);
	s = fmap_print(&fm, DT_OUT_JSON, 0, 0);
	CHECK_EQ_STR(s, "{\"type\": \"map\", \"data\": {\"@s\": \"st\\tr\\n\"}}\n");
	free(s);

	static dt_type *te[] = { &T_S64, &T_STR };
	static uint32_t to[] = { 0, 8 };
	static dt_type T_TUP = { .kind = DT_T_TUPLE, .size = 72, .align = 8, .tuple = { 2, te, to } };
	uint8_t tv[72];
	int64_t one = 1;
	key_is(tv, 1, "a");
	fmap_init(&fm, "@t", &T_S64, &T_TUP);
	fmap_add(&fm, &one, tv, NULL);
	s = fmap_print(&fm, DT_OUT_JSON, 0, 0);
	CHECK_EQ_STR(s, "{\"type\": \"map\", \"data\": {\"@t\": {\"1\": [1,\"a\"]}}}\n");
	free(s);
	s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "@t[1]: (1, a)\n");
	free(s);

	struct cap c;
	cap_open(&c, DT_OUT_JSON);
	key_is(tv, 1, "b");
	dt_out_value(c.o, &T_TUP, tv);
	dt_out_value(c.o, &T_S64, &five);
	dt_out_attached(c.o, 1);
	dt_out_lost_events(c.o, 3);
	s = cap_close(&c);
	CHECK_EQ_STR(s, "{\"type\": \"value\", \"data\": [1,\"b\"]}\n"
			"{\"type\": \"value\", \"data\": 5}\n"
			"{\"type\": \"attached_probes\", \"count\": 1, \"data\": {\"probes\": 1}}\n"
			"{\"type\": \"lost_events\", \"data\": {\"events\": 3}}\n");
	free(s);

	cap_open(&c, DT_OUT_TEXT);
	dt_out_value(c.o, &T_TUP, tv);
	dt_out_attached(c.o, 2);
	dt_out_maps_start(c.o);
	s = cap_close(&c);
	CHECK_EQ_STR(s, "(1, b)\nAttaching 2 probes...\n\n\n");
	free(s);
}

/* Our own rule (bpftrace 0.17 would emit invalid JSON): control bytes as \u00XX, valid UTF-8
 * kept, invalid bytes as \u00XX. */
static void json_escaping(void)
{
	dt_sbuf b = {0};
	const char in[] = "a\"b\\c\x01\xc3\xa9\xff";
	dt_json_escape(&b, in, sizeof(in) - 1);
	CHECK_EQ_STR(dt_sb_str(&b), "a\\\"b\\\\c\\u0001\xc3\xa9\\u00ff");
	free(b.s);
}

/* ---------------------------------------------------------------- printf */

static dt_type *pf_elems[8];
static uint32_t pf_offs[8];
static dt_type pf_args = { .kind = DT_T_TUPLE, .tuple = { 0, pf_elems, pf_offs } };

static char *pf(dt_out_format fmt, const char *f, int n, dt_type **types, const void *data,
		size_t len)
{
	struct cap c;
	uint32_t off = 0;
	for (int i = 0; i < n; i++) {
		pf_elems[i] = types[i];
		pf_offs[i] = off;
		off += types[i]->size;
	}
	pf_args.tuple.n = (uint32_t)n;
	pf_args.size = off;
	cap_open(&c, fmt);
	dt_out_printf(c.o, f, &pf_args, data, len);
	return cap_close(&c);
}

/* One int64 argument through one conversion. */
static char *pf1(const char *f, int64_t v)
{
	dt_type *t[] = { &T_S64 };
	return pf(DT_OUT_TEXT, f, 1, t, &v, 8);
}

#define CHECK_PF1(fmt, v, expect)                                                            \
	do {                                                                                 \
		char *_s = pf1(fmt, v);                                                      \
		CHECK_EQ_STR(_s, expect);                                                    \
		free(_s);                                                                    \
	} while (0)

/* printf("[FMT]\n", -3) for each FMT, and the same with 1099511693317 (= 2^40 + 65541): an int64
 * argument prints at its own width unless a length modifier narrows it (hh, h), which is where
 * bpftrace 0.17's C semantics differ (it prints %d of 1099511693317 as 65541). */
static void printf_conversions(void)
{
	CHECK_PF1("[%c]", 65, "[A]");
	CHECK_PF1("[%p]", -3, "[0xfffffffffffffffd]");
	CHECK_PF1("[%llu]", -3, "[18446744073709551613]");
	CHECK_PF1("[%x]", -3, "[fffffffffffffffd]");
	CHECK_PF1("[%u]", -3, "[18446744073709551613]");
	CHECK_PF1("[%-10d]", -3, "[-3        ]");
	CHECK_PF1("[%010d]", -3, "[-000000003]");
	CHECK_PF1("[%lx]", -3, "[fffffffffffffffd]");
	CHECK_PF1("[%X]", -3, "[FFFFFFFFFFFFFFFD]");
	CHECK_PF1("[%o]", -3, "[1777777777777777777775]");
	CHECK_PF1("[%hhd]", -3, "[-3]");
	CHECK_PF1("[%hx]", -3, "[fffd]");
	CHECK_PF1("[%zd]", -3, "[-3]");
	CHECK_PF1("[%d]", 1099511693317LL, "[1099511693317]");
	CHECK_PF1("[%d]", 5000000000LL, "[5000000000]");
	CHECK_PF1("[%x]", 1099511693317LL, "[10000010005]");
	CHECK_PF1("[%hhd]", 1099511693317LL, "[5]");
	CHECK_PF1("[%hd]", 1099511693317LL, "[5]");
	CHECK_PF1("[%ld]", 1099511693317LL, "[1099511693317]");
	CHECK_PF1("[%p]", 1099511693317LL, "[0x10000010005]");
	/* 32-bit arguments keep their width: %x of an int32 -3 is 8 digits, %u of it 2^32 - 3. */
	{
		static dt_type T_S32 = { .kind = DT_T_INT, .size = 4, .align = 4, .is_signed = true };
		dt_type *t32[] = { &T_S32, &T_S32 };
		int32_t v32[2] = { -3, -3 };
		char *s32 = pf(DT_OUT_TEXT, "[%x][%u]", 2, t32, v32, sizeof(v32));
		CHECK_EQ_STR(s32, "[fffffffd][4294967293]");
		free(s32);
	}
	CHECK_PF1("100%% [%d] %q", 7, "100% [7] %q");
	/* Our guard, not bpftrace's: a huge width is printed literally, and eats no argument. */
	CHECK_PF1("[%1000000000d][%d]", 7, "[%1000000000d][7]");
	char *w = pf1("[%9999d]", 7);
	CHECK(w && strlen(w) == 10001 && w[9999] == '7');
	free(w);
}

/* bpftrace -e 'BEGIN { printf("%d %5s|%-4x|\n", -1, "ab", 255); exit(); }', text and JSON,
 * plus printf("[%s][%d]\n", "a\tb\"c", (uint8)200) and printf("[%-3s][%3c]\n", "abcdef", 66). */
static void printf_mixed(void)
{
	static dt_type T_U8 = { .kind = DT_T_INT, .size = 1, .align = 1 };
	uint8_t d[8 + 64 + 8] = {0};
	int64_t m1 = -1, ff = 255;
	memcpy(d, &m1, 8);
	strcpy((char *)d + 8, "ab");
	memcpy(d + 72, &ff, 8);
	dt_type *t[] = { &T_S64, &T_STR, &T_S64 };
	char *s = pf(DT_OUT_TEXT, "%d %5s|%-4x|\n", 3, t, d, sizeof(d));
	CHECK_EQ_STR(s, "-1    ab|ff  |\n");
	free(s);
	s = pf(DT_OUT_JSON, "%d %5s|%-4x|\n", 3, t, d, sizeof(d));
	CHECK_EQ_STR(s, "{\"type\": \"printf\", \"data\": \"-1    ab|ff  |\\n\"}\n");
	free(s);
	/* A payload shorter than the layout: the missing argument prints as nothing. */
	s = pf(DT_OUT_TEXT, "%d %5s|%-4x|\n", 3, t, d, 72);
	CHECK_EQ_STR(s, "-1    ab||\n");
	free(s);

	uint8_t e[65] = {0};
	strcpy((char *)e, "a\tb\"c");
	e[64] = 200;
	dt_type *t2[] = { &T_STR, &T_U8 };
	s = pf(DT_OUT_TEXT, "[%s][%d]\n", 2, t2, e, sizeof(e));
	CHECK_EQ_STR(s, "[a\tb\"c][200]\n");
	free(s);

	uint8_t g[72] = {0};
	int64_t b = 66;
	strcpy((char *)g, "abcdef");
	memcpy(g + 64, &b, 8);
	dt_type *t3[] = { &T_STR, &T_S64 };
	s = pf(DT_OUT_TEXT, "[%-3s][%3c]\n", 2, t3, g, sizeof(g));
	CHECK_EQ_STR(s, "[abcdef][  B]\n");
	free(s);
	s = pf(DT_OUT_TEXT, "no args\n", 0, t3, NULL, 0);
	CHECK_EQ_STR(s, "no args\n");
	free(s);
}

/* ---------------------------------------------------------------- stacks and symbols */

static int find_kallsyms(void)
{
	char *text = NULL;
	if (dt_read_file("/proc/kallsyms", &text, NULL))
		return -1;
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		unsigned long long a;
		char type, name[128];
		if (nl)
			*nl = '\0';
		if (sscanf(line, "%llx %c %127s", &a, &type, name) == 3 && (type == 'T' || type == 't')) {
			if (!strcmp(name, "vfs_read"))
				k_vfs_read = a;
			else if (!strcmp(name, "ksys_read"))
				k_ksys_read = a;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	return k_vfs_read && k_ksys_read ? 0 : -1;
}

/* bpftrace -e 'profile:hz:99 { @k[kstack(2)] = count(); @v[1] = kstack(2); @w = kstack(perf, 2);
 * … }' shapes: keys indent frames by 4, values by 8, perf mode is "\tADDR sym+off", a stack that
 * cannot be read prints nothing ("@k[, 7]" in bpftrace's JSON output), stack values are not
 * separated by blank lines. */
/* A ustack_dwarf walk that stopped for want of tables ends with its marker, and the session is
 * told once (bpftrace's warning, on the notice stream), however many such stacks print. */
static void stack_without_tables_warns_once(void)
{
	static dt_type udw = { .kind = DT_T_STACK, .size = 16, .align = 8,
			       .stack = { DT_STACK_USER_DWARF, DT_STACKMODE_DEFAULT, 2 } };
	struct dt_stack_ref r = { 1, 4242, DT_UNWIND_NO_TABLES }, r2 = { 1, 4243, DT_UNWIND_NO_TABLES };
	char *nbuf = NULL;
	size_t nlen = 0;
	FILE *nf = open_memstream(&nbuf, &nlen);
	struct cap c;
	uint64_t one = 1;

	memset(&c, 0, sizeof(c));
	c.f = open_memstream(&c.buf, &c.len);
	c.sym = dt_sym_new();
	dt_out_opts o = { .file = c.f, .notice = nf, .format = DT_OUT_TEXT, .sym = c.sym,
			  .stack_frames = fake_frames, .ncpus = NCPUS, .stacks_apart = true };
	c.o = dt_out_new(&o);
	fmap_init(&fm, "@s", &udw, &T_COUNT);
	fmap_add(&fm, &r, &one, NULL);
	fmap_add(&fm, &r2, &one, NULL);
	CHECK_EQ_INT(dt_out_print_entries(c.o, &fm.m, &fm.l, fm.keys, fm.vals, fm.n, 0, 0), 0);
	char *s = cap_close(&c);
	fclose(nf);
	CHECK(strstr(s, "[stopped: no tables yet]") != NULL);
	CHECK(strstr(nbuf, "WARNING: No DWARF unwind data available for this process (pid 4242) "
		      "yet: its stack stops at [stopped: no tables yet]\nHINT: ") == nbuf);
	CHECK(strstr(nbuf + 1, "WARNING") == NULL);
	free(s);
	free(nbuf);
}

static void stacks(void)
{
	T_SKIP_UNLESS_ROOT();
	if (find_kallsyms()) {
		CHECK(!"vfs_read/ksys_read not found in /proc/kallsyms");
		return;
	}
	uint8_t k[24] = {0};
	uint64_t one = 1, id1 = 1;
	int64_t seven = 7;
	memcpy(k, &id1, 8);
	memcpy(k + 16, &seven, 8);
	fmap_init(&fm, "@k", &T_KEY_STACK_INT, &T_COUNT);
	fmap_add(&fm, k, &one, NULL);
	memset(k, 0, 16);
	fmap_add(&fm, k, &one, &one);
	char *s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "@k[\n    vfs_read+5\n    ksys_read+10\n, 7]: 1\n@k[, 7]: 2\n");
	free(s);
	s = fmap_print(&fm, DT_OUT_JSON, 0, 0);
	CHECK_EQ_STR(s, "{\"type\": \"map\", \"data\": {\"@k\": {\"\\n    vfs_read+5\\n    "
			"ksys_read+10\\n,7\": 1, \",7\": 2}}}\n");
	free(s);
	/* --json-frames: the key is an array (the stack one of frame objects), so the map is a
	 * list of entries. */
	char jwant[512];
	cap_json_frames = true;
	s = fmap_print(&fm, DT_OUT_JSON, 0, 0);
	cap_json_frames = false;
	snprintf(jwant, sizeof(jwant), "{\"type\": \"map\", \"data\": {\"@k\": [{\"key\": [[{\"addr\": "
		 "\"0x%llx\", \"func\": \"vfs_read\", \"offset\": 5, \"module\": \"kernel\"}, "
		 "{\"addr\": \"0x%llx\", \"func\": \"ksys_read\", \"offset\": 10, \"module\": "
		 "\"kernel\"}],7], \"value\": 1}, {\"key\": [[],7], \"value\": 2}]}}\n",
		 (unsigned long long)k_vfs_read + 5, (unsigned long long)k_ksys_read + 10);
	CHECK_EQ_STR(s, jwant);
	free(s);

	/* Stacks that print the same (one kernel path recorded with two pids, so two keys) are one
	 * entry with the counts added; --no-merge-stacks keeps bpftrace's two. hist buckets add. */
	struct dt_stack_ref r5 = { 1, 5, 0 }, r6 = { 1, 6, 0 };
	uint64_t three = 3;
	fmap_init(&fm, "@m", &T_KSTACK, &T_COUNT);
	fmap_add(&fm, &r5, &one, NULL);
	fmap_add(&fm, &r6, &three, &one);
	s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "@m[\n    vfs_read+5\n    ksys_read+10\n]: 5\n");
	free(s);
	s = fmap_print(&fm, DT_OUT_JSON, 0, 0);
	CHECK_EQ_STR(s, "{\"type\": \"map\", \"data\": {\"@m\": {\"\\n    vfs_read+5\\n    "
			"ksys_read+10\\n\": 5}}}\n");
	free(s);
	cap_stacks_apart = true;
	s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	cap_stacks_apart = false;
	CHECK_EQ_STR(s, "@m[\n    vfs_read+5\n    ksys_read+10\n]: 1\n"
			"@m[\n    vfs_read+5\n    ksys_read+10\n]: 4\n");
	free(s);
	uint8_t hk[24] = {0};
	fmap_init(&fm, "@h", &T_KSTACK, &T_HIST);
	memcpy(hk, &r5, 16);
	add_bucket(&fm, hk, 3, 2);
	memcpy(hk, &r6, 16);
	add_bucket(&fm, hk, 3, 1);
	add_bucket(&fm, hk, 4, 1);
	s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "@h[\n    vfs_read+5\n    ksys_read+10\n]: \n"
			"[2, 4)                 3 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
			"[4, 8)                 1 |@@@@@@@@@@@@@@@@@                                   |\n\n");
	free(s);

	struct dt_stack_ref ref = { 1, 0, 0 };
	int64_t k1 = 1, k2 = 2;
	fmap_init(&fm, "@v", &T_S64, &T_KSTACK);
	fmap_add(&fm, &k2, &ref, NULL);
	fmap_add(&fm, &k1, &ref, NULL);
	s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "@v[1]: \n        vfs_read+5\n        ksys_read+10\n"
			"@v[2]: \n        vfs_read+5\n        ksys_read+10\n\n");
	free(s);
	/* Our JSON shape (asked for by the design): stacks as arrays of frame strings. */
	s = fmap_print(&fm, DT_OUT_JSON, 0, 0);
	CHECK_EQ_STR(s, "{\"type\": \"map\", \"data\": {\"@v\": {\"1\": [\"vfs_read+5\", "
			"\"ksys_read+10\"], \"2\": [\"vfs_read+5\", \"ksys_read+10\"]}}}\n");
	free(s);

	uint64_t zero = 0;
	char want[256];
	fmap_init(&fm, "@w", NULL, &T_KSTACK_PERF);
	fmap_add(&fm, &zero, &ref, NULL);
	s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	snprintf(want, sizeof(want), "@w: \n\t%llx vfs_read+5\n\t%llx ksys_read+10\n\n",
		 (unsigned long long)k_vfs_read + 5, (unsigned long long)k_ksys_read + 10);
	CHECK_EQ_STR(s, want);
	free(s);

	/* Raw mode (bpftrace 0.17 has none; later versions print bare hex addresses). */
	static dt_type T_KSTACK_RAW = { .kind = DT_T_STACK, .size = 16, .align = 8,
					.stack = { DT_STACK_KERNEL, DT_STACKMODE_RAW, 2 } };
	fmap_init(&fm, "@r", NULL, &T_KSTACK_RAW);
	fmap_add(&fm, &zero, &ref, NULL);
	s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	snprintf(want, sizeof(want), "@r: \n%llx\n%llx\n\n", (unsigned long long)k_vfs_read + 5,
		 (unsigned long long)k_ksys_read + 10);
	CHECK_EQ_STR(s, want);
	free(s);

	/* bpftrace -e 'BEGIN { @s = ksym(…vfs_read…); printf("%s|%s|\n", ksym(…), kstack(1)); }' */
	uint64_t addr = k_vfs_read + 3;
	fmap_init(&fm, "@s", NULL, &T_KSYM);
	fmap_add(&fm, &zero, &addr, NULL);
	s = fmap_print(&fm, DT_OUT_TEXT, 0, 0);
	CHECK_EQ_STR(s, "@s: vfs_read\n");
	free(s);
	uint8_t d[24];
	memcpy(d, &addr, 8);
	memcpy(d + 8, &ref, 16);
	dt_type *t[] = { &T_KSYM, &T_KSTACK };
	s = pf(DT_OUT_TEXT, "%s|%s|\n", 2, t, d, sizeof(d));
	CHECK_EQ_STR(s, "vfs_read|\n        vfs_read+5\n        ksys_read+10\n|\n");
	free(s);
}

/* The kernel path: a real per-CPU hash map read by dt_out_print_map (root). Values land on
 * several CPUs and are summed; iteration order is the kernel's, so keys get distinct values. */
static void real_bpf_maps(void)
{
	T_SKIP_UNLESS_ROOT();
	int ncpus = libbpf_num_possible_cpus();
	dt_map_sym m = { .name = "@m", .key = &T_S64, .value = &T_COUNT };
	dt_map_layout l;
	dt_map_layout_of(&m, &l);
	CHECK(l.percpu && l.key_size == 8);
	int fd = bpf_map_create(l.bpf_map_type, "dt_test", l.key_size, l.value_size, l.max_entries,
				NULL);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	uint64_t *vals = xcalloc((size_t)ncpus, 8);
	for (int64_t k = 1; k <= 3; k++) {
		vals[0] = (uint64_t)k * 10;
		vals[ncpus - 1] += 1; /* the last CPU (the first too when there is one) adds 1, 2, 3 */
		CHECK_EQ_INT(bpf_map_update_elem(fd, &k, vals, BPF_ANY), 0);
	}
	struct cap c;
	memset(&c, 0, sizeof(c));
	c.f = open_memstream(&c.buf, &c.len);
	dt_out_opts o = { .file = c.f, .format = DT_OUT_TEXT, .ncpus = ncpus };
	c.o = dt_out_new(&o);
	CHECK_EQ_INT(dt_out_print_map(c.o, &m, fd, 0, 0, false), 0);
	CHECK_EQ_INT(dt_out_print_map(c.o, &m, fd, 1, 0, false), 0);
	dt_out_free(c.o);
	fclose(c.f);
	if (ncpus > 1)
		CHECK_EQ_STR(c.buf, "@m[1]: 11\n@m[2]: 22\n@m[3]: 33\n@m[3]: 33\n");
	else
		CHECK_EQ_STR(c.buf, "@m[1]: 1\n@m[2]: 2\n@m[3]: 3\n@m[3]: 3\n");
	free(c.buf);
	free(vals);

	/* A hist map: bucketed keys, regrouped per key. */
	dt_map_sym h = { .name = "@h", .key = NULL, .value = &T_HIST };
	dt_map_layout_of(&h, &l);
	int hfd = bpf_map_create(l.bpf_map_type, "dt_test_h", l.key_size, l.value_size,
				 l.max_entries, NULL);
	CHECK(hfd >= 0);
	if (hfd >= 0) {
		uint8_t key[16] = {0};
		uint64_t *cnt = xcalloc((size_t)ncpus, 8), b = dt_hist_bucket(1000, 0);
		cnt[0] = 4;
		memcpy(key + l.user_key_size, &b, 8);
		CHECK_EQ_INT(bpf_map_update_elem(hfd, key, cnt, BPF_ANY), 0);
		memset(&c, 0, sizeof(c));
		c.f = open_memstream(&c.buf, &c.len);
		o.file = c.f;
		o.format = DT_OUT_JSON;
		c.o = dt_out_new(&o);
		CHECK_EQ_INT(dt_out_print_map(c.o, &h, hfd, 0, 0, false), 0);
		dt_out_free(c.o);
		fclose(c.f);
		CHECK_EQ_STR(c.buf, "{\"type\": \"hist\", \"data\": {\"@h\": [{\"min\": 512, "
				    "\"max\": 1023, \"count\": 4}]}}\n");
		free(c.buf);
		free(cnt);
		close(hfd);
	}
	close(fd);
}

int main(void)
{
	T_RUN(scalar_count_and_tuple_key);
	T_RUN(sum_sorted_signed_stable);
	T_RUN(top_and_div);
	T_RUN(min_and_string_values);
	T_RUN(sort_by_key_rules);
	T_RUN(empty_maps);
	T_RUN(hist_scalar);
	T_RUN(hist_keyed);
	T_RUN(hist_key_order);
	T_RUN(hist_bars_and_labels);
	T_RUN(lhist_text_and_json);
	T_RUN(lhist_k_labels);
	T_RUN(avg_and_stats);
	T_RUN(json_maps_and_values);
	T_RUN(json_escaping);
	T_RUN(printf_conversions);
	T_RUN(printf_mixed);
	T_RUN(stacks);
	T_RUN(stack_without_tables_warns_once);
	T_RUN(real_bpf_maps);
	return t_done();
}
