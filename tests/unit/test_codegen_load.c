/* test_codegen_load.c — the proof that codegen is right: every script here is parsed, checked,
 * compiled, and loaded into the kernel through the verifier (root only); the BEGIN-only ones
 * are then run with BPF_PROG_TEST_RUN and the maps and ring-buffer events they leave behind are
 * compared with what the script means. Maps are created the way the session creates them, from
 * dt_map_layout_of and the aux map shapes of codegen.h and bpf-lib, before codegen; the aux
 * callback only hands out what dt_cg_resources_of named, so every script here also checks that
 * the resources decided before codegen cover what codegen asks for. */
#include "t.h"

#include "codegen/codegen.h"
#include "bpf-lib/dt_abi.h"
#include "bpf-lib/dt_walker.h"
#include "bpf-lib/dt_xprobe.h"
#include "common/common.h"
#include "lang/lang.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STACK_MAPS 8
#define LOG_SIZE (1u << 22)

typedef struct sess {
	dt_arena *arena;
	dt_source src;
	dt_diags *diags;
	dt_program *prog;
	int *map_fds;
	int aux[DT_AUX_FRAME + 1];
	struct { dt_stack_kind kind; uint32_t depth; int fd; } stacks[MAX_STACK_MAPS];
	int nstacks;
	dt_cg_resources needs;
	int next_slot;
	dt_cg_result *res;
	int prog_fds[64];
	uint32_t nprog_fds;
	/* Events seen in the ring buffer. */
	unsigned char ev[16][256];
	size_t ev_len[16];
	int nev;
} sess;

static char *vlog;

static int map_fd_cb(void *ctx, const dt_map_sym *m)
{
	sess *s = ctx;

	return s->map_fds[m->id];
}

/* A lookup, like the session's: -ENOENT for whatever dt_cg_resources_of did not name. */
static int aux_fd_cb(void *ctx, dt_aux_map which, dt_stack_kind kind, uint32_t depth,
		     enum bpf_prog_type pt)
{
	sess *s = ctx;

	if (!dt_cg_resources_name(&s->needs, which, kind, depth, pt))
		return -ENOENT;
	if (which == DT_AUX_STACKS) {
		for (int i = 0; i < s->nstacks; i++)
			if (s->stacks[i].kind == kind && s->stacks[i].depth == depth)
				return s->stacks[i].fd;
		return -ENOENT;
	}
	return s->aux[which];
}

/* The stack-trace maps the resources name. */
static int create_stacks(sess *s)
{
	for (uint32_t i = 0; i < s->needs.nstacks; i++) {
		const dt_cg_stack_need *n = &s->needs.stacks[i];
		int fd;

		if (s->nstacks == MAX_STACK_MAPS)
			return -ENOSPC;
		fd = bpf_map_create(BPF_MAP_TYPE_STACK_TRACE, "dt_stacks", 4, n->depth * 8, 1024,
				    NULL);
		if (fd < 0)
			return -errno;
		s->stacks[s->nstacks].kind = n->kind;
		s->stacks[s->nstacks].depth = n->depth;
		s->stacks[s->nstacks++].fd = fd;
	}
	return 0;
}

static int cont_slot_cb(void *ctx)
{
	sess *s = ctx;

	return s->next_slot++;
}

/* Slots of the chain's prog array (64 entries), filled after loading like the session does. */
static int chain_slot_cb(void *ctx)
{
	sess *s = ctx;

	return s->next_slot < 64 ? s->next_slot++ : -ENOSPC;
}

static void sess_close(sess *s)
{
	for (uint32_t i = 0; i < s->nprog_fds; i++)
		close(s->prog_fds[i]);
	if (s->prog && s->map_fds)
		for (uint32_t i = 0; i < s->prog->nmaps; i++)
			if (s->map_fds[i] >= 0)
				close(s->map_fds[i]);
	for (unsigned i = 0; i < DT_ARRAY_SIZE(s->aux); i++)
		if (s->aux[i] > 0)
			close(s->aux[i]);
	for (int i = 0; i < s->nstacks; i++)
		close(s->stacks[i].fd);
	dt_cg_resources_fini(&s->needs);
	free(s->map_fds);
	dt_cg_result_free(s->res);
	if (s->diags)
		dt_diags_free(s->diags);
	if (s->arena)
		dt_arena_free(s->arena);
	memset(s, 0, sizeof(*s));
}

