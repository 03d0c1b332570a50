/* test_lang_usdt.c — USDT argument text (lang/usdt.c): every x86-64 operand form a compiler
 * writes into an SDT note, sizes and signs, the registers of every width mapped to pt_regs,
 * and the forms that are refused (segment-relative, an unknown register, a bad size). And the
 * notes of a real object (elfproc/usdt.c) on the usdt_target test program, when built. */
#include "lang/lang.h"
#include "elfproc/elfproc.h"
#include "common/common.h"
#include "tests/unit/t.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static dt_usdt_arg *parse(dt_arena *a, const char *spec, uint32_t *n, int *rc, const char **bad)
{
	dt_usdt_arg *args = NULL;

	*rc = dt_usdt_args_parse(a, spec, &args, n, bad);
	return args;
}

static void operand_forms(void)
{
	dt_arena *a = dt_arena_new();
	const char *bad;
	uint32_t n;
	int rc;
	dt_usdt_arg *v = parse(a, "-4@$-5 2@$65534 -8@%rax 4@%ecx 1@%ah -1@%r9b 2@%r10w "
			       "-8@-16(%rbp) 4@8(%rsp,%rdx,4) -8@dtt_counter+8(%rip) 8@(%rbx)",
			       &n, &rc, &bad);

	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_INT(n, 11);
	CHECK(v[0].kind == DT_USDT_CONST && v[0].value == -5 && v[0].size == 4 && v[0].is_signed);
	CHECK(v[1].kind == DT_USDT_CONST && v[1].value == 65534 && v[1].size == 2 &&
	      !v[1].is_signed);
	CHECK(v[2].kind == DT_USDT_REG && v[2].reg == dt_reg_offset("ax") && v[2].size == 8);
	CHECK(v[3].kind == DT_USDT_REG && v[3].reg == dt_reg_offset("cx") && v[3].size == 4);
	CHECK(v[4].kind == DT_USDT_REG && v[4].reg == dt_reg_offset("ax") && v[4].reg_shift == 8);
	CHECK(v[5].kind == DT_USDT_REG && v[5].reg == dt_reg_offset("r9") && v[5].is_signed);
	CHECK(v[6].kind == DT_USDT_REG && v[6].reg == dt_reg_offset("r10") && v[6].size == 2);
	CHECK(v[7].kind == DT_USDT_MEM && v[7].reg == dt_reg_offset("bp") && v[7].value == -16 &&
	      v[7].index == -1);
	CHECK(v[8].kind == DT_USDT_MEM && v[8].reg == dt_reg_offset("sp") && v[8].value == 8 &&
	      v[8].index == dt_reg_offset("dx") && v[8].scale == 4);
	CHECK(v[9].kind == DT_USDT_MEM && v[9].reg == dt_reg_offset("ip") && v[9].sym &&
	      !strcmp(v[9].sym, "dtt_counter") && v[9].value == 8);
	CHECK(v[10].kind == DT_USDT_MEM && v[10].reg == dt_reg_offset("bx") && v[10].value == 0);
	v = parse(a, "", &n, &rc, &bad);
	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_INT(n, 0);
	/* An old note without sizes: 64-bit. */
	v = parse(a, "%rdi", &n, &rc, &bad);
	CHECK(rc == 0 && n == 1 && v[0].size == 8 && v[0].reg == dt_reg_offset("di"));
	dt_arena_free(a);
}

static void refused_forms(void)
{
	static const char *const cases[][2] = {
		{ "8@%fs:-8", "8@%fs:-8" },            /* TLS: segment-relative */
		{ "4@%eax 8@%xmm0", "8@%xmm0" },       /* not a general register */
		{ "3@%eax", "3@%eax" },                /* no such size */
		{ "8@8(%rip)", "8@8(%rip)" },          /* %rip without a symbol */
		{ "8@sym(%rax)", "8@sym(%rax)" },      /* a symbol not %rip-relative */
		{ "8@(%rax,%rbx,3)", "8@(%rax,%rbx,3)" }, /* no such scale */
		{ "8@0x1000", "8@0x1000" },            /* an absolute address */
		{ "8@%r16", "8@%r16" },
	};
	dt_arena *a = dt_arena_new();

	for (size_t i = 0; i < DT_ARRAY_SIZE(cases); i++) {
		const char *bad = NULL;
		uint32_t n;
		int rc;

		parse(a, cases[i][0], &n, &rc, &bad);
		CHECK_EQ_INT(rc, -EINVAL);
		CHECK(bad && !strncmp(bad, cases[i][1], strlen(cases[i][1])));
	}
	dt_arena_free(a);
}

