/* test_sym_debuginfo.c — where names come from, tested on programs built at test time. A C target
 * (a static function only .symtab knows, and an always_inline helper whose callee records its
 * return address) is built with and without -g and then split the ways distributions ship debug
 * info: a build-id tree given with --debuginfo, a .gnu_debuglink file next to the binary, and
 * MiniDebugInfo (.gnu_debugdata, xz). A C++ target and a Rust target (legacy and v0 mangling)
 * check demangling and --no-demangle. A stripped target gets its names from Debian's debuginfod
 * serving a directory on 127.0.0.1. Each target prints the addresses of its functions and waits
 * on stdin, so the assertions are about known addresses in a live process. */
#include "symbols/symbols.h"
#include "common/common.h"
#include "t.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/dt_symdbg_XXXXXX";

static const char c_src[] =
	"#include <stdio.h>\n"
	"#include <unistd.h>\n"
	"void *volatile dt_ra;\n"
	"__attribute__((noinline)) void dt_leaf(void) { dt_ra = __builtin_return_address(0); }\n"
	"static inline __attribute__((always_inline)) void dt_inlined_helper(void)\n"
	"{\n"
	"	dt_leaf();\n"
	"	__asm__ volatile(\"\" ::: \"memory\");\n"
	"}\n"
	"__attribute__((noinline)) void dt_outer(void) { dt_inlined_helper(); dt_ra = dt_ra; }\n"
	"static __attribute__((noinline)) int dt_local_fn(int x) { return x * 7 + 1; }\n"
	"int main(void)\n"
	"{\n"
	"	char c = 0;\n"
	"	dt_outer();\n"
	"	printf(\"%p %p %p\\n\", (void *)dt_local_fn, (void *)dt_outer, dt_ra);\n"
	"	fflush(stdout);\n"
	"	if (read(0, &c, 1) < 0)\n"
	"		return 1;\n"
	"	return dt_local_fn(c) & 1;\n"
	"}\n";

static const char cxx_src[] =
	"#include <cstdio>\n"
	"#include <unistd.h>\n"
	"namespace dt {\n"
	"template <typename T> __attribute__((noinline)) T twice(T v) { return v + v; }\n"
	"}\n"
	"int main()\n"
	"{\n"
	"	char c = 0;\n"
	"	std::printf(\"%p 0x0 0x0\\n\", (void *)&dt::twice<int>);\n"
	"	std::fflush(stdout);\n"
	"	if (read(0, &c, 1) < 0)\n"
	"		return 1;\n"
	"	return dt::twice<int>(c) & 1;\n"
	"}\n";