static int create_aux(sess *s)
{
	LIBBPF_OPTS(bpf_map_create_opts, none);

	s->aux[DT_AUX_EVENTS] = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "dt_events", 0, 0, 1u << 16,
					       NULL);
	s->aux[DT_AUX_STATS] = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "dt_stats", 4, 8,
					      DT_STAT__COUNT, NULL);
	s->aux[DT_AUX_SCRATCH] = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "dt_scratch", 4,
						DT_SCRATCH_SIZE, 1, NULL);
	s->aux[DT_AUX_STACKS] = -1;
	s->aux[DT_AUX_WALKER_PROGS] = bpf_map_create(BPF_MAP_TYPE_PROG_ARRAY, "dt_walker", 4, 4, 2,
						     NULL);
	s->aux[DT_AUX_CONT_PROGS] = bpf_map_create(BPF_MAP_TYPE_PROG_ARRAY, "dt_conts", 4, 4, 64,
						   NULL);
	s->aux[DT_AUX_WALKER_STATE] = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "dt_wstate", 4,
						     sizeof(struct dt_walker_state), 1, NULL);
	s->aux[DT_AUX_XPROBE_RESULT] = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "dt_xresult", 4,
						      sizeof(struct dt_xresult), 1, NULL);
	s->aux[DT_AUX_PIDS_SEEN] = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "dt_pids_seen", 4, 8,
						  1024, NULL);
	s->aux[DT_AUX_EXEC_GEN] = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "dt_exec_gen", 4, 4, 1024,
						 NULL);
	s->aux[DT_AUX_CHAIN_PROGS] = bpf_map_create(BPF_MAP_TYPE_PROG_ARRAY, "dt_chain", 4, 4, 64,
						    NULL);
	s->aux[DT_AUX_FRAME] = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "dt_frame", 4,
					      DT_CG_FRAME_SIZE, DT_CG_FRAME_KEYS, NULL);
	for (unsigned i = 0; i < DT_ARRAY_SIZE(s->aux); i++)
		if (i != DT_AUX_STACKS && s->aux[i] < 0)
			return -errno;
	return 0;
}

/* Parse, check, create maps, compile, load. 0 when every program loaded. */
static int sess_load(sess *s, const char *text, uint32_t filter_pid, bool want_dump)
{
	dt_cg_env env = { .sz = sizeof(env), .ctx = s, .map_fd = map_fd_cb, .aux_fd = aux_fd_cb,
			  .cont_slot = cont_slot_cb, .start_ns = 0, .filter_pid = filter_pid,
			  .want_ir = want_dump, .want_asm = want_dump, .chain_slot = chain_slot_cb };
	dt_check_opts co = { .sz = sizeof(co) };
	int ret;

	memset(s, 0, sizeof(*s));
	s->arena = dt_arena_new();
	s->src = (dt_source){ .name = "-e", .text = text, .len = strlen(text) };
	s->diags = dt_diags_new(&s->src);
	s->prog = dt_parse(s->arena, &s->src, s->diags);
	if (dt_diags_error_count(s->diags) || dt_check(s->prog, s->arena, s->diags, &co)) {
		fprintf(stderr, "script failed to check: %s\n", text);
		dt_diags_print(s->diags, stderr, false);
		return -EINVAL;
	}
	if (dt_cg_resources_of(s->prog, &s->needs, s->diags)) {
		dt_diags_print(s->diags, stderr, false);
		return -EINVAL;
	}
	if ((ret = create_aux(s)) || (ret = create_stacks(s)))
		return ret;
	s->map_fds = xcalloc(s->prog->nmaps + 1, sizeof(int));
	for (uint32_t i = 0; i < s->prog->nmaps; i++) {
		dt_map_layout lay;

		dt_map_layout_of(s->prog->maps[i], &lay);
		s->map_fds[i] = bpf_map_create(lay.bpf_map_type, "dt_map", lay.key_size,
					       lay.value_size, lay.max_entries, NULL);
		if (s->map_fds[i] < 0) {
			fprintf(stderr, "map %s: %s\n", s->prog->maps[i]->name, strerror(errno));
			return -errno;
		}
	}
	ret = dt_codegen(s->prog, &env, &s->res, s->diags);
	if (ret) {
		fprintf(stderr, "codegen failed (%d) for: %s\n", ret, text);
		dt_diags_print(s->diags, stderr, false);
		return ret;
	}
	if (want_dump && getenv("DT_TEST_DUMP"))
		fprintf(stderr, "%s\n%s\n", s->res->ir, s->res->asm_text);
	for (uint32_t i = 0; i < s->res->nprogs && i < DT_ARRAY_SIZE(s->prog_fds); i++) {
		dt_cg_prog *pg = &s->res->progs[i];
		LIBBPF_OPTS(bpf_prog_load_opts, lo, .log_buf = vlog, .log_size = LOG_SIZE,
			    .log_level = 1, .expected_attach_type = pg->expected_attach_type);
		int fd;

		vlog[0] = 0;
		fd = bpf_prog_load(pg->prog_type, pg->name, "GPL", pg->insns, pg->ninsns, &lo);
		if (fd < 0) {
			int e = errno;
			size_t l = strlen(vlog);

			fprintf(stderr, "load of %s (%zu insns) failed (%s) for: %s\n%s\n", pg->name, pg->ninsns, strerror(e),
				text, l > 6000 ? vlog + l - 6000 : vlog);
			return -e;
		}
		s->prog_fds[s->nprog_fds++] = fd;
		if (pg->chain_slot >= 0 &&
		    bpf_map_update_elem(s->aux[DT_AUX_CHAIN_PROGS], &pg->chain_slot, &fd, BPF_ANY))
			return -errno;
	}
	return 0;
}

