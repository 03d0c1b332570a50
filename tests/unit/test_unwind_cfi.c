/* test_unwind_cfi.c — the CFI parser (unwind/cfi.c) rule by rule on hand-assembled .eh_frame
 * bytes, its errors on malformed input, the rule set's deduplication, and the golden `-d unwind`
 * rendering of tests/golden/unwind/cfi_kinds.S (linked at test time; DT_UPDATE_GOLDEN=1 rewrites
 * the expected file). */
#include "tests/unit/t.h"
#include "common/common.h"
#include "unwind/unwind.h"
#include "unwind/unwind_internal.h"

#include <errno.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- an .eh_frame builder */

typedef struct ehb {
	uint8_t b[4096];
	size_t n;
} ehb;

static void put(ehb *e, const void *p, size_t n)
{
	memcpy(e->b + e->n, p, n);
	e->n += n;
}

static void put32(ehb *e, uint32_t v)
{
	put(e, &v, 4);
}

/* CIE at offset 0: "zR", code 1, data -8, ra 16, pcrel|sdata4; CFA rsp+8, ra at cfa-8;
 * `sig` adds the 'S' augmentation. */
static void cie(ehb *e, bool sig)
{
	static const uint8_t body[] = {1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1};
	static const uint8_t body_s[] = {1, 'z', 'R', 'S', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1};
	const uint8_t *bb = sig ? body_s : body;
	size_t bn = sig ? sizeof(body_s) : sizeof(body);
	size_t len = 4 + bn, pad = (4 - len % 4) % 4;

	put32(e, (uint32_t)(len + pad));
	put32(e, 0);
	put(e, bb, bn);
	while (pad--)
		e->b[e->n++] = 0; /* DW_CFA_nop */
}

/* An FDE for [pc, pc + range) with the given instructions (the section is at address 0). */
static void fde(ehb *e, uint32_t pc, uint32_t range, const uint8_t *insns, size_t n)
{
	size_t start = e->n, len = 4 + 4 + 4 + 1 + n, pad = (4 - len % 4) % 4;

	put32(e, (uint32_t)(len + pad));
	put32(e, (uint32_t)(start + 4)); /* CIE pointer: back to offset 0 */
	put32(e, pc - (uint32_t)(e->n));  /* pcrel */
	put32(e, range);
	e->b[e->n++] = 0;                 /* augmentation data length */
	put(e, insns, n);
	while (pad--)
		e->b[e->n++] = 0;
}

/* Parses one FDE and renders its rows as "pc:rule;" text. */
static int render_fde(const uint8_t *insns, size_t n, bool sig, char *out, size_t len, char *err)
{
	dt_ruleset rs;
	dt_rows rows = {0};
	ehb e = {0};
	size_t o = 0;
	uint32_t i;
	int ret;

	cie(&e, sig);
	fde(&e, 0x1000, 0x40, insns, n);
	put32(&e, 0);
	dt_ruleset_init(&rs);
	ret = dt_cfi_parse(e.b, e.n, 0, true, &rs, &rows, err, 256);
	out[0] = 0;
	for (i = 0; ret == 0 && i < rows.n; i++) {
		char r[96];

		dt_rule_format(&rs.rules[rows.rule[i]], r, sizeof(r));
		o += snprintf(out + o, len - o, "%x:%s;", rows.pc[i], rows.rule[i] ? r : "-");
	}
	dt_rows_fini(&rows);
	dt_ruleset_fini(&rs);
	return ret;
}

#define EXPECT_ROWS(insns, sig, want)                                                         \
	do {                                                                                  \
		char out[2048], err[256] = "";                                                \
		int r_ = render_fde(insns, sizeof(insns), sig, out, sizeof(out), err);       \
		CHECK_EQ_INT(r_, 0);                                                          \
		if (r_)                                                                       \
			fprintf(stderr, "  error: %s\n", err);                                \
		CHECK_EQ_STR(out, want);                                                      \
	} while (0)

