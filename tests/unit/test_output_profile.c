/* test_output_profile.c — the profile outputs without the kernel: `-f folded` lines from a
 * stack-keyed map (other key parts first, user frames outer to inner, kernel frames after with
 * "_[k]", entries that fold to the same line merged, unreadable stacks contributing no frames,
 * other maps as text on the notice stream, never in the folded data), and the SVG flame graph (a well-formed document with one box per frame, counts and
 * percentages in the tooltips, XML-escaped C++ names, children in name order, the zoom and search
 * script). Stacks come from a fake stack source pointing into this test's own functions, which the
 * symbolizer names through our own /proc/self/maps. */
#include "output/output_internal.h"
#include "common/common.h"
#include "t.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NCPUS 2

/* Volatile work keeps each body longer than the offsets below at any -O level. */
static volatile int prof_sink;
__attribute__((noinline)) void prof_leaf(void) { prof_sink += 1; prof_sink *= 3; }
__attribute__((noinline)) void prof_mid(void) { prof_leaf(); prof_sink += 2; prof_sink *= 3; }
__attribute__((noinline)) void prof_root(void) { prof_mid(); prof_sink += 3; prof_sink *= 3; }

static dt_type T_S64 = { .kind = DT_T_INT, .size = 8, .align = 8, .is_signed = true };
static dt_type T_COMM = { .kind = DT_T_STR, .size = 16, .align = 1 };
static dt_type T_COUNT = { .kind = DT_T_COUNT, .size = 8, .align = 8 };
static dt_type T_USTACK = { .kind = DT_T_STACK, .size = 16, .align = 8,
			    .stack = { DT_STACK_USER_FP, DT_STACKMODE_DEFAULT, 8 } };
static dt_type T_KSTACK = { .kind = DT_T_STACK, .size = 16, .align = 8,
			    .stack = { DT_STACK_KERNEL, DT_STACKMODE_DEFAULT, 8 } };
static dt_type *key_elems[] = { &T_COMM, &T_USTACK, &T_KSTACK };
static uint32_t key_offs[] = { 0, 16, 32 };
/* (comm, ustack, kstack) */
static dt_type T_KEY = { .kind = DT_T_TUPLE, .size = 48, .align = 8,
			 .tuple = { 3, key_elems, key_offs } };

/* Stack ids: 1 = leaf < mid < root (two addresses in leaf that fold together: ids 1 and 2),
 * 3 = mid < root; kernel id 7 = two raw kernel addresses; anything else cannot be read. */
static int fake_frames(void *ctx, const dt_type *t, const struct dt_stack_ref *ref,
		       uint64_t *frames, uint32_t max)
{
	uint64_t leaf = (uint64_t)(uintptr_t)prof_leaf, mid = (uint64_t)(uintptr_t)prof_mid;
	uint64_t root = (uint64_t)(uintptr_t)prof_root;
	if (max < 3)
		return -ENOSPC;
	if (t->stack.kind == DT_STACK_KERNEL) {
		if (ref->id != 7)
			return -ENOENT;
		frames[0] = 0x10;
		frames[1] = 0x20;
		return 2;
	}
	switch (ref->id) {
	case 1:
	case 2:
		frames[0] = leaf + (ref->id == 1 ? 0 : 1);
		frames[1] = mid + 5;
		frames[2] = root + 5;
		return 3;
	case 3:
		frames[0] = mid + 1;
		frames[1] = root + 5;
		return 2;
	}
	return -ENOENT;
}

struct fmap {
	dt_map_sym m;
	dt_map_layout l;
	uint8_t keys[16 * 64];
	uint8_t vals[16 * 64];
	size_t n;
};

static void add(struct fmap *f, const char *comm, uint64_t uid, uint64_t kid, uint64_t count)
{
	uint8_t *k = f->keys + f->n * f->l.key_size;
	size_t vs = DT_ALIGN(f->l.value_size, 8) * NCPUS;
	struct dt_stack_ref u = { .id = uid, .pid = (uint32_t)getpid() }, kr = { .id = kid };
	memset(k, 0, f->l.key_size);
	strncpy((char *)k, comm, 15);
	memcpy(k + 16, &u, 16);
	memcpy(k + 32, &kr, 16);
	memset(f->vals + f->n * vs, 0, vs);
	memcpy(f->vals + f->n * vs, &count, 8);
	f->n++;
}

/* The folded data; what went to the notice stream in *notice (freed by the caller). */
static char *print_folded_notice(struct fmap *f, char **notice)
{
	char *buf = NULL, *nbuf = NULL;
	size_t len = 0, nlen = 0;
	FILE *fp = open_memstream(&buf, &len), *np = open_memstream(&nbuf, &nlen);
	dt_symbolizer *sym = dt_sym_new();
	dt_out_opts oo = { .file = fp, .notice = np, .format = DT_OUT_FOLDED, .sym = sym,
			   .stack_frames = fake_frames, .ncpus = NCPUS };
	dt_out *o = dt_out_new(&oo);
	CHECK_EQ_INT(dt_out_print_entries(o, &f->m, &f->l, f->keys, f->vals, f->n, 0, 0), 0);
	dt_out_attached(o, 2);
	dt_out_maps_start(o);
	dt_out_free(o);
	dt_sym_free(sym);
	fclose(fp);
	fclose(np);
	*notice = nbuf;
	return buf;
}