static int sess_run_begin(sess *s)
{
	for (uint32_t i = 0; i < s->res->nprogs; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, ro);

		if (s->res->progs[i].attach->provider != DT_P_BEGIN || s->res->progs[i].chain_slot >= 0)
			continue;
		if (bpf_prog_test_run_opts(s->prog_fds[i], &ro) < 0)
			return -errno;
	}
	return 0;
}

static int on_event(void *ctx, void *data, size_t len)
{
	sess *s = ctx;

	if (s->nev < 16) {
		memcpy(s->ev[s->nev], data, len < 256 ? len : 256);
		s->ev_len[s->nev++] = len;
	}
	return 0;
}

static void sess_events(sess *s)
{
	struct ring_buffer *rb = ring_buffer__new(s->aux[DT_AUX_EVENTS], on_event, s, NULL);

	if (rb) {
		ring_buffer__consume(rb);
		ring_buffer__free(rb);
	}
}

static int map_fd_named(sess *s, const char *name)
{
	if (!s->map_fds)
		return -1;
	for (uint32_t i = 0; i < s->prog->nmaps; i++)
		if (!strcmp(s->prog->maps[i]->name, name))
			return s->map_fds[i];
	return -1;
}

/* Reads an int64 value of a plain map at an 8-byte integer key (or the scalar key). */
static long long get_int(sess *s, const char *map, uint64_t key, int *found)
{
	int fd = map_fd_named(s, map);
	unsigned char k[64] = { 0 };
	long long v = 0;

	memcpy(k, &key, 8);
	*found = fd >= 0 && bpf_map_lookup_elem(fd, k, &v) == 0;
	return v;
}

static long long get_scalar(sess *s, const char *map)
{
	int found;
	long long v = get_int(s, map, 0, &found);

	return found ? v : -999999;
}

/* Sums this CPU's slot over all CPUs of a per-CPU map, for a key given as bytes; `words` u64s
 * per CPU, word `w` returned (for min/max: the CPU whose `set` word is non-zero). */
static long long percpu_word(sess *s, const char *map, const void *key, int words, int w)
{
	int fd = map_fd_named(s, map);
	int ncpu = libbpf_num_possible_cpus();
	long long *vals = calloc((size_t)ncpu * words, 8), sum = 0;

	if (fd < 0 || bpf_map_lookup_elem(fd, key, vals)) {
		free(vals);
		return -999999;
	}
	for (int i = 0; i < ncpu; i++)
		sum += vals[i * words + w];
	free(vals);
	return sum;
}

static bool load_ok(const char *text)
{
	sess s;
	int r = sess_load(&s, text, 0, true);

	sess_close(&s);
	return r == 0;
}

/* ------------------------------------------------------------ run tests */

static void arith(void)
{
	sess s;

	T_SKIP_UNLESS_ROOT();
	CHECK(sess_load(&s, "BEGIN { @x = 1+2*3; @a = -7 / 2; @b = -7 % 2; @c = 7 / -2; "
			    "$z = 0; @d = 7 / $z; @e = 100 - 1 - 2; @sh = -16 >> 2; @sl = 1 << 10; "
			    "@lt = -1 < 1; @band = 0xff & 0x0f | 0x100; @neg = -(5); @not = !0; }",
			0, true) == 0);
	CHECK(sess_run_begin(&s) == 0);
	CHECK_EQ_INT(get_scalar(&s, "@x"), 7);
	CHECK_EQ_INT(get_scalar(&s, "@a"), -3);
	CHECK_EQ_INT(get_scalar(&s, "@b"), -1);
	CHECK_EQ_INT(get_scalar(&s, "@c"), -3);
	CHECK_EQ_INT(get_scalar(&s, "@d"), 1); /* x / 0 is 1 (bpftrace's rule), with a warning */
	CHECK_EQ_INT(get_scalar(&s, "@e"), 97);
	CHECK_EQ_INT(get_scalar(&s, "@sh"), -4);
	CHECK_EQ_INT(get_scalar(&s, "@sl"), 1024);
	CHECK_EQ_INT(get_scalar(&s, "@lt"), 1);
	CHECK_EQ_INT(get_scalar(&s, "@band"), 0x10f);
	CHECK_EQ_INT(get_scalar(&s, "@neg"), -5);
	CHECK_EQ_INT(get_scalar(&s, "@not"), 1);
	sess_close(&s);
}