static void rsp_offsets(void)
{
	/* def_cfa_offset 16; advance 1; def_cfa_offset 24; advance_loc1 0x20; def_cfa_offset 8 */
	static const uint8_t p[] = {0x0e, 16, 0x41, 0x0e, 24, 0x02, 0x20, 0x0e, 8};

	EXPECT_ROWS(p, false,
		    "1000:cfa=rsp+16  rip=[cfa-8]  rbp=same;"
		    "1001:cfa=rsp+24  rip=[cfa-8]  rbp=same;"
		    "1021:cfa=rsp+8  rip=[cfa-8]  rbp=same;"
		    "1040:-;");
}

static void rbp_frame_and_state(void)
{
	/* adv 1; def_cfa_offset 16; offset rbp 2; adv 3; def_cfa_register rbp; adv 4;
	 * remember; adv 1; def_cfa rsp 8; restore rbp; adv 1; restore_state */
	static const uint8_t p[] = {0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6, 0x44, 0x0a, 0x41,
				    0x0c, 7, 8, 0xc6, 0x41, 0x0b};

	EXPECT_ROWS(p, false,
		    "1000:cfa=rsp+8  rip=[cfa-8]  rbp=same;"
		    "1001:cfa=rsp+16  rip=[cfa-8]  rbp=[cfa-16];"
		    "1004:cfa=rbp+16  rip=[cfa-8]  rbp=[cfa-16];"
		    "1009:cfa=rsp+8  rip=[cfa-8]  rbp=same;"
		    "100a:cfa=rbp+16  rip=[cfa-8]  rbp=[cfa-16];"
		    "1040:-;");
}

static void extended_and_sf_forms(void)
{
	/* def_cfa_sf rsp -2 (factored: +16); offset_extended_sf rbp -3 (factored: +24);
	 * advance_loc2 0x20; def_cfa_offset_sf -4 (+32); GNU_args_size 16; same_value rbp */
	static const uint8_t p[] = {0x12, 7, 0x7e, 0x11, 6, 0x7d, 0x03, 0x20, 0x00, 0x13, 0x7c,
				    0x2e, 16, 0x08, 6};

	EXPECT_ROWS(p, false,
		    "1000:cfa=rsp+16  rip=[cfa-8]  rbp=[cfa+24];"
		    "1020:cfa=rsp+32  rip=[cfa-8]  rbp=same;"
		    "1040:-;");
}

static void end_of_stack(void)
{
	static const uint8_t p[] = {0x07, 16}; /* undefined rip */

	EXPECT_ROWS(p, false, "1000:cfa=end  rip=undef;1040:-;");
}

static void plt_expression(void)
{
	static const uint8_t p[] = {0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33,
				    0x24, 0x22};

	EXPECT_ROWS(p, false, "1000:cfa=plt(rsp+8,11)  rip=[cfa-8]  rbp=same;1040:-;");
}

static void realign_expressions(void)
{
	/* def_cfa r10 0 (not followable); adv 8; def_cfa_expression breg6 -8 deref;
	 * expression rbp breg6 0 */
	static const uint8_t p[] = {0x0c, 10, 0, 0x48, 0x0f, 3, 0x76, 0x78, 0x06,
				    0x10, 6, 2, 0x76, 0};

	EXPECT_ROWS(p, false, "1000:-;1008:cfa=[rbp-8]  rip=[cfa-8]  rbp=[rbp+0];1040:-;");
}

static void rbx_based_cfa(void)
{
	/* ld.so's _dl_runtime_resolve: adv 1; def_cfa_offset 16; offset rbx 2 (cfa-16); adv 3;
	 * def_cfa_register rbx; adv 4; register rbx moved (rule 0x09: lost); adv 1; offset rbx
	 * 255 (cfa-2040: too far for arg, lost); adv 1; offset rbx 254; adv 1; restore rbx */
	static const uint8_t p[] = {0x41, 0x0e, 16, 0x83, 2, 0x43, 0x0d, 3, 0x44, 0x09, 3, 12,
				    0x41, 0x83, 0xff, 0x01, 0x41, 0x83, 0xfe, 0x01, 0x41, 0xc3};

	EXPECT_ROWS(p, false,
		    "1000:cfa=rsp+8  rip=[cfa-8]  rbp=same;"
		    "1001:cfa=rsp+16  rip=[cfa-8]  rbp=same  rbx=[cfa-16];"
		    "1004:cfa=rbx+16  rip=[cfa-8]  rbp=same  rbx=[cfa-16];"
		    "1008:cfa=rbx+16  rip=[cfa-8]  rbp=same  rbx=?;"
		    "100a:cfa=rbx+16  rip=[cfa-8]  rbp=same  rbx=[cfa-2032];"
		    "100b:cfa=rbx+16  rip=[cfa-8]  rbp=same;"
		    "1040:-;");
}