struct seen {
	int regs, twice, guarded;
	uint64_t guarded_sema_off;
};

static int note_cb(void *ctx, const dt_elf_usdt *u)
{
	struct seen *s = ctx;

	if (strcmp(u->provider, "dtt"))
		return 0;
	if (!strcmp(u->name, "regs") && !strcmp(u->args, "-8@%rax 4@%ecx -2@%dx 1@%bl -1@%r9b"))
		s->regs++;
	if (!strcmp(u->name, "twice"))
		s->twice++;
	if (!strcmp(u->name, "guarded") && u->sema) {
		s->guarded++;
		s->guarded_sema_off = u->sema_offset;
	}
	return 0;
}

static void notes_of_target(void)
{
	const char *path = DT_TEST_BUILD_DIR "/tests/targets/usdt_target_nofp";
	struct seen s = { 0 };
	dt_elf *e;

	if (access(path, R_OK) != 0) {
		t_case_failed = -1; /* not built here (no <sys/sdt.h>) */
		return;
	}
	e = dt_elf_open(NULL, path);
	CHECK(e != NULL);
	if (!e)
		return;
	dt_elf_usdt_each(e, note_cb, &s);
	CHECK_EQ_INT(s.regs, 1);
	CHECK_EQ_INT(s.twice, 2);
	CHECK_EQ_INT(s.guarded, 1);
	CHECK(s.guarded_sema_off != 0);
	dt_elf_put(e);
}

static int first_pc(void *ctx, const dt_elf_usdt *u)
{
	if (strcmp(u->name, "guarded"))
		return 0;
	((uint64_t *)ctx)[0] = u->pc;
	((uint64_t *)ctx)[1] = u->sema;
	return 1;
}

/* A prelinked object: .stapsdt.base moved by -0x10 from where the notes say it was, so every
 * pc and semaphore moves by as much (the section header of a copy is edited with libelf). */
static void prelinked_base(void)
{
	const char *path = DT_TEST_BUILD_DIR "/tests/targets/usdt_target_nofp";
	char tmp[] = "/tmp/dt_usdt_prelinkXXXXXX", cmd[512];
	uint64_t before[2] = { 0 }, after[2] = { 0 };
	dt_elf *e;
	int fd;

	if (access(path, R_OK) != 0) {
		t_case_failed = -1;
		return;
	}
	e = dt_elf_open(NULL, path);
	CHECK(e != NULL);
	if (!e)
		return;
	dt_elf_usdt_each(e, first_pc, before);
	dt_elf_put(e);
	fd = mkstemp(tmp);
	CHECK(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp %s %s", path, tmp);
	CHECK_EQ_INT(system(cmd), 0);
	elf_version(EV_CURRENT);
	fd = open(tmp, O_RDWR);
	Elf *w = elf_begin(fd, ELF_C_RDWR, NULL);
	size_t shstrndx = 0;
	Elf_Scn *scn = NULL;
	bool moved = false;

	elf_getshdrstrndx(w, &shstrndx);
	elf_flagelf(w, ELF_C_SET, ELF_F_LAYOUT);
	while ((scn = elf_nextscn(w, scn))) {
		GElf_Shdr sh;

		gelf_getshdr(scn, &sh);
		if (!strcmp(elf_strptr(w, shstrndx, sh.sh_name), ".stapsdt.base")) {
			sh.sh_addr -= 0x10;
			gelf_update_shdr(scn, &sh);
			elf_flagshdr(scn, ELF_C_SET, ELF_F_DIRTY);
			moved = true;
		}
	}
	CHECK(moved);
	CHECK(elf_update(w, ELF_C_WRITE) >= 0);
	elf_end(w);
	close(fd);
	e = dt_elf_open(NULL, tmp);
	CHECK(e != NULL);
	if (e) {
		dt_elf_usdt_each(e, first_pc, after);
		dt_elf_put(e);
	}
	if (getenv("DT_TEST_VERBOSE"))
		fprintf(stderr, "pc %#lx -> %#lx, sema %#lx -> %#lx\n", (unsigned long)before[0],
			(unsigned long)after[0], (unsigned long)before[1], (unsigned long)after[1]);
	CHECK(before[0] != 0 && before[1] != 0);
	CHECK(after[0] == before[0] - 0x10);
	CHECK(after[1] == before[1] - 0x10);
	if (!getenv("DT_TEST_KEEP"))
		unlink(tmp);
}

int main(void)
{
	T_RUN(operand_forms);
	T_RUN(refused_forms);
	T_RUN(notes_of_target);
	T_RUN(prelinked_base);
	return t_done();
}
