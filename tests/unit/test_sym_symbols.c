/* test_sym_symbols.c — symbolization against real processes and the real kernel. A tiny target
 * program is compiled at test time twice (-no-pie and -pie), run, and asked to print where its
 * functions are; the symbolizer must name them (with bpftrace's decimal offsets), and the -no-pie
 * addresses must agree with `nm`. A process that exits before its addresses are resolved still
 * resolves from the snapshot taken while it lived; a deleted binary gives "[module]+0xoff";
 * anonymous memory gives "0xaddr"; the vDSO and libc resolve; kernel addresses resolve from
 * /proc/kallsyms (root). */
#include "symbols/symbols_internal.h"
#include "common/common.h"
#include "t.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static const char prog_src[] =
	"#include <stdio.h>\n"
	"#include <unistd.h>\n"
	"__attribute__((noinline)) int dt_target_alpha(int x) { return x * 3 + 1; }\n"
	"__attribute__((noinline)) int dt_target_beta(int x) { return dt_target_alpha(x) + 2; }\n"
	"int main(void)\n"
	"{\n"
	"	char c = 0;\n"
	"	printf(\"%p %p %p\\n\", (void *)dt_target_alpha, (void *)dt_target_beta,\n"
	"	       (void *)&fputs);\n"
	"	fflush(stdout);\n"
	"	if (read(0, &c, 1) < 0)\n"
	"		return 1;\n"
	"	return dt_target_beta(c) & 1;\n"
	"}\n";

static char dir[] = "/tmp/dt_symtest_XXXXXX";

/* Compiles the target once per flavour; returns the binary's path or NULL. */
static const char *build(const char *flavour)
{
	static char paths[2][128];
	char *p = paths[strcmp(flavour, "pie") == 0];
	char src[128], cmd[512];
	snprintf(src, sizeof(src), "%s/prog.c", dir);
	snprintf(p, 128, "%s/prog-%s", dir, flavour);
	if (access(p, X_OK) == 0)
		return p;
	FILE *f = fopen(src, "w");
	if (!f)
		return NULL;
	fputs(prog_src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -O0 -%s -o %s %s", flavour, p, src);
	return system(cmd) == 0 ? p : NULL;
}

struct target {
	pid_t pid;
	int in;                        /* write end of its stdin: closing it lets it exit */
	uint64_t alpha, beta, fputs_addr;
};

static int spawn(const char *path, struct target *t)
{
	int in[2], out[2];
	char line[256];
	if (pipe(in) || pipe(out))
		return -errno;
	t->pid = fork();
	if (t->pid < 0)
		return -errno;
	if (t->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	t->in = in[1];
	fcntl(t->in, F_SETFD, FD_CLOEXEC); /* a later target must not hold this one's stdin open */
	FILE *f = fdopen(out[0], "r");
	int ok = f && fgets(line, sizeof(line), f) &&
		 sscanf(line, "%" SCNx64 " %" SCNx64 " %" SCNx64, &t->alpha, &t->beta,
			&t->fputs_addr) == 3;
	if (f)
		fclose(f);
	return ok ? 0 : -EIO;
}

static void finish(struct target *t)
{
	close(t->in);
	waitpid(t->pid, NULL, 0);
}

/* `nm` address of a symbol in a binary, or 0. */
static uint64_t nm_addr(const char *path, const char *sym)
{
	char cmd[512], line[256];
	uint64_t a = 0;
	snprintf(cmd, sizeof(cmd), "nm %s", path);
	FILE *p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p)) {
		uint64_t v;
		char type, name[128];
		if (sscanf(line, "%" SCNx64 " %c %127s", &v, &type, name) == 3 && !strcmp(name, sym))
			a = v;
	}
	pclose(p);
	return a;
}

