/* test_sym_srcline.c — source lines to addresses (dt_sym_line_addr, for uprobe:BIN@FILE:LINE),
 * on programs built at test time with gcc -g -O0: the address of a line is the one its line
 * table gives, a column picks one statement of a line, a file name matches by whole trailing
 * components, two files of one name are ambiguous, and a line without code, a file without
 * code and a binary without DWARF are errors that say so. The DWARF of a stripped binary comes
 * from its separate debug file (.gnu_debuglink). */
#include "symbols/symbols_internal.h"
#include "elfproc/elfproc.h"
#include "common/common.h"
#include "t.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static char dir[] = "/tmp/dt_srcline_XXXXXX";

/* Line numbers matter: step's '{' is line 2, `x += 1;` line 4 (two statements on line 6). */
static const char prog[] = "__attribute__((noinline)) int step(int n)\n"
			   "{\n"
			   "	int x = n;\n"
			   "	x += 1;\n"
			   "\n"
			   "	for (int i = 0; i < n; i++) x++;\n"
			   "	return x;\n"
			   "}\n"
			   "int other(void);\n"
			   "int main(int argc, char **argv) { (void)argv; return step(argc) + other(); }\n";

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	va_list ap;
	char *cmd;
	int rc;

	va_start(ap, fmt);
	if (vasprintf(&cmd, fmt, ap) < 0)
		abort();
	va_end(ap);
	rc = system(cmd);
	free(cmd);
	return rc;
}

static char *path_of(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

static bool built;

static bool build(void)
{
	static bool tried;
	FILE *f;

	if (tried)
		return built;
	tried = true;
	if (!mkdtemp(dir))
		return false;
	if (sh("mkdir -p %s/a %s/b", dir, dir))
		return false;
	char *src = path_of("p.c");

	f = fopen(src, "w");
	free(src);
	if (!f)
		return false;
	fputs(prog, f);
	fclose(f);
	if (sh("echo 'int other(void) { return 1; }' > %s/a/u.c", dir) ||
	    sh("echo 'int other2(void) { return 2; }' > %s/b/u.c", dir))
		return false;
	built = !sh("cd %s && gcc -g -O0 -o p p.c a/u.c && gcc -O0 -o nodw p.c a/u.c && "
		    "gcc -g -O0 -o amb p.c a/u.c b/u.c && cp p stripped && "
		    "objcopy --only-keep-debug stripped stripped.debug && "
		    "objcopy --strip-debug --add-gnu-debuglink=stripped.debug stripped",
		    dir);
	return built;
}

static uint64_t sym_addr(const char *bin, const char *name)
{
	char *p = path_of(bin);
	dt_elf *e = dt_elf_open(NULL, p);
	dt_elf_sym s = { 0 };

	free(p);
	if (!e || dt_elf_sym_find(e, name, &s) < 0)
		s.value = 0;
	dt_elf_put(e);
	return s.value;
}

/* dt_sym_line_addr on dir/bin; *why kept for the caller to check (freed by it). */
static int line_addr(const char *bin, const char *file, uint32_t line, uint32_t col,
		     uint64_t *addr, char **why)
{
	char *p = path_of(bin);
	int rc = dt_sym_line_addr(p, file, line, col, addr, why);

	free(p);
	return rc;
}

static void path_tails(void)
{
	CHECK(dt_sym_path_ends_with("/src/p.c", "p.c"));
	CHECK(dt_sym_path_ends_with("/src/p.c", "src/p.c"));
	CHECK(dt_sym_path_ends_with("/src/p.c", "./p.c"));
	CHECK(dt_sym_path_ends_with("/src/p.c", "/src/p.c"));
	CHECK(dt_sym_path_ends_with("p.c", "p.c"));
	CHECK(!dt_sym_path_ends_with("/src/menu.c", "u.c"));
	CHECK(!dt_sym_path_ends_with("/src/p.c", "rc/p.c"));
	CHECK(!dt_sym_path_ends_with("/src/p.c", "/p.c"));
	CHECK(!dt_sym_path_ends_with("/src/p.c", ""));
}

static void brace_line_is_function_entry(void)
{
	uint64_t a = 0;
	char *why = NULL;

	if (!build()) {
		CHECK(!"targets did not build");
		return;
	}
	CHECK_EQ_INT(line_addr("p", "p.c", 2, 0, &a, &why), 0);
	CHECK(a != 0 && a == sym_addr("p", "step"));
	/* A later line is inside step, after its entry. */
	CHECK_EQ_INT(line_addr("p", "p.c", 4, 0, &a, &why), 0);
	CHECK(a > sym_addr("p", "step") && a < sym_addr("p", "main"));
	free(why);
}

static void column_picks_a_statement(void)
{
	uint64_t whole = 0, init = 0, incr = 0;
	char *why = NULL;

	if (!built)
		return;
	/* Line 6 `for (int i = 0; i < n; i++) x++;`: `i = 0` at column 11, `i++` at 26. */
	CHECK_EQ_INT(line_addr("p", "p.c", 6, 0, &whole, &why), 0);
	CHECK_EQ_INT(line_addr("p", "p.c", 6, 11, &init, &why), 0);
	CHECK_EQ_INT(line_addr("p", "p.c", 6, 26, &incr, &why), 0);
	CHECK(whole == init && incr > init);
	CHECK_EQ_INT(line_addr("p", "p.c", 6, 3, &whole, &why), -ENOENT);
	CHECK(why && strstr(why, "no statement starts at") && strstr(why, "p.c:6:3"));
	free(why);
}

static void errors_say_what_is_missing(void)
{
	uint64_t a = 0;
	char *why = NULL;

	if (!built)
		return;
	CHECK_EQ_INT(line_addr("p", "p.c", 5, 0, &a, &why), -ENOENT);
	CHECK(why && strstr(why, "no code at") && strstr(why, "nearest lines with code are 4 and 6"));
	free(why);
	CHECK_EQ_INT(line_addr("p", "nosuch.c", 5, 0, &a, &why), -ENOENT);
	CHECK(why && strstr(why, "no source file 'nosuch.c'"));
	free(why);
	CHECK_EQ_INT(line_addr("nodw", "p.c", 2, 0, &a, &why), -ENODATA);
	CHECK(why && strstr(why, "no DWARF"));
	free(why);
	CHECK_EQ_INT(line_addr("amb", "u.c", 1, 0, &a, &why), -EINVAL);
	CHECK(why && strstr(why, "ambiguous") && strstr(why, "a/u.c") && strstr(why, "b/u.c"));
	free(why);
	why = NULL;
	CHECK_EQ_INT(line_addr("amb", "b/u.c", 1, 0, &a, &why), 0);
	CHECK(a == sym_addr("amb", "other2"));
	free(why);
}

static void separate_debug_file(void)
{
	uint64_t a = 0;
	char *why = NULL;

	if (!built)
		return;
	CHECK_EQ_INT(line_addr("stripped", "p.c", 2, 0, &a, &why), 0);
	CHECK(a == sym_addr("p", "step"));
	free(why);
}

int main(void)
{
	T_RUN(path_tails);
	T_RUN(brace_line_is_function_entry);
	T_RUN(column_picks_a_statement);
	T_RUN(errors_say_what_is_missing);
	T_RUN(separate_debug_file);
	if (built || dir[sizeof(dir) - 2] != 'X')
		sh("rm -rf %s", dir);
	return t_done();
}