static void signal_frame(void)
{
	static const uint8_t p[] = {0x0e, 160, 1};

	EXPECT_ROWS(p, true, "1000:cfa=sigframe  rip=[rsp+168]  rbp=[rsp+120];1040:-;");
}

static void unfollowable_rules_fall_back(void)
{
	/* rip in a register, then val_offset: the walker cannot follow; rows say so (rule 0). */
	static const uint8_t p[] = {0x09, 16, 3, 0x44, 0x14, 16, 1};

	EXPECT_ROWS(p, false, "1000:-;"); /* equal consecutive rows merge: one gap */
}

static void expect_error(const uint8_t *b, size_t n, const char *want_substr)
{
	char err[256] = "";
	dt_ruleset rs;
	dt_rows rows = {0};
	int ret;

	dt_ruleset_init(&rs);
	ret = dt_cfi_parse(b, n, 0, true, &rs, &rows, err, sizeof(err));
	CHECK_EQ_INT(ret, -EINVAL);
	CHECK_EQ_INT(rows.n, 0);
	if (!strstr(err, want_substr)) {
		fprintf(stderr, "  error \"%s\" lacks \"%s\"\n", err, want_substr);
		CHECK(0);
	}
	dt_rows_fini(&rows);
	dt_ruleset_fini(&rs);
}

static void malformed_input(void)
{
	ehb e = {0};
	static const uint8_t bad_op[] = {0x3f};
	static const uint8_t pop_empty[] = {0x0b};
	static const uint8_t trunc_expr[] = {0x0f, 40, 0x77};
	/* Found by fuzz_unwind: an offset operand whose product with the data alignment factor
	 * (-8) overflows 64 bits (signed overflow in the interpreter until it was checked). */
	static const uint8_t huge_off[] = {0x90, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					   0x40};
	size_t first_fde, fde_len_at;

	/* Length running past the end. */
	cie(&e, false);
	put32(&e, 0x1000);
	expect_error(e.b, e.n, "past the section end");

	/* FDE whose CIE pointer points before the section. */
	e.n = 0;
	cie(&e, false);
	put32(&e, 12);
	put32(&e, 0x10000);
	put32(&e, 0);
	put32(&e, 0);
	expect_error(e.b, e.n, "CIE pointer");

	/* FDE pointing at another FDE rather than a CIE. */
	e.n = 0;
	cie(&e, false);
	first_fde = e.n;
	fde(&e, 0x1000, 0x10, bad_op, 0);
	fde_len_at = e.n;
	fde(&e, 0x2000, 0x10, bad_op, 0);
	memcpy(&e.b[fde_len_at + 4], &(uint32_t){(uint32_t)(fde_len_at + 4 - first_fde)}, 4);
	/* Only that FDE is lost: the first one's rows stay, and the error is kept as a warning. */
	{
		char err[256] = "";
		dt_ruleset rs;
		dt_rows rows = {0};

		dt_ruleset_init(&rs);
		CHECK_EQ_INT(dt_cfi_parse(e.b, e.n, 0, true, &rs, &rows, err, sizeof(err)), 0);
		CHECK_EQ_INT(rows.n, 2);
		CHECK_EQ_INT(rows.nbad, 1);
		CHECK(strstr(err, "does not point at a CIE") && strstr(err, "(1 FDE skipped)"));
		dt_rows_fini(&rows);
		dt_ruleset_fini(&rs);
	}
	/* An FDE whose CIE pointer points at itself, alone: nothing usable, an error. */
	e.n = 0;
	cie(&e, false);
	first_fde = e.n;
	fde(&e, 0x1000, 0x10, bad_op, 0);
	memcpy(&e.b[first_fde + 4], &(uint32_t){4}, 4);
	expect_error(e.b, e.n, "does not point at a CIE");

	e.n = 0;
	cie(&e, false);
	fde(&e, 0x1000, 0x10, bad_op, sizeof(bad_op));
	expect_error(e.b, e.n, "unknown CFA instruction 0x3f");

	e.n = 0;
	cie(&e, false);
	fde(&e, 0x1000, 0x10, pop_empty, sizeof(pop_empty));
	expect_error(e.b, e.n, "restore_state without remember_state");

	e.n = 0;
	cie(&e, false);
	fde(&e, 0x1000, 0x10, trunc_expr, sizeof(trunc_expr));
	expect_error(e.b, e.n, "truncated");

	e.n = 0;
	cie(&e, false);
	fde(&e, 0x1000, 0x10, huge_off, sizeof(huge_off));
	expect_error(e.b, e.n, "invalid CFA instruction");

	/* Unsupported CIE version. */
	e.n = 0;
	cie(&e, false);
	e.b[8] = 2;
	fde(&e, 0x1000, 0x10, bad_op, 0);
	expect_error(e.b, e.n, "unsupported version 2");
}