static void check_resolves(dt_symbolizer *s, const struct target *t)
{
	char buf[256];
	CHECK_EQ_INT(dt_sym_user(s, (uint32_t)t->pid, 0, t->alpha, false, buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "dt_target_alpha");
	CHECK_EQ_INT(dt_sym_user(s, (uint32_t)t->pid, 0, t->beta + 7, true, buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "dt_target_beta+7");
	CHECK_EQ_INT(dt_sym_user(s, (uint32_t)t->pid, 0, t->alpha, true, buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "dt_target_alpha+0");
	const char *mod = dt_sym_user_module(s, (uint32_t)t->pid, 0, t->alpha);
	CHECK(mod && strncmp(mod, "prog-", 5) == 0);
}

static void user_nopie(void)
{
	const char *path = build("no-pie");
	struct target t;
	CHECK(path != NULL);
	if (!path || spawn(path, &t)) {
		CHECK(!"target did not start");
		return;
	}
	/* -no-pie: run-time addresses are the link-time ones nm prints. */
	CHECK_EQ_INT(nm_addr(path, "dt_target_alpha"), t.alpha);
	CHECK_EQ_INT(nm_addr(path, "dt_target_beta"), t.beta);
	dt_symbolizer *s = dt_sym_new();
	CHECK_EQ_INT(dt_sym_note_pid(s, (uint32_t)t.pid), 0);
	check_resolves(s, &t);
	finish(&t);
	dt_sym_free(s);
}

/* PIE: loaded at a random base; the function's distance from the base is nm's address. */
static void user_pie_and_libc(void)
{
	const char *path = build("pie");
	struct target t;
	char buf[256];
	if (!path || spawn(path, &t)) {
		CHECK(!"target did not start");
		return;
	}
	uint64_t nm_alpha = nm_addr(path, "dt_target_alpha"), nm_beta = nm_addr(path, "dt_target_beta");
	CHECK(nm_alpha && t.alpha != nm_alpha);
	CHECK_EQ_INT(t.beta - t.alpha, nm_beta - nm_alpha);
	dt_symbolizer *s = dt_sym_new();
	CHECK_EQ_INT(dt_sym_note_pid(s, (uint32_t)t.pid), 0);
	check_resolves(s, &t);

	/* fputs in libc: .dynsym has _IO_fputs (global) and fputs (weak) at one address; a
	 * debug file, when installed, may name it differently, so accept what the aliases are. */
	CHECK_EQ_INT(dt_sym_user(s, (uint32_t)t.pid, 0, t.fputs_addr + 2, true, buf, sizeof(buf)), 0);
	CHECK(strcmp(buf, "_IO_fputs+2") == 0 || strcmp(buf, "fputs+2") == 0);
	const char *lib = dt_sym_user_path(s, (uint32_t)t.pid, 0, t.fputs_addr);
	CHECK(lib && strstr(lib, "libc.so"));

	/* The same object in a second process comes from the cache and still resolves. */
	struct target t2;
	size_t nobj = dt_sym_objects_loaded(s);
	CHECK(nobj >= 2); /* the program and libc */
	if (spawn(path, &t2) == 0) {
		CHECK_EQ_INT(dt_sym_note_pid(s, (uint32_t)t2.pid), 0);
		check_resolves(s, &t2);
		CHECK_EQ_INT(dt_sym_user(s, (uint32_t)t2.pid, 0, t2.fputs_addr, false, buf,
					 sizeof(buf)), 0);
		CHECK_EQ_INT(dt_sym_objects_loaded(s), nobj);
		finish(&t2);
	} else {
		CHECK(!"second target did not start");
	}
	finish(&t);
	dt_sym_free(s);
}

/* Snapshot while alive, resolve only after the process is gone (objects never opened before). */
static void exited_process(void)
{
	const char *path = build("pie");
	struct target t;
	char buf[256];
	if (!path || spawn(path, &t)) {
		CHECK(!"target did not start");
		return;
	}
	dt_symbolizer *s = dt_sym_new();
	CHECK_EQ_INT(dt_sym_note_pid(s, (uint32_t)t.pid), 0);
	finish(&t);
	CHECK(kill(t.pid, 0) != 0);
	check_resolves(s, &t);
	/* Noting it again after exit (past the 50 ms re-read window) fails but keeps the
	 * snapshot. */
	usleep(60000);
	CHECK(dt_sym_note_pid(s, (uint32_t)t.pid) < 0);
	CHECK_EQ_INT(dt_sym_user(s, (uint32_t)t.pid, 0, t.alpha + 1, true, buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "dt_target_alpha+1");
	/* A pid never seen and not running: the address itself. */
	CHECK_EQ_INT(dt_sym_user(s, 0x7ffffff0, 0, 0x1234, true, buf, sizeof(buf)), -ENOENT);
	CHECK_EQ_STR(buf, "0x1234");
	dt_sym_free(s);
}

/* Never snapshotted and gone before its addresses are resolved: a fixed-address (-no-pie)
 * executable the session traces names them (dt_sym_add_fixed_image, bpftrace's
 * ustack_elf_symtable); a PIE one cannot (its base is unknown) and stays hex. */
static void exited_before_snapshot_fixed_image(void)
{
	const char *nopie = build("no-pie"), *pie = build("pie");
	struct target t;
	char buf[256];
	if (!nopie || !pie || spawn(nopie, &t)) {
		CHECK(!"target did not start");
		return;
	}
	finish(&t);
	CHECK(kill(t.pid, 0) != 0);
	dt_symbolizer *s = dt_sym_new();
	CHECK_EQ_INT(dt_sym_user(s, (uint32_t)t.pid, 0, t.alpha, true, buf, sizeof(buf)), -ENOENT);
	dt_symbolizer *f = dt_sym_new();
	CHECK_EQ_INT(dt_sym_add_fixed_image(f, nopie), 0);
	CHECK_EQ_INT(dt_sym_add_fixed_image(f, nopie), 0); /* once is enough */
	CHECK_EQ_INT(dt_sym_add_fixed_image(f, pie), 0);   /* left out */
	CHECK_EQ_INT(dt_sym_add_fixed_image(f, "/nonexistent/dt"), -ENOENT);
	CHECK_EQ_INT(dt_sym_user(f, (uint32_t)t.pid, 0, t.beta + 7, true, buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "dt_target_beta+7");
	const char *mod = dt_sym_user_module(f, (uint32_t)t.pid, 0, t.alpha);
	CHECK(mod && strcmp(mod, "prog-no-pie") == 0);
	/* Outside its segments: still the address. */
	CHECK_EQ_INT(dt_sym_user(f, (uint32_t)t.pid, 0, 0x1234, true, buf, sizeof(buf)), -ENOENT);
	CHECK_EQ_STR(buf, "0x1234");
	dt_sym_free(f);
	dt_sym_free(s);
}

/* A process's entry point (this test's own, AT_ENTRY) is known as such: a stack of that one
 * frame is whole (the sample of a process as it starts, before its unwind tables exist). */
static void entry_point_is_known(void)
{
	dt_symbolizer *s = dt_sym_new();
	uint64_t entry = getauxval(AT_ENTRY);
	CHECK(entry != 0);
	CHECK(dt_sym_user_at_entry(s, (uint32_t)getpid(), 0, entry));
	CHECK(!dt_sym_user_at_entry(s, (uint32_t)getpid(), 0, entry + 1));
	CHECK(!dt_sym_user_at_entry(s, 0x7ffffff0, 0, entry));
	dt_sym_free(s);
}

static uint64_t procs_of(const dt_symbolizer *s)
{
	dt_sym_stats st;
	dt_sym_get_stats(s, &st);
	return st.procs;
}

/* Snapshots of exited processes are released by a census that finds nothing holding them, once
 * they were already gone at the census before (issue 10 item 7: ~5 KB per exited process were
 * kept for the whole session); one still held, or a census that could not see everything, keeps
 * them; and what was named before stays named (the strings are the symbolizer's). */
static void census_releases_exited(void)
{
	const char *path = build("pie");
	struct target a, b;
	dt_sym_frame f[DT_SYM_MAX_INLINE];
	if (!path || spawn(path, &a) || spawn(path, &b)) {
		CHECK(!"targets did not start");
		return;
	}
	dt_symbolizer *s = dt_sym_new();
	CHECK_EQ_INT(dt_sym_note_pid(s, (uint32_t)a.pid), 0);
	CHECK_EQ_INT(dt_sym_note_pid(s, (uint32_t)b.pid), 0);
	CHECK(dt_sym_user_frames(s, (uint32_t)a.pid, 0, a.alpha, false, f, DT_SYM_MAX_INLINE) > 0);
	const char *name = f[0].name, *module = f[0].module;
	CHECK_EQ_INT(procs_of(s), 2);
	/* Both alive, nothing held: running images are kept. */
	dt_sym_census_begin(s);
	CHECK_EQ_INT(dt_sym_census_end(s, true), 0);
	finish(&a);
	finish(&b);
	/* Gone: the first census that sees it gone keeps it (events it sent may still be on their
	 * way), the next releases a, while b is held. */
	dt_sym_census_begin(s);
	dt_sym_hold(s, (uint32_t)b.pid, 0);
	CHECK_EQ_INT(dt_sym_census_end(s, true), 0);
	dt_sym_census_begin(s);
	dt_sym_hold(s, (uint32_t)b.pid, 0);
	CHECK_EQ_INT(dt_sym_census_end(s, false), 0); /* incomplete: nothing released */
	dt_sym_census_begin(s);
	dt_sym_hold(s, (uint32_t)b.pid, 0);
	CHECK_EQ_INT(dt_sym_census_end(s, true), 1);
	CHECK_EQ_INT(procs_of(s), 1);
	check_resolves(s, &b); /* still held: still named */
	CHECK_EQ_STR(name, "dt_target_alpha");
	CHECK(module && strncmp(module, "prog-", 5) == 0);
	/* b no longer held: the first census finds it gone, the next releases it. */
	dt_sym_census_begin(s);
	CHECK_EQ_INT(dt_sym_census_end(s, true), 0);
	dt_sym_census_begin(s);
	CHECK_EQ_INT(dt_sym_census_end(s, true), 1);
	CHECK_EQ_INT(procs_of(s), 0);
	dt_sym_stats st;
	dt_sym_get_stats(s, &st);
	CHECK_EQ_INT(st.procs_released, 2);
	/* Their objects are no longer mapped by any snapshot: idle, kept for the next process. */
	CHECK(st.objects >= 3);
	CHECK_EQ_INT(st.objects_idle, st.objects);
	CHECK_EQ_INT(st.objects_released, 0);
	dt_sym_free(s);
}

/* Objects no snapshot maps any more are kept up to a budget (64), the ones idle longest
 * released beyond it: 80 files mapped here, then unmapped and the process snapshotted again. */
static void idle_objects_budget(void)
{
	enum { NFILES = 80 };
	uint32_t me = (uint32_t)getpid();
	void *maps[NFILES] = { 0 };
	char path[128];
	dt_sym_stats st;

	for (int i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "%s/obj%d", dir, i);
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || write(fd, "not an ELF file\n", 16) != 16) {
			CHECK(!"could not write a file");
			if (fd >= 0)
				close(fd);
			break;
		}
		maps[i] = mmap(NULL, 16, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		CHECK(maps[i] != MAP_FAILED);
	}
	dt_symbolizer *s = dt_sym_new();
	CHECK_EQ_INT(dt_sym_note_pid(s, me), 0);
	dt_sym_get_stats(s, &st);
	CHECK(st.objects >= NFILES);
	CHECK_EQ_INT(st.objects_idle, 0);
	uint64_t bound = st.objects;
	for (int i = 0; i < NFILES; i++)
		if (maps[i] && maps[i] != MAP_FAILED)
			munmap(maps[i], 16);
	CHECK_EQ_INT(dt_sym_refresh_pid(s, me), 0);
	dt_sym_get_stats(s, &st);
	CHECK_EQ_INT(st.objects_idle, 64);
	CHECK_EQ_INT(st.objects_released, NFILES - 64);
	CHECK_EQ_INT(st.objects, bound - (NFILES - 64));
	/* What this process still maps is still named. */
	char buf[256];
	CHECK_EQ_INT(dt_sym_user(s, me, 0, (uint64_t)(uintptr_t)&check_resolves + 4, true, buf,
				 sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "check_resolves+4");
	dt_sym_free(s);
}

/* A process whose maps change is read again and again (a library loaded and unloaded): each new
 * snapshot replaces the old one whole, the kernel's named pages ([vvar], [vdso]...) with it.
 * They leaked ~192 bytes a read (the 10-minute stress under ASan: 700 KB a minute under dlopen
 * churn); heap in use now stays where it was after the first reads. */
static void reread_keeps_memory_flat(void)
{
	enum { ROUNDS = 400 };
	uint32_t me = (uint32_t)getpid();
	char path[128];
	size_t base = 0;

	snprintf(path, sizeof(path), "%s/churn", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, "not an ELF file\n", 16) == 16);
	dt_symbolizer *s = dt_sym_new();
	for (int i = 0; i < ROUNDS && fd >= 0; i++) {
		void *m = mmap(NULL, 16, PROT_READ, MAP_PRIVATE, fd, 0);

		CHECK(m != MAP_FAILED);
		CHECK_EQ_INT(dt_sym_refresh_pid(s, me), 0);
		if (m != MAP_FAILED)
			munmap(m, 16);
		CHECK_EQ_INT(dt_sym_refresh_pid(s, me), 0);
		if (i == 20)
			base = mallinfo2().uordblks;
	}
	size_t now = mallinfo2().uordblks;
	/* 2 * 379 reads at ~192 bytes each would be ~145 KB; allow a tenth of that for noise. */
	CHECK(now < base + 16384);
	if (now >= base + 16384)
		fprintf(stderr, "heap in use grew from %zu to %zu over %d rereads\n", base, now,
			2 * (ROUNDS - 21));
	if (fd >= 0)
		close(fd);
	unlink(path);
	dt_sym_free(s);
}

/* The binary is deleted before the process was noted, so it can never be opened: "[module]+0xoff"
 * (the file offset). Deleted after the note, it still resolves: objects open when noted. */
static void deleted_binary(void)
{
	const char *path = build("no-pie");
	char copy[160], cmd[400], buf[256];
	struct target t;
	snprintf(copy, sizeof(copy), "%s/prog-gone", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", path ? path : "/nonexistent", copy);
	if (!path || system(cmd) != 0 || spawn(copy, &t)) {
		CHECK(!"target did not start");
		return;
	}
	dt_symbolizer *s = dt_sym_new();
	unlink(copy);
	CHECK_EQ_INT(dt_sym_note_pid(s, (uint32_t)t.pid), 0);
	finish(&t);
	CHECK_EQ_INT(dt_sym_user(s, (uint32_t)t.pid, 0, t.alpha, true, buf, sizeof(buf)), -ENOENT);
	/* -no-pie text: file offset = vaddr - 0x400000 for the usual x86-64 link. */
	char want[64];
	snprintf(want, sizeof(want), "[prog-gone]+0x%" PRIx64, t.alpha - 0x400000);
	CHECK_EQ_STR(buf, want);
	dt_sym_free(s);
}

/* Our own process: anonymous memory and the vDSO. */
static void self_anon_and_vdso(void)
{
	char buf[256];
	dt_symbolizer *s = dt_sym_new();
	uint32_t me = (uint32_t)getpid();
	void *anon = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(anon != MAP_FAILED);
	CHECK_EQ_INT(dt_sym_note_pid(s, me), 0);
	CHECK_EQ_INT(dt_sym_user(s, me, 0, (uint64_t)(uintptr_t)anon + 16, true, buf, sizeof(buf)),
		     -ENOENT);
	char want[64];
	snprintf(want, sizeof(want), "0x%" PRIx64, (uint64_t)(uintptr_t)anon + 16);
	CHECK_EQ_STR(buf, want);
	munmap(anon, 4096);

	/* No vDSO at all under valgrind: then there is nothing to resolve. */
	void *h = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	void *f = h ? dlsym(h, "__vdso_clock_gettime") : NULL;
	CHECK(f != NULL || getauxval(AT_SYSINFO_EHDR) == 0);
	if (f) {
		CHECK_EQ_INT(dt_sym_user(s, me, 0, (uint64_t)(uintptr_t)f + 1, true, buf, sizeof(buf)),
			     0);
		CHECK(strcmp(buf, "__vdso_clock_gettime+1") == 0 ||
		      strcmp(buf, "clock_gettime+1") == 0);
		CHECK_EQ_STR(dt_sym_user_path(s, me, 0, (uint64_t)(uintptr_t)f), "[vdso]");
	}
	/* A function of this test binary, resolved in our own process. */
	CHECK_EQ_INT(dt_sym_user(s, me, 0, (uint64_t)(uintptr_t)&check_resolves + 4, true, buf,
				 sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "check_resolves+4");
	dt_sym_free(s);
}

/* Module names and paths handed out stay valid when the process's mappings change and its
 * snapshot is replaced (issue 10 item 1: the pprof writer read names freed by a re-note after a
 * dlopen or dlclose). The same file keeps the same string, and the old one is still readable (an
 * ASan build reports a use after free otherwise). */
static void names_outlive_snapshot(void)
{
	uint32_t me = (uint32_t)getpid();
	uint64_t addr = (uint64_t)(uintptr_t)&check_resolves + 4;
	dt_sym_frame f[DT_SYM_MAX_INLINE];
	dt_symbolizer *s = dt_sym_new();

	CHECK_EQ_INT(dt_sym_note_pid(s, me), 0);
	CHECK(dt_sym_user_frames(s, me, 0, addr, false, f, DT_SYM_MAX_INLINE) > 0);
	const char *module = f[0].module, *path = dt_sym_user_path(s, me, 0, addr);
	CHECK(module != NULL && path != NULL);
	char want_module[256], want_path[4096];
	snprintf(want_module, sizeof(want_module), "%s", module ? module : "");
	snprintf(want_path, sizeof(want_path), "%s", path ? path : "");

	/* A new file mapping, as a dlopen makes one, then a forced re-read: a new snapshot. */
	int fd = open("/proc/self/exe", O_RDONLY);
	void *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(m != MAP_FAILED);
	close(fd);
	CHECK_EQ_INT(dt_sym_refresh_pid(s, me), 0);
	CHECK_EQ_STR(module, want_module);
	CHECK_EQ_STR(path, want_path);
	CHECK(dt_sym_user_frames(s, me, 0, addr, false, f, DT_SYM_MAX_INLINE) > 0);
	CHECK(f[0].module == module);
	CHECK(dt_sym_user_path(s, me, 0, addr) == path);
	if (m != MAP_FAILED)
		munmap(m, 4096);
	dt_sym_free(s);
}

/* How many lines of our /proc/self/maps name `path`. */
static int count_mappings(const char *path)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, path) != NULL;
	if (f)
		fclose(f);
	return n;
}

/* Printing at exit names frames of many objects: their DWARF is open DWARF_OPEN_MAX (8) at a
 * time, the least recently used closed for the next (issue 10 item 7: ~100 objects' DWARF stayed
 * open), and one closed opens again for an address it has not answered yet. Twelve libraries
 * built with -g, loaded here, each resolved with its source line. */
static void dwarf_budget(void)
{
	enum { NLIB = 12 };
	void *h[NLIB] = { 0 };
	uint64_t fn[NLIB] = { 0 };
	uint32_t me = (uint32_t)getpid();
	dt_sym_frame f[DT_SYM_MAX_INLINE];
	char cmd[512], path[128];
	dt_sym_stats st;

	for (int i = 0; i < NLIB; i++) {
		snprintf(path, sizeof(path), "%s/dw%d.c", dir, i);
		FILE *src = fopen(path, "w");
		if (!src)
			break;
		fprintf(src, "int dt_dw%d(int x)\n{\n\tx *= %d;\n\treturn x + 1;\n}\n", i, i + 2);
		fclose(src);
		snprintf(cmd, sizeof(cmd), "cc -g -O0 -shared -fPIC -o %s/libdw%d.so %s", dir, i, path);
		snprintf(path, sizeof(path), "%s/libdw%d.so", dir, i);
		char sym[32];
		snprintf(sym, sizeof(sym), "dt_dw%d", i);
		if (system(cmd) != 0 || !(h[i] = dlopen(path, RTLD_NOW)) || !dlsym(h[i], sym))
			break;
		fn[i] = (uint64_t)(uintptr_t)dlsym(h[i], sym);
	}
	CHECK(fn[NLIB - 1] != 0);
	snprintf(path, sizeof(path), "%s/libdw0.so", dir);
	int mapped = count_mappings(path);
	dt_symbolizer *s = dt_sym_new();
	CHECK_EQ_INT(dt_sym_note_pid(s, me), 0);
	/* Noting reads the symbols and lets the file go: its pages are not kept mapped. */
	CHECK_EQ_INT(count_mappings(path), mapped);
	for (int i = 0; i < NLIB && fn[i]; i++) {
		int n = dt_sym_user_frames(s, me, 0, fn[i], false, f, DT_SYM_MAX_INLINE);
		CHECK(n > 0 && f[n - 1].src_file && strstr(f[n - 1].src_file, "dw") != NULL);
		CHECK(n > 0 && f[n - 1].src_line == 2);
	}
	dt_sym_get_stats(s, &st);
	CHECK(st.dwarf_open <= 8);
	CHECK(st.dwarf_opens >= NLIB);
	CHECK_EQ_INT(count_mappings(path), mapped); /* closed for the budget: unmapped */
	CHECK_EQ_INT(st.dwarf_closes, st.dwarf_opens - st.dwarf_open);
	/* The first library's DWARF was closed: a new address of it opens it again. */
	if (fn[0]) {
		int n = dt_sym_user_frames(s, me, 0, fn[0] + 8, false, f, DT_SYM_MAX_INLINE);
		CHECK(n > 0 && f[n - 1].src_file != NULL && f[n - 1].src_line >= 3);
	}
	dt_sym_stats st2;
	dt_sym_get_stats(s, &st2);
	CHECK_EQ_INT(st2.dwarf_opens, st.dwarf_opens + 1);
	CHECK(st2.dwarf_open <= 8);
	dt_sym_free(s);
	for (int i = 0; i < NLIB; i++)
		if (h[i])
			dlclose(h[i]);
}

/* Kernel symbols from /proc/kallsyms, including one in a module if any is loaded. */
static void kernel(void)
{
	T_SKIP_UNLESS_ROOT();
	char *text = NULL, buf[256];
	uint64_t vfs_read = 0, mod_addr = 0;
	char mod_sym[128] = "", mod_name[128] = "";
	CHECK_EQ_INT(dt_read_file("/proc/kallsyms", &text, NULL), 0);
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		uint64_t a;
		char type, name[128], mod[128];
		if (nl)
			*nl = '\0';
		int k = sscanf(line, "%" SCNx64 " %c %127s %127s", &a, &type, name, mod);
		if (k >= 3 && type == 'T' && !strcmp(name, "vfs_read"))
			vfs_read = a;
		/* A module function that is not the only name at its address. */
		if (k == 4 && type == 't' && !mod_addr && mod[0] == '[' && strcmp(mod, "[bpf]")) {
			mod_addr = a;
			snprintf(mod_sym, sizeof(mod_sym), "%s", name);
			snprintf(mod_name, sizeof(mod_name), "%s", mod);
		}
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	dt_symbolizer *s = dt_sym_new();
	CHECK(vfs_read != 0);
	CHECK_EQ_INT(dt_sym_kernel(s, vfs_read + 5, true, buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "vfs_read+5");
	CHECK_EQ_INT(dt_sym_kernel(s, vfs_read, false, buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "vfs_read");
	CHECK_EQ_STR(dt_sym_kernel_module(s, vfs_read), "kernel");
	if (mod_addr) {
		CHECK_EQ_INT(dt_sym_kernel(s, mod_addr, false, buf, sizeof(buf)), 0);
		CHECK_EQ_STR(dt_sym_kernel_module(s, mod_addr), mod_name);
	}
	CHECK_EQ_INT(dt_sym_kernel(s, 0x10, true, buf, sizeof(buf)), -ENOENT);
	CHECK_EQ_STR(buf, "0x10");
	dt_sym_free(s);
}

/* /proc/modules gives each module's range: an address in a module that no symbol of that module
 * covers says "[mod]+0xoff", never a neighbour's name or a bare hex (fake files: this kernel may
 * have no modules). */
static void kernel_modules(void)
{
	char ks[256], mods[256], buf[256];
	snprintf(ks, sizeof(ks), "%s/kallsyms", dir);
	snprintf(mods, sizeof(mods), "%s/modules", dir);
	FILE *f = fopen(ks, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs("ffffffff81000000 T _stext\n"
	      "ffffffff81001000 T core_fn\n"
	      "ffffffffc0001000 t alpha_fn\t[alpha]\n"
	      "ffffffffc0001100 t alpha_two\t[alpha]\n"
	      "ffffffffc0010000 t beta_fn\t[beta]\n"
	      "ffffffffc0020000 t bpf_prog_1234_x\t[bpf]\n", f);
	fclose(f);
	f = fopen(mods, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	/* alpha's image starts before its first symbol and ends before beta's */
	fputs("alpha 16384 0 - Live 0xffffffffc0000000\n"
	      "beta 8192 1 alpha, Live 0xffffffffc0010000 (O)\n"
	      "gamma 4096 0 - Live 0xffffffffc0030000\n", f);
	fclose(f);
	dt_symbolizer *s = dt_sym_new();
	dt_sym_set_kernel_files(s, ks, mods);
	CHECK_EQ_INT(dt_sym_kernel(s, 0xffffffff81001010, true, buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "core_fn+16");
	CHECK_EQ_STR(dt_sym_kernel_module(s, 0xffffffff81001010), "kernel");
	CHECK_EQ_INT(dt_sym_kernel(s, 0xffffffffc0001104, true, buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "alpha_two+4");
	CHECK_EQ_STR(dt_sym_kernel_module(s, 0xffffffffc0001104), "[alpha]");
	/* before alpha's first symbol: the core kernel's core_fn is nearest, but it is alpha's */
	CHECK_EQ_INT(dt_sym_kernel(s, 0xffffffffc0000010, true, buf, sizeof(buf)), -ENOENT);
	CHECK_EQ_STR(buf, "[alpha]+0x10");
	/* a module with no symbol at all (gamma), where beta's is the nearest */
	CHECK_EQ_INT(dt_sym_kernel(s, 0xffffffffc0030020, true, buf, sizeof(buf)), -ENOENT);
	CHECK_EQ_STR(buf, "[gamma]+0x20");
	CHECK_EQ_STR(dt_sym_kernel_module(s, 0xffffffffc0030020), "[gamma]");
	/* past beta's image: not beta_fn+0x3000-and-more, and in no module */
	CHECK_EQ_INT(dt_sym_kernel(s, 0xffffffffc0013000, true, buf, sizeof(buf)), -ENOENT);
	CHECK_EQ_STR(buf, "0xffffffffc0013000");
	/* kallsyms' pseudo-module [bpf] has no range in /proc/modules and keeps its names */
	CHECK_EQ_INT(dt_sym_kernel(s, 0xffffffffc0020008, true, buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "bpf_prog_1234_x+8");
	dt_sym_free(s);
}

/* Address-space generations (exec): an address resolves against the snapshot of the image it was
 * recorded in; an image never snapshotted that no longer runs gives hex, not today's names. */
static uint32_t gen_now;

static uint32_t test_gen(void *ctx, uint32_t pid)
{
	return pid == *(uint32_t *)ctx ? gen_now : 0;
}

static void exec_generations(void)
{
	char buf[256];
	uint32_t me = (uint32_t)getpid();
	uint64_t addr = (uint64_t)(uintptr_t)&check_resolves + 4;
	dt_symbolizer *s = dt_sym_new();
	gen_now = 0;
	dt_sym_set_gen_fn(s, test_gen, &me);
	CHECK_EQ_INT(dt_sym_user(s, me, 0, addr, true, buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "check_resolves+4");
	/* "exec": generation 1 runs now */
	gen_now = 1;
	CHECK_EQ_INT(dt_sym_user(s, me, 0, addr, true, buf, sizeof(buf)), 0); /* kept */
	CHECK_EQ_STR(buf, "check_resolves+4");
	CHECK_EQ_INT(dt_sym_seen_pid(s, me, 0), -ESTALE); /* that image is gone */
	CHECK_EQ_INT(dt_sym_seen_pid(s, me, 1), 0);
	CHECK_EQ_INT(dt_sym_user(s, me, 1, addr, true, buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "check_resolves+4");
	/* generation 2 was never seen and is not running: no names from another image */
	CHECK_EQ_INT(dt_sym_user(s, me, 2, addr, true, buf, sizeof(buf)), -ENOENT);
	char hex[32];
	snprintf(hex, sizeof(hex), "0x%" PRIx64, addr);
	CHECK_EQ_STR(buf, hex);
	CHECK(dt_sym_user_path(s, me, 2, addr) == NULL);
	dt_sym_free(s);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	T_RUN(user_nopie);
	T_RUN(user_pie_and_libc);
	T_RUN(exited_process);
	T_RUN(exited_before_snapshot_fixed_image);
	T_RUN(entry_point_is_known);
	T_RUN(census_releases_exited);
	T_RUN(idle_objects_budget);
	T_RUN(reread_keeps_memory_flat);
	T_RUN(deleted_binary);
	T_RUN(self_anon_and_vdso);
	T_RUN(names_outlive_snapshot);
	T_RUN(dwarf_budget);
	T_RUN(kernel);
	T_RUN(kernel_modules);
	T_RUN(exec_generations);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return t_done();
}