static const char rs_src[] =
	"use std::io::Read;\n"
	"mod work {\n"
	"    #[inline(never)]\n"
	"    pub fn crunch(x: u64) -> u64 { x.wrapping_mul(31) ^ 7 }\n"
	"}\n"
	"fn main() {\n"
	"    let f: fn(u64) -> u64 = work::crunch;\n"
	"    println!(\"{:#x} 0x0 0x0\", f as usize);\n"
	"    let mut b = [0u8; 1];\n"
	"    let _ = std::io::stdin().read(&mut b);\n"
	"    std::process::exit((work::crunch(b[0] as u64) & 1) as i32);\n"
	"}\n";

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	va_list ap;
	char *cmd;
	va_start(ap, fmt);
	if (vasprintf(&cmd, fmt, ap) < 0)
		cmd = NULL;
	va_end(ap);
	/* bash, not sh: the recipes use ${var:offset:length}. */
	char *full = xasprintf("cd %s && (%s) >/dev/null 2>&1", dir, cmd ? cmd : "false");
	int status = -1;
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/bash", "bash", "-c", full, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	free(full);
	free(cmd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void write_src(const char *name, const char *text)
{
	char *p = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	free(p);
}

static bool built;

/* Every variant, once. */
static bool build_all(void)
{
	if (built)
		return true;
	write_src("t.c", c_src);
	write_src("t.cpp", cxx_src);
	write_src("t.rs", rs_src);
	int rc = 0;
	rc |= sh("cc -O2 -g -Wl,--build-id -o c_full t.c");
	rc |= sh("cc -O2 -Wl,--build-id -o c_nodebug t.c");
	rc |= sh("strip --strip-all -o c_stripped c_full");
	/* Build-id tree, handed over with --debuginfo. */
	rc |= sh("id=$(readelf -n c_full | awk '/Build ID/ { print $3 }') && "
		 "mkdir -p dbg/.build-id/${id:0:2} && "
		 "objcopy --only-keep-debug c_full dbg/.build-id/${id:0:2}/${id:2}.debug && "
		 "strip --strip-all -o c_buildid c_full");
	/* .gnu_debuglink: the debug file next to the binary. */
	rc |= sh("objcopy --only-keep-debug c_full c_link.debug && "
		 "strip --strip-all -o c_link c_full && "
		 "objcopy --add-gnu-debuglink=c_link.debug c_link");
	/* MiniDebugInfo as Fedora builds it: a symbol-only ELF, xz'd into .gnu_debugdata. */
	rc |= sh("objcopy --only-keep-debug --strip-debug c_nodebug mini.elf && "
		 "xz -f mini.elf && strip --strip-all -o c_mini c_nodebug && "
		 "objcopy --add-section .gnu_debugdata=mini.elf.xz c_mini");
	rc |= sh("c++ -O1 -o cxx t.cpp");
	rc |= sh("rustc -O -C debuginfo=0 -C symbol-mangling-version=v0 -o rs_v0 t.rs");
	rc |= sh("RUSTC_BOOTSTRAP=1 rustc -O -C debuginfo=0 -Z unstable-options "
		 "-C symbol-mangling-version=legacy -o rs_legacy t.rs");
	built = rc == 0;
	return built;
}

struct target {
	pid_t pid;
	int in;
	uint64_t a[3];
};

static int spawn(const char *name, struct target *t)
{
	int in[2], out[2];
	char line[256], *path = xasprintf("%s/%s", dir, name);
	memset(t, 0, sizeof(*t));
	if (pipe(in) || pipe(out)) {
		free(path);
		return -errno;
	}
	t->pid = fork();
	if (t->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	free(path);
	close(in[0]);
	close(out[1]);
	t->in = in[1];
	FILE *f = fdopen(out[0], "r");
	int ok = f && fgets(line, sizeof(line), f) &&
		 sscanf(line, "%" SCNx64 " %" SCNx64 " %" SCNx64, &t->a[0], &t->a[1], &t->a[2]) == 3;
	if (f)
		fclose(f);
	return ok ? 0 : -EIO;
}

static void finish(struct target *t)
{
	if (t->pid <= 0)
		return;
	close(t->in);
	waitpid(t->pid, NULL, 0);
	t->pid = 0;
}

static dt_symbolizer *sym_with(const dt_sym_opts *o)
{
	dt_symbolizer *s = dt_sym_new();
	if (o)
		dt_sym_set_opts(s, o);
	return s;
}

/* The name of a function address, "+0" dropped. */
static int name_of(dt_symbolizer *s, const struct target *t, uint64_t addr, char *buf, size_t n)
{
	return dt_sym_user(s, (uint32_t)t->pid, 0, addr, false, buf, n);
}

/* Runs `variant`, checks dt_local_fn's name (want_local NULL: must not resolve) and, at the return
 * address inside dt_outer, whether the inlined helper shows up as its own frame. */
static void check_c(const char *variant, const dt_sym_opts *o, const char *want_local,
		    bool want_inline)
{
	struct target t;
	char buf[512];
	dt_sym_frame fr[DT_SYM_MAX_INLINE];

	if (!build_all() || spawn(variant, &t)) {
		CHECK(!"target did not build or start");
		return;
	}
	dt_symbolizer *s = sym_with(o);
	CHECK_EQ_INT(dt_sym_note_pid(s, (uint32_t)t.pid), 0);
	int rc = name_of(s, &t, t.a[0], buf, sizeof(buf));
	if (want_local) {
		CHECK_EQ_INT(rc, 0);
		CHECK_EQ_STR(buf, want_local);
	} else {
		/* Never a bare address when the module is known, never a name: "[c_stripped]+0x...". */
		char *prefix = xasprintf("[%s]+0x", variant);
		CHECK_EQ_INT(rc, -ENOENT);
		CHECK(!strncmp(buf, prefix, strlen(prefix)));
		free(prefix);
	}
	int n = dt_sym_user_frames(s, (uint32_t)t.pid, 0, t.a[2], true, fr, DT_SYM_MAX_INLINE);
	if (want_inline) {
		CHECK_EQ_INT(n, 2);
		if (n == 2) {
			CHECK_EQ_STR(fr[0].name, "dt_inlined_helper");
			CHECK(fr[0].inlined);
			CHECK_EQ_STR(fr[1].name, "dt_outer");
			CHECK(!fr[1].inlined);
			dt_sym_frame_text(&fr[0], t.a[2], true, buf, sizeof(buf));
			CHECK_EQ_STR(buf, "dt_inlined_helper [inlined]");
		}
	} else if (want_local) {
		CHECK_EQ_INT(n, 1);
		CHECK(n == 1 && !strcmp(fr[0].name, "dt_outer"));
	}
	finish(&t);
	dt_sym_free(s);
}

static void c_full_debug(void)
{
	check_c("c_full", NULL, "dt_local_fn", true);
}

static void c_symtab_only(void)
{
	check_c("c_nodebug", NULL, "dt_local_fn", false);
}

static void c_stripped_gives_module_offset(void)
{
	check_c("c_stripped", NULL, NULL, false);
}

static void c_build_id_dir(void)
{
	char *d = xasprintf("%s/dbg", dir);
	const char *dirs[] = { d };
	dt_elf_cache *c = dt_elf_cache_new();
	dt_elf_cache_set_debug_dirs(c, dirs, 1);
	dt_sym_opts o = { .elf_cache = c, .no_debuginfod = true };
	check_c("c_buildid", &o, "dt_local_fn", true);
	/* Without the directory the same binary has no names. */
	dt_sym_opts none = { .no_debuginfod = true };
	check_c("c_buildid", &none, NULL, false);
	dt_elf_cache_free(c);
	free(d);
}

static void c_debuglink(void)
{
	check_c("c_link", NULL, "dt_local_fn", true);
}

static void c_minidebuginfo(void)
{
	check_c("c_mini", NULL, "dt_local_fn", false);
}

/* --srcline: the inlined helper's line is the call to dt_leaf inside it (line 7 of t.c), the
 * function's is where the helper was inlined (line 10). */
static void c_srcline(void)
{
	struct target t;
	char buf[512];
	dt_sym_frame fr[DT_SYM_MAX_INLINE];
	dt_sym_opts o = { .srcline = true };

	if (!build_all() || spawn("c_full", &t)) {
		CHECK(!"target did not build or start");
		return;
	}
	dt_symbolizer *s = sym_with(&o);
	int n = dt_sym_user_frames(s, (uint32_t)t.pid, 0, t.a[2], true, fr, DT_SYM_MAX_INLINE);
	CHECK_EQ_INT(n, 2);
	if (n == 2) {
		dt_sym_frame_text(&fr[0], t.a[2], true, buf, sizeof(buf));
		CHECK_EQ_STR(buf, "dt_inlined_helper [inlined] (t.c:7)");
		CHECK_EQ_INT(fr[1].line, 10);
	}
	/* --no-inline: only the function, with its own line. */
	dt_sym_free(s);
	o.no_inline = true;
	s = sym_with(&o);
	n = dt_sym_user_frames(s, (uint32_t)t.pid, 0, t.a[2], true, fr, DT_SYM_MAX_INLINE);
	CHECK_EQ_INT(n, 1);
	CHECK(n == 1 && !strcmp(fr[0].name, "dt_outer") && fr[0].line == 10);
	finish(&t);
	dt_sym_free(s);
}

static void check_one(const char *variant, const dt_sym_opts *o, const char *want)
{
	struct target t;
	char buf[512];

	if (!build_all() || spawn(variant, &t)) {
		CHECK(!"target did not build or start");
		return;
	}
	dt_symbolizer *s = sym_with(o);
	CHECK_EQ_INT(name_of(s, &t, t.a[0], buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, want);
	finish(&t);
	dt_sym_free(s);
}

static void cxx_demangled(void)
{
	check_one("cxx", NULL, "int dt::twice<int>(int)");
	dt_sym_opts raw = { .no_demangle = true };
	check_one("cxx", &raw, "_ZN2dt5twiceIiEET_S1_");
}

static void rust_v0_and_legacy(void)
{
	check_one("rs_v0", NULL, "t::work::crunch");
	check_one("rs_legacy", NULL, "t::work::crunch");
	/* Raw, the two manglings differ: v0 starts with _R, legacy is C++-like with a hash. */
	dt_sym_opts raw = { .no_demangle = true };
	struct target t;
	char buf[512];
	if (spawn("rs_legacy", &t) == 0) {
		dt_symbolizer *s = sym_with(&raw);
		name_of(s, &t, t.a[0], buf, sizeof(buf));
		CHECK(!strncmp(buf, "_ZN1t4work6crunch17h", 20));
		finish(&t);
		dt_sym_free(s);
	}
}

static void demangle_strings(void)
{
	char *d = dt_sym_demangle("_ZN4core3fmt5write17h0123456789abcdefE");
	CHECK_EQ_STR(d, "core::fmt::write");
	free(d);
	d = dt_sym_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi");
	CHECK_EQ_STR(d, "std::vector<int, std::allocator<int> >::push_back(int const&)");
	free(d);
	CHECK(dt_sym_demangle("main") == NULL);
	CHECK(dt_sym_demangle("_Zgarbage!") == NULL);
}

/* Debian's debuginfod serves the debug file of a stripped binary from a directory. */
static void debuginfod_server(void)
{
	if (access("/usr/bin/debuginfod", X_OK)) {
		CHECK(!"debuginfod is not installed (apt-get install debuginfod)");
		return;
	}
	if (!build_all() || sh("mkdir -p srv cache && cp c_link.debug srv/ && "
			       "strip --strip-all -o c_dbgd c_full")) {
		CHECK(!"could not prepare the server directory");
		return;
	}
	int port = 20000 + (int)(getpid() % 20000);
	pid_t srv = fork();
	if (srv == 0) {
		char *db = xasprintf("%s/db.sqlite", dir), *src = xasprintf("%s/srv", dir);
		char p[16];
		snprintf(p, sizeof(p), "%d", port);
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		if (!getenv("DT_TEST_VERBOSE"))
			dup2(null, 2);
		execl("/usr/bin/debuginfod", "debuginfod", "-F", src, "-p", p, "-d", db,
		      (char *)NULL);
		_exit(127);
	}
	char *urls = xasprintf("http://127.0.0.1:%d", port), *cache = xasprintf("%s/cache", dir);
	setenv("DEBUGINFOD_URLS", urls, 1);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	setenv("DEBUGINFOD_TIMEOUT", "5", 1);
	/* The server indexes its directory after it starts: ask until it knows the file, each time
	 * with a fresh cache (the client remembers a miss for ten minutes). */
	bool ready = false;
	for (int i = 0; i < 100 && !ready; i++) {
		ready = sh("id=$(readelf -n c_full | awk '/Build ID/ { print $3 }') && "
			   "DEBUGINFOD_URLS=%s DEBUGINFOD_CACHE_PATH=%s/probe%d "
			   "debuginfod-find debuginfo $id", urls, dir, i) == 0;
		if (!ready)
			usleep(100000);
	}
	CHECK(ready);

	struct target t;
	char buf[512];
	dt_symbolizer *s = dt_sym_new(); /* reads DEBUGINFOD_URLS */
	if (ready && spawn("c_dbgd", &t) == 0) {
		CHECK_EQ_INT(dt_sym_note_pid(s, (uint32_t)t.pid), 0); /* queues the fetch */
		CHECK(dt_sym_wait_downloads(s, 10000000000ull));
		CHECK_EQ_INT(name_of(s, &t, t.a[0], buf, sizeof(buf)), 0);
		CHECK_EQ_STR(buf, "dt_local_fn");
		dt_sym_frame fr[DT_SYM_MAX_INLINE];
		CHECK_EQ_INT(dt_sym_user_frames(s, (uint32_t)t.pid, 0, t.a[2], true, fr,
						DT_SYM_MAX_INLINE), 2);
		finish(&t);
	}
	dt_sym_free(s);
	unsetenv("DEBUGINFOD_URLS");
	kill(srv, SIGTERM);
	waitpid(srv, NULL, 0);
	free(urls);
	free(cache);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	unsetenv("DEBUGINFOD_URLS");
	T_RUN(demangle_strings);
	T_RUN(c_full_debug);
	T_RUN(c_symtab_only);
	T_RUN(c_stripped_gives_module_offset);
	T_RUN(c_build_id_dir);
	T_RUN(c_debuglink);
	T_RUN(c_minidebuginfo);
	T_RUN(c_srcline);
	T_RUN(cxx_demangled);
	T_RUN(rust_v0_and_legacy);
	T_RUN(debuginfod_server);
	char *rm = xasprintf("rm -rf %s", dir);
	if (system(rm)) {
		/* leftovers in /tmp are harmless */
	}
	free(rm);
	return t_done();
}