static void rules_are_shared(void)
{
	struct dt_unwind_rule a = {.cfa_kind = DT_CFA_RSP, .cfa_off = 8, .ra_kind = DT_REG_OFFSET,
				   .ra_off = -8};
	dt_ruleset rs;
	int i, x, y;

	dt_ruleset_init(&rs);
	x = dt_ruleset_intern(&rs, &a);
	y = dt_ruleset_intern(&rs, &a);
	CHECK_EQ_INT(x, 1); /* 0 is the "no CFI" rule */
	CHECK_EQ_INT(x, y);
	for (i = 0; i < DT_MAX_RULES + 10 && x >= 0; i++) {
		a.cfa_off = 16 + i;
		x = dt_ruleset_intern(&rs, &a);
	}
	CHECK_EQ_INT(x, -ENOSPC);
	CHECK_EQ_INT(rs.n, DT_MAX_RULES);
	a.cfa_off = 8;
	CHECK_EQ_INT(dt_ruleset_intern(&rs, &a), y); /* still found when full */
	dt_ruleset_fini(&rs);
}

static void golden_cfi_kinds(void)
{
	const char *expected_path = "tests/golden/unwind/cfi_kinds.expected";
	char dir[] = "/tmp/dt_cfi_golden.XXXXXX", so[128], cmd[512], *got = NULL, *want = NULL;
	size_t got_len = 0, want_len;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(so, sizeof(so), "%s/cfi_kinds.so", dir);
	/* Fixed linker layout so the addresses are stable. */
	snprintf(cmd, sizeof(cmd),
		 "cc -shared -nostdlib -Wl,--build-id=none -Wl,-z,separate-code "
		 "-Wl,--hash-style=gnu -o %s tests/golden/unwind/cfi_kinds.S", so);
	CHECK_EQ_INT(system(cmd), 0);
	f = open_memstream(&got, &got_len);
	CHECK_EQ_INT(dt_unwind_dump(so, f), 0);
	fclose(f);
	/* The summary line names the temporary path: compare from the first row to it. */
	if (got && strrchr(got, '#'))
		*strrchr(got, '#') = 0;
	if (getenv("DT_UPDATE_GOLDEN")) {
		f = fopen(expected_path, "w");
		CHECK(f != NULL);
		if (f) {
			fputs(got, f);
			fclose(f);
		}
	}
	CHECK_EQ_INT(dt_read_file(expected_path, &want, &want_len), 0);
	CHECK_EQ_STR(got, want);
	free(got);
	free(want);
	unlink(so);
	rmdir(dir);
}

static int rows_of(const char *path, dt_rows *rows)
{
	char err[512];
	dt_ruleset rs;
	int ret;

	dt_ruleset_init(&rs);
	memset(rows, 0, sizeof(*rows));
	ret = dt_cfi_build_file(path, &rs, rows, err, sizeof(err));
	if (ret < 0)
		fprintf(stderr, "  %s\n", err);
	dt_ruleset_fini(&rs);
	return ret;
}