static void control(void)
{
	sess s;

	T_SKIP_UNLESS_ROOT();
	CHECK(sess_load(&s, "BEGIN { $a = 3; @t = $a > 2 ? 10 : 20; @l = ($a > 1 && $a < 5); "
			    "@o = (0 || $a == 4); $i = 0; unroll(5) { $i++; } @u = $i; "
			    "if ($a == 3) { @if = 1; } else { @if = 2; } @r = 5; @r += 3; @r++; "
			    "@y = 1; return; @z = 1; }",
			0, true) == 0);
	CHECK(sess_run_begin(&s) == 0);
	CHECK_EQ_INT(get_scalar(&s, "@t"), 10);
	CHECK_EQ_INT(get_scalar(&s, "@l"), 1);
	CHECK_EQ_INT(get_scalar(&s, "@o"), 0);
	CHECK_EQ_INT(get_scalar(&s, "@u"), 5);
	CHECK_EQ_INT(get_scalar(&s, "@if"), 1);
	CHECK_EQ_INT(get_scalar(&s, "@r"), 9);
	CHECK_EQ_INT(get_scalar(&s, "@y"), 1);
	CHECK_EQ_INT(get_scalar(&s, "@z"), -999999);
	sess_close(&s);
}

static void unrolled_temps(void)
{
	sess s;
	int found;

	T_SKIP_UNLESS_ROOT();
	/* Each iteration builds keys and values in buffers reused from the previous statement. */
	if (sess_load(&s, "BEGIN { $i = 0; unroll(30) { @u[$i] = $i * 2; @v[$i, \"k\"] = $i; $i++; } }",
		      0, true)) {
		CHECK(!"script loads");
		sess_close(&s);
		return;
	}
	CHECK(sess_run_begin(&s) == 0);
	CHECK_EQ_INT(get_int(&s, "@u", 0, &found), 0);
	CHECK(found);
	CHECK_EQ_INT(get_int(&s, "@u", 17, &found), 34);
	CHECK(found);
	CHECK_EQ_INT(get_int(&s, "@u", 29, &found), 58);
	CHECK(found);
	get_int(&s, "@u", 30, &found);
	CHECK(!found);
	sess_close(&s);
}

static void strings(void)
{
	sess s;
	char key[64] = "abc";
	long long v = 0;

	T_SKIP_UNLESS_ROOT();
	CHECK(sess_load(&s, "BEGIN { @s[\"abc\"] = 1; @s[\"abd\"] = 2; $v = \"hello\"; "
			    "@h[$v] = 3; if (\"abc\" == \"abc\") { @eq = 1; } "
			    "if (\"abc\" != \"abd\") { @ne = 1; } if ($v == \"hellO\") { @bad = 1; } "
			    "@m[1, \"a\"] = 5; }",
			0, true) == 0);
	CHECK(sess_run_begin(&s) == 0);
	CHECK(bpf_map_lookup_elem(map_fd_named(&s, "@s"), key, &v) == 0);
	CHECK_EQ_INT(v, 1);
	strcpy(key, "abd");
	CHECK(bpf_map_lookup_elem(map_fd_named(&s, "@s"), key, &v) == 0);
	CHECK_EQ_INT(v, 2);
	memset(key, 0, sizeof(key));
	strcpy(key, "hello");
	CHECK(bpf_map_lookup_elem(map_fd_named(&s, "@h"), key, &v) == 0);
	CHECK_EQ_INT(v, 3);
	CHECK_EQ_INT(get_scalar(&s, "@eq"), 1);
	CHECK_EQ_INT(get_scalar(&s, "@ne"), 1);
	CHECK_EQ_INT(get_scalar(&s, "@bad"), -999999);
	{
		/* (int64, string[64]): the int at 0, the string at 8. */
		unsigned char k[72] = { 0 };
		long long one = 1;

		memcpy(k, &one, 8);
		k[8] = 'a';
		CHECK(bpf_map_lookup_elem(map_fd_named(&s, "@m"), k, &v) == 0);
		CHECK_EQ_INT(v, 5);
	}
	sess_close(&s);
}