static char *print_folded(struct fmap *f)
{
	char *notice;
	char *out = print_folded_notice(f, &notice);
	CHECK_EQ_STR(notice, "Attaching 2 probes...\n");
	free(notice);
	return out;
}

static void folded_lines(void)
{
	static struct fmap f;
	memset(&f, 0, sizeof(f));
	f.m.name = "@";
	f.m.key = &T_KEY;
	f.m.value = &T_COUNT;
	dt_map_layout_of(&f.m, &f.l);
	add(&f, "app", 1, 0, 5);  /* kernel stack unreadable: user frames only */
	add(&f, "app", 2, 0, 7);  /* same functions, another address: merges with the first */
	add(&f, "app", 3, 7, 2);  /* user then kernel frames */
	add(&f, "app", 99, 0, 4); /* no frames: the key's other parts still make a line */
	char *out = print_folded(&f);
	CHECK_EQ_STR(out, "app;prof_root;prof_mid;0x20_[k];0x10_[k] 2\n"
			  "app 4\n"
			  "app;prof_root;prof_mid;prof_leaf 12\n");
	free(out);
}

/* A map without a stack prints as text on the notice stream with -f folded: the data stream
 * holds folded lines only. */
static void folded_other_maps_as_text(void)
{
	static struct fmap f;
	memset(&f, 0, sizeof(f));
	f.m.name = "@n";
	f.m.key = &T_S64;
	f.m.value = &T_COUNT;
	dt_map_layout_of(&f.m, &f.l);
	int64_t k = 3;
	uint64_t v = 9;
	memcpy(f.keys, &k, 8);
	memcpy(f.vals, &v, 8);
	f.n = 1;
	char *notice;
	char *out = print_folded_notice(&f, &notice);
	CHECK_EQ_STR(out, "");
	CHECK_EQ_STR(notice, "@n[3]: 9\nAttaching 2 probes...\n");
	free(out);
	free(notice);
}

static char *flamegraph(const char *const *lines, const int64_t *vals, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	dt_fg_head h = { .title = "t<&>", .subtitle = "@cpu · -c 'x' · profile:hz:99",
			 .unit = "samples", .unit_ns = 10101010 };
	CHECK_EQ_INT(dt_flamegraph_write(fp, &h, lines, vals, n), 0);
	fclose(fp);
	return buf;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void flamegraph_svg(void)
{
	const char *lines[] = { "main;b;std::vector<int>::push_back(int const&)", "main;a", "main;b",
				"main;a" };
	int64_t vals[] = { 30, 10, 20, 40 };
	char *svg = flamegraph(lines, vals, 4);

	CHECK(!strncmp(svg, "<?xml", 5));
	CHECK(strstr(svg, "</svg>\n") != NULL);
	/* all, main, a, b, push_back: five boxes. */
	CHECK_EQ_INT(count(svg, "<g class=\"f\""), 5);
	CHECK(strstr(svg, "<title>all (100 samples, 100.00%)</title>") != NULL);
	CHECK(strstr(svg, "<title>a (50 samples, 50.00%)</title>") != NULL);
	CHECK(strstr(svg, "<title>std::vector&lt;int&gt;::push_back(int const&amp;) (30 samples, "
			  "30.00%)</title>") != NULL);
	CHECK(strstr(svg, "<text id=\"title\" x=\"600\" y=\"24\" text-anchor=\"middle\">t&lt;&amp;&gt;"
			  "</text>") != NULL);
	CHECK(strstr(svg, "<text id=\"subtitle\" x=\"600\" y=\"44\" text-anchor=\"middle\">@cpu · "
			  "-c 'x' · profile:hz:99</text>") != NULL);
	/* The unit and its CPU time reach the details line's script. */
	CHECK(strstr(svg, "UNIT = 'samples', UNIT_NS = 10101010;") != NULL);
	/* Children in name order: a left of b. */
	const char *a = strstr(svg, "fg-n=\"a\""), *b = strstr(svg, "fg-n=\"b\"");
	CHECK(a && b);
	CHECK(a && strstr(a - 60, "fg-x=\"0\"") && strstr(a - 60, "fg-x=\"0\"") < a);
	CHECK(b && strstr(b - 60, "fg-x=\"50\"") && strstr(b - 60, "fg-x=\"50\"") < b);
	/* The interactive parts are in the file. */
	CHECK(strstr(svg, "function zoom(") && strstr(svg, "function searchFor(") &&
	      strstr(svg, "id=\"reset\"") && strstr(svg, "id=\"details\""));
	free(svg);

	/* Nothing to draw is still a valid document. */
	svg = flamegraph(NULL, NULL, 0);
	CHECK(strstr(svg, "</svg>") != NULL);
	CHECK_EQ_INT(count(svg, "<g class=\"f\""), 0);
	free(svg);
}

int main(void)
{
	T_RUN(folded_lines);
	T_RUN(folded_other_maps_as_text);
	T_RUN(flamegraph_svg);
	return t_done();
}