/* The rows the unwinder builds for `path` when the session's --debuginfo DIR is `dbgdir`. */
static int rows_with_debuginfo(const char *path, const char *dbgdir, dt_rows *rows)
{
	dt_elf_cache *c = dt_elf_cache_new();
	dt_elf *e = dt_elf_open(c, path);
	char err[512];
	dt_ruleset rs;
	int ret = -ENOENT;

	dt_elf_cache_set_debug_dirs(c, &dbgdir, 1);
	dt_ruleset_init(&rs);
	memset(rows, 0, sizeof(*rows));
	if (e)
		ret = dt_cfi_build(c, e, &rs, rows, err, sizeof(err));
	dt_ruleset_fini(&rs);
	dt_elf_put(e);
	dt_elf_cache_free(c);
	return ret;
}

/* A program whose own code has only .debug_frame (crt1.o and the PLT bring .eh_frame), stripped
 * to a separate debug file named by .gnu_debuglink: the same rows as the unstripped binary; the
 * same again once the debug file is moved into the build-id tree of a --debuginfo DIR, and fewer
 * without that DIR. */
static void separate_debug_file(void)
{
	char dir[] = "/tmp/dt_cfi_dbg.XXXXXX", cmd[2048], p[256], dbgdir[256];
	dt_rows full, linked, alone, from_dir;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && printf 'int g(int x){return x*3;}\\nint f(int x){return g(x)+1;}\\n"
		 "int main(void){return f(2);}\\n' > p.c && "
		 "cc -O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables -o p p.c && "
		 "objcopy --only-keep-debug p p.debug && "
		 "objcopy --strip-debug --add-gnu-debuglink=p.debug p p.stripped", dir);
	CHECK_EQ_INT(system(cmd), 0);
	snprintf(p, sizeof(p), "%s/p", dir);
	CHECK_EQ_INT(rows_of(p, &full), 0);
	snprintf(p, sizeof(p), "%s/p.stripped", dir);
	CHECK_EQ_INT(rows_of(p, &linked), 0);
	CHECK_EQ_INT(linked.n, full.n);
	CHECK(linked.n == full.n && !memcmp(linked.pc, full.pc, full.n * 4) &&
	      !memcmp(linked.rule, full.rule, full.n * 2));
	snprintf(cmd, sizeof(cmd), "cd %s && id=$(readelf -n p | awk '/Build ID/ { print $3 }') && "
		 "d=dbg/.build-id/$(echo $id | cut -c1-2) && mkdir -p $d && "
		 "mv p.debug $d/$(echo $id | cut -c3-).debug", dir);
	CHECK_EQ_INT(system(cmd), 0);
	CHECK_EQ_INT(rows_of(p, &alone), 0);
	CHECK(alone.n > 0 && alone.n < full.n);
	snprintf(dbgdir, sizeof(dbgdir), "%s/dbg", dir);
	CHECK_EQ_INT(rows_with_debuginfo(p, dbgdir, &from_dir), 0);
	CHECK(from_dir.n == full.n && !memcmp(from_dir.pc, full.pc, full.n * 4) &&
	      !memcmp(from_dir.rule, full.rule, full.n * 2));
	dt_rows_fini(&full);
	dt_rows_fini(&linked);
	dt_rows_fini(&alone);
	dt_rows_fini(&from_dir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_EQ_INT(system(cmd), 0);
}

static void dump_errors(void)
{
	FILE *f = fopen("/dev/null", "w");

	CHECK(dt_unwind_dump("/nonexistent/libfoo.so", f) < 0);
	CHECK_EQ_INT(dt_unwind_dump("tests/unit/t.h", f), -EINVAL);
	fclose(f);
}

int main(void)
{
	T_RUN(rsp_offsets);
	T_RUN(rbp_frame_and_state);
	T_RUN(extended_and_sf_forms);
	T_RUN(end_of_stack);
	T_RUN(plt_expression);
	T_RUN(realign_expressions);
	T_RUN(rbx_based_cfa);
	T_RUN(signal_frame);
	T_RUN(unfollowable_rules_fall_back);
	T_RUN(malformed_input);
	T_RUN(rules_are_shared);
	T_RUN(golden_cfi_kinds);
	T_RUN(separate_debug_file);
	T_RUN(dump_errors);
	return t_done();
}