static void aggregations(void)
{
	sess s;
	uint64_t k[2] = { 0, 0 };

	T_SKIP_UNLESS_ROOT();
	CHECK(sess_load(&s, "BEGIN { @h = hist(0); @h = hist(1); @h = hist(2); @h = hist(3); "
			    "@h = hist(1000); @h = hist(-5); @l = lhist(5, 0, 10, 2); "
			    "@l = lhist(-1, 0, 10, 2); @l = lhist(100, 0, 10, 2); @l = lhist(9, 0, 10, 2); "
			    "@a = avg(2); @a = avg(4); @mn = min(5); @mn = min(-3); @mx = max(5); "
			    "@mx = max(9); @c = count(); @c = count(); @su = sum(10); @su = sum(-3); "
			    "@st = stats(4); @st = stats(8); }",
			0, true) == 0);
	CHECK(sess_run_begin(&s) == 0);
	int64_t hv[] = { 0, 1, 2, 3, 1000, -5 };
	for (unsigned i = 0; i < DT_ARRAY_SIZE(hv); i++) {
		k[1] = dt_hist_bucket(hv[i], 0);
		CHECK_EQ_INT(percpu_word(&s, "@h", k, 1, 0), hv[i] == 2 || hv[i] == 3 ? 2 : 1);
	}
	k[1] = 3; /* 5 -> 1 + 5/2 */
	CHECK_EQ_INT(percpu_word(&s, "@l", k, 1, 0), 1);
	k[1] = 0;
	CHECK_EQ_INT(percpu_word(&s, "@l", k, 1, 0), 1);
	k[1] = dt_lhist_nbuckets(0, 10, 2) - 1;
	CHECK_EQ_INT(percpu_word(&s, "@l", k, 1, 0), 1);
	k[1] = 5; /* 9 -> 1 + 9/2 */
	CHECK_EQ_INT(percpu_word(&s, "@l", k, 1, 0), 1);
	k[1] = 0;
	CHECK_EQ_INT(percpu_word(&s, "@a", k, 2, 0), 6);
	CHECK_EQ_INT(percpu_word(&s, "@a", k, 2, 1), 2);
	CHECK_EQ_INT(percpu_word(&s, "@mn", k, 2, 0), -3);
	CHECK_EQ_INT(percpu_word(&s, "@mx", k, 2, 0), 9);
	CHECK_EQ_INT(percpu_word(&s, "@c", k, 1, 0), 2);
	CHECK_EQ_INT(percpu_word(&s, "@su", k, 1, 0), 7);
	CHECK_EQ_INT(percpu_word(&s, "@st", k, 4, 0), 2);
	CHECK_EQ_INT(percpu_word(&s, "@st", k, 4, 1), 12);
	CHECK_EQ_INT(percpu_word(&s, "@st", k, 4, 2), 4);
	CHECK_EQ_INT(percpu_word(&s, "@st", k, 4, 3), 8);
	sess_close(&s);
}

static void events(void)
{
	sess s;

	T_SKIP_UNLESS_ROOT();
	CHECK(sess_load(&s, "BEGIN { printf(\"x=%d s=%s\\n\", 42, \"hi\"); time(\"%H\\n\"); "
			    "@m[1] = 2; print(@m); clear(@m); zero(@m); exit(); @after = 1; }",
			0, true) == 0);
	CHECK(sess_run_begin(&s) == 0);
	sess_events(&s);
	CHECK_EQ_INT(s.nev, 6);
	if (s.nev >= 6) {
		struct dt_event_hdr h;
		long long v;

		memcpy(&h, s.ev[0], 8);
		CHECK_EQ_INT(h.kind, DT_EV_PRINTF);
		CHECK_EQ_INT(s.ev_len[0], 8 + s.prog->events[0].args->size);
		memcpy(&v, s.ev[0] + 8, 8);
		CHECK_EQ_INT(v, 42);
		CHECK_EQ_STR((char *)s.ev[0] + 16, "hi");
		memcpy(&h, s.ev[1], 8);
		CHECK_EQ_INT(h.kind, DT_EV_TIME);
		memcpy(&h, s.ev[2], 8);
		CHECK_EQ_INT(h.kind, DT_EV_PRINT_MAP);
		memcpy(&h, s.ev[3], 8);
		CHECK_EQ_INT(h.kind, DT_EV_CLEAR_MAP);
		memcpy(&h, s.ev[4], 8);
		CHECK_EQ_INT(h.kind, DT_EV_ZERO_MAP);
		memcpy(&h, s.ev[5], 8);
		CHECK_EQ_INT(h.kind, DT_EV_EXIT);
	}
	CHECK_EQ_INT(get_scalar(&s, "@after"), -999999);
	sess_close(&s);
}

static void delete_and_builtins(void)
{
	sess s;
	int found;
	char comm[16] = { 0 };

	T_SKIP_UNLESS_ROOT();
	CHECK(sess_load(&s, "BEGIN { @d[1] = 1; @d[2] = 2; delete(@d[1]); @p = pid; @t = tid; "
			    "@c[comm] = 1; @hd[1] = hist(3); delete(@hd[1]); }",
			0, true) == 0);
	CHECK(sess_run_begin(&s) == 0);
	get_int(&s, "@d", 1, &found);
	CHECK(!found);
	CHECK_EQ_INT(get_int(&s, "@d", 2, &found), 2);
	CHECK(found);
	CHECK_EQ_INT(get_scalar(&s, "@p"), getpid());
	CHECK_EQ_INT(get_scalar(&s, "@t"), getpid());
	{
		unsigned char k[64] = { 0 };
		long long v = 0;
		FILE *f = fopen("/proc/self/comm", "r");

		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
		memcpy(k, comm, strlen(comm));
		CHECK(bpf_map_lookup_elem(map_fd_named(&s, "@c"), k, &v) == 0);
		CHECK_EQ_INT(v, 1);
	}
	sess_events(&s);
	CHECK_EQ_INT(s.nev, 1);
	if (s.nev == 1) {
		struct dt_event_hdr h;

		memcpy(&h, s.ev[0], 8);
		CHECK_EQ_INT(h.kind, DT_EV_DELETE_KEY);
		CHECK_EQ_INT(s.ev_len[0], 16);
	}
	sess_close(&s);
}

/* ------------------------------------------------------------ load-only */

static const char *const load_scripts[] = {
	"profile:hz:99 { @[kstack] = count(); }",
	"profile:hz:99 { @[ustack] = count(); }",
	"profile:hz:99 { @[ustack(5), kstack(3)] = count(); }",
	"profile:hz:99 { @[ustack_dwarf] = count(); }",
	"profile:hz:99 /pid == 1/ { @[kstack, ustack_dwarf] = count(); }",
	"profile:hz:99 /comm == \"bash\"/ { @[comm, tid] = count(); }",
	"interval:ms:100 { printf(\"%d %d\\n\", nsecs, elapsed); }",
	"interval:s:1 { print(@x); @x = count(); }",
	"software:cpu-clock:1000000 { @[cpu] = count(); }",
	"uprobe:/bin/bash:readline { @[arg0] = count(); printf(\"%s\\n\", str(arg1)); }",
	"uprobe:/bin/bash:readline { @s[str(arg0, 8)] = count(); }",
	"uprobe:/bin/bash:readline { @s[str(arg0, arg1)] = count(); $n = arg2 & 0xff; @t[str(arg0, $n)] = count(); }",
	"uprobe:/bin/bash:readline /str(arg0) == \"ls\" && comm != \"zsh\"/ { @[tid] = stats(arg1 - arg2); }",
	/* Stack pressure: big keys and many live values (scratch, or a retry with less stack). */
	"uprobe:/bin/bash:readline { $a = str(arg0); $b = str(arg1); $c = str(arg2); "
	"@[$a, $b, $c, comm] = count(); @x[$c, $b, $a] = count(); printf(\"%s %s %s %d %d %d %d "
	"%d %d %d %d %d %d %d\\n\", $a, $b, $c, nsecs, nsecs, nsecs, nsecs, nsecs, nsecs, nsecs, "
	"nsecs, nsecs, nsecs, nsecs); }",
	"uretprobe:/bin/bash:readline { @r = hist(retval); @l = lhist(retval, 0, 100, 10); }",
	"uprobe:/bin/bash:readline { @[usym(arg0)] = count(); @k[ksym(arg1)] = count(); }",
	"uprobe:/bin/bash:readline { @[func] = count(); @p[probe] = count(); }",
	"uprobe:/bin/bash:readline { @[ustack_dwarf(16)] = count(); }",
	"kprobe:do_nanosleep { @[func] = count(); @a = avg(arg1); }",
	"kretprobe:do_nanosleep { @ret = stats(retval); }",
	"tracepoint:syscalls:sys_enter_openat { @[str(args->filename)] = count(); }",
	"tracepoint:sched:sched_switch { @[args->prev_comm] = count(); @pid = max(args->next_pid); }",
	"tracepoint:sched:sched_process_exec { printf(\"%s %d\\n\", args->filename, args->pid); }",
	"tracepoint:sched:sched_switch { @[kstack, comm] = count(); }",
	"tracepoint:sched:sched_switch { @[ustack_dwarf] = count(); }",
	"profile:hz:49 { @[uid, gid, cgroup] = count(); @r = rand; @t = curtask; }",
	"profile:hz:49 { printf(\"%s %s %s %s %s %s\\n\", comm, comm, comm, comm, comm, comm); }",
	"profile:hz:49 { @big[comm, comm, comm, comm, comm, comm, comm] = count(); }",
	"profile:hz:49 { $s = \"a long-ish string value that fills space\"; @q[$s, $s, $s] = sum(1); }",
	"profile:hz:49 { @m[tid] = nsecs; if (@m[tid] > 5) { delete(@m[tid]); } }",
	"profile:hz:49 { @x[1] = 1; @y = @x[1] * 2; $z = @y; @w[$z] = $z > 1 ? \"big\" : \"small\"; }",
	"profile:hz:49 { @c = count(); if (pid == 1) { exit(); } }",
	"profile:hz:49 { @u = 0; unroll(3) { @u = @u + 1; } @v++; @v--; ++@v; }",
	"profile:hz:49 { $x = 10; $x += 5; $x *= 2; $x /= 3; $x %= 7; $x <<= 2; $x >>= 1; @x = $x; }",
	"profile:hz:49 { @t[(1, \"x\")] = 1; @tt = (1, comm); }",
	"profile:hz:49 { @t = 1; print(@t); print(5); print(comm); }",
	"BEGIN { printf(\"hello\\n\"); } END { printf(\"bye\\n\"); }",
	"BEGIN { @start = nsecs; } interval:s:1 { @d = nsecs - @start; }",
	"profile:hz:49 { unroll(20) { @[comm, \"abcdefghijklmnopqrstuvwxyz\"] = count(); printf(\"%s %s\\n\", comm, probe); } }",
	"interval:ms:100 { @e = elapsed; @h = hist(elapsed); print(@h); }",
	"hardware:cycles:100000 { @[ustack] = count(); }",
	"uprobe:/bin/bash:readline { @[ustack_dwarf, func] = count(); @n[ustack_dwarf(8)] = sum(arg2); }",
	"tracepoint:sched:sched_switch { @prio[args->prev_prio, args->next_comm] = lhist(args->prev_prio, 0, 140, 10); }",
	"tracepoint:syscalls:sys_enter_openat /args->flags & 1/ { printf(\"%s %d\\n\", str(args->filename), args->dfd); }",
	"profile:hz:49 { @x[comm]++; if (@x[comm] > 100) { clear(@x); } }",
	"profile:hz:49 { $a = pid; $b = $a % 10 == 0 && $a / 10 > 5 || !($a & 1); @r[$b] = min($a); @s[$b] = max(-$a); }",
};

static void load_all(void)
{
	T_SKIP_UNLESS_ROOT();
	for (unsigned i = 0; i < DT_ARRAY_SIZE(load_scripts); i++) {
		bool ok = load_ok(load_scripts[i]);

		if (!ok)
			fprintf(stderr, "FAILED: %s\n", load_scripts[i]);
		CHECK(ok);
	}
}

static void pid_filter(void)
{
	sess s;

	T_SKIP_UNLESS_ROOT();
	CHECK(sess_load(&s, "profile:hz:99 { @[ustack] = count(); }", 1234, true) == 0);
	/* bpf_get_current_pid_tgid, then tgid compared with 1234 (LLVM may compare the whole
	 * u64 against 1234 << 32 instead of shifting). */
	CHECK(s.res && s.res->asm_text && strstr(s.res->asm_text, "call 14"));
	CHECK(s.res && s.res->asm_text && (strstr(s.res->asm_text, " 1234 ") ||
					    strstr(s.res->asm_text, "0x4d200000000")));
	CHECK(s.res && s.res->ir && strstr(s.res->ir, "llvm.bpf.pseudo"));
	sess_close(&s);
}

static void dwarf_split(void)
{
	sess s;

	T_SKIP_UNLESS_ROOT();
	CHECK(sess_load(&s, "profile:hz:99 /pid == 1/ { @[ustack_dwarf] = count(); }", 0, true) ==
	      0);
	CHECK(s.res && s.res->nprogs == 2);
	if (s.res && s.res->nprogs == 2) {
		CHECK(!s.res->progs[0].is_continuation);
		CHECK(s.res->progs[1].is_continuation);
		CHECK_EQ_INT(s.res->progs[0].cont_slot, 0);
		CHECK(strstr(s.res->asm_text, "call 12") != NULL); /* bpf_tail_call */
	}
	sess_close(&s);
}

/* Appends to a growing script buffer. */
static void put(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(*buf + *len, *cap - *len, fmt, ap);
		va_end(ap);
		if ((size_t)n < *cap - *len)
			break;
		*cap = *cap * 2 + (size_t)n;
		*buf = xrealloc(*buf, *cap);
	}
	*len += (size_t)n;
}

/* A probe too large for one program runs in parts joined by tail calls (cg_split.c): large
 * if/else bodies, nested ifs, unroll and a string $variable span the parts, each statement
 * runs under the branch it was written in, and a return in a later part ends the probe. */
static void split_probe_runs(void)
{
	enum { N = 300 };
	size_t len = 0, cap = 4096;
	char *text = xmalloc(cap);
	long long x = 1, v[N];
	int found;
	sess s;

	T_SKIP_UNLESS_ROOT();
	put(&text, &len, &cap, "BEGIN {\n$x = 1;\n$s = \"part\";\nif (pid > 0) {\n");
	for (int i = 0; i < N; i++) {
		put(&text, &len, &cap, "@v[%d] = $x; $x = $x + %d;\n", i, i % 7);
		v[i] = x;
		x += i % 7;
	}
	put(&text, &len, &cap, "if ($x > 10) {\n");
	for (int i = 0; i < N; i++)
		put(&text, &len, &cap, "@w[%d] = $x + %d;\n", i, i);
	put(&text, &len, &cap, "} else {\n@never_inner = 1;\n}\n} else {\n");
	for (int i = 0; i < N; i++)
		put(&text, &len, &cap, "@never[%d] = 1;\n", i);
	put(&text, &len, &cap, "}\nunroll(2) {\n");
	for (int i = 0; i < N / 2; i++)
		put(&text, &len, &cap, "$x = $x + 1; @u[$x] = %d;\n", i);
	put(&text, &len, &cap, "}\n@str[$s] = $x;\n@final = $x;\nif (@final > 0) { return; }\n"
		"@after = 1;\n}\n");
	CHECK(sess_load(&s, text, 0, false) == 0);
	CHECK(s.res && s.res->nprogs > 2);
	CHECK(sess_run_begin(&s) == 0);
	for (int i = 0; i < N; i++)
		CHECK_EQ_INT(get_int(&s, "@v", (uint64_t)i, &found), v[i]);
	for (int i = 0; i < N; i++)
		CHECK_EQ_INT(get_int(&s, "@w", (uint64_t)i, &found), x + i);
	get_int(&s, "@never", 0, &found);
	CHECK(!found);
	CHECK_EQ_INT(get_scalar(&s, "@never_inner"), -999999);
	for (int i = 0; i < N; i++)
		CHECK_EQ_INT(get_int(&s, "@u", (uint64_t)(x + 1 + i), &found), i % (N / 2));
	x += N;
	CHECK_EQ_INT(get_scalar(&s, "@final"), x);
	{
		unsigned char key[64] = "part";
		long long val = 0;
		int fd = map_fd_named(&s, "@str");

		CHECK(fd >= 0 && bpf_map_lookup_elem(fd, key, &val) == 0 && val == x);
	}
	CHECK_EQ_INT(get_scalar(&s, "@after"), -999999);
	sess_close(&s);
	free(text);
}

/* One program may reference 64 maps: a probe writing 150 runs in parts, every map written. */
static void split_by_maps(void)
{
	size_t len = 0, cap = 4096;
	char *text = xmalloc(cap);
	sess s;

	T_SKIP_UNLESS_ROOT();
	put(&text, &len, &cap, "BEGIN {\n");
	for (int i = 0; i < 150; i++)
		put(&text, &len, &cap, "@m%d = %d;\n", i, i + 1);
	put(&text, &len, &cap, "}\n");
	CHECK(sess_load(&s, text, 0, false) == 0);
	CHECK(s.res && s.res->nprogs >= 3);
	CHECK(sess_run_begin(&s) == 0);
	for (int i = 0; i < 150; i++) {
		char name[16];

		snprintf(name, sizeof(name), "@m%d", i);
		CHECK_EQ_INT(get_scalar(&s, name), i + 1);
	}
	sess_close(&s);
	free(text);
}


int main(void)
{
	vlog = malloc(LOG_SIZE);
	T_RUN(arith);
	T_RUN(control);
	T_RUN(strings);
	T_RUN(unrolled_temps);
	T_RUN(aggregations);
	T_RUN(events);
	T_RUN(delete_and_builtins);
	T_RUN(load_all);
	T_RUN(pid_filter);
	T_RUN(dwarf_split);
	T_RUN(split_probe_runs);
	T_RUN(split_by_maps);
	free(vlog);
	dt_codegen_shutdown();
	return t_done();
}
