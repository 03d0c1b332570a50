/* import.c — `import "PATH";`: brings other .bt scripts into a program. The imported texts are
 * appended to the root script's text, each from a line of its own, and listed in the source's
 * files; spans stay plain offsets into the one text, so the parser, the checker and code
 * generation need nothing new, and diagnostics find the file (and its own line numbers) from the
 * offset (dt_source_file_at). C files (.h, .bpf.c) are listed in the source's cimports, for the
 * type source (libclang) and codegen (clang) to compile. A PATH found nowhere on disk may name
 * a file or a directory of the standard library compiled in (dt_stdlib_files). */
#include "lang/lang_internal.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A text in the combined buffer whose imports are still to be read: [off, end), and the
 * directory its relative imports start from (NULL: the working directory). */
struct unit {
	uint32_t off, end;
	char *dir;
};

struct importer {
	dt_arena *a;
	dt_diags *d;
	DT_VEC(char) buf;
	DT_VEC(struct unit) units;
	DT_VEC(dt_source_file) files;
	DT_VEC(dt_source_cimport) cimports;
	DT_VEC(char *) seen; /* real paths imported so far (and the root script's) */
	uint32_t newlines;   /* in buf */
	const dt_source *root;
};

const dt_source_file *dt_source_file_at(const dt_source *src, uint32_t off)
{
	const dt_source_file *f = NULL;

	for (uint32_t i = 0; src && i < src->nfiles && src->files[i].off <= off; i++)
		f = &src->files[i];
	return f;
}

const char *dt_source_name_at(const dt_source *src, uint32_t off)
{
	const dt_source_file *f = dt_source_file_at(src, off);
	return f ? f->name : src->name ? src->name : DT_SOURCE_STDIN;
}

bool dt_source_is_file(const dt_source *src)
{
	return src->name && strcmp(src->name, DT_SOURCE_STDIN) && strcmp(src->name, "repl");
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return NULL;
	return slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path));
}

static bool in_seen(const struct importer *im, const char *real)
{
	for (size_t i = 0; i < im->seen.n; i++)
		if (!strcmp(im->seen.v[i], real))
			return true;
	return false;
}

/* Whether the file `name` was imported already (or is the root script). */
static bool was_seen(const struct importer *im, const char *name)
{
	char real[PATH_MAX];
	return realpath(name, real) && in_seen(im, real);
}

/* Whether `real` (a real path) was imported already; records it when not. */
static bool seen_before(struct importer *im, const char *real)
{
	if (in_seen(im, real))
		return true;
	DT_VEC_PUSH(&im->seen, xstrdup(real));
	return false;
}

/* Refuses a world-writable directory: anyone could put a script there (bpftrace's rule). */
static bool dir_writable_by_all(struct importer *im, dt_span at, const char *dir)
{
	struct stat st;

	if (stat(dir ? dir : ".", &st) || !(st.st_mode & S_IWOTH))
		return false;
	dt_diag(im->d, DT_DIAG_ERROR, at, "cannot import from '%s': the directory is world-writable",
		dir ? dir : ".");
	return true;
}

/* Appends the .bt file `name` (checked to exist) as a new unit. */
static void add_file(struct importer *im, dt_span at, const char *name)
{
	char real[PATH_MAX], *text = NULL;
	size_t len;
	int err;

	if (!realpath(name, real)) {
		dt_diag(im->d, DT_DIAG_ERROR, at, "cannot import '%s': %s", name, strerror(errno));
		return;
	}
	if (seen_before(im, real))
		return;
	char *dir = dir_of(name);
	if (dir_writable_by_all(im, at, dir)) {
		free(dir);
		return;
	}
	if ((err = dt_read_file(name, &text, &len))) {
		dt_diag(im->d, DT_DIAG_ERROR, at, "cannot import '%s': %s", name, strerror(-err));
		free(dir);
		return;
	}
	if (im->buf.n + len + 1 >= UINT32_MAX) {
		dt_diag(im->d, DT_DIAG_ERROR, at, "cannot import '%s': the program is too large", name);
		free(text);
		free(dir);
		return;
	}
	if (im->buf.n && im->buf.v[im->buf.n - 1] != '\n') {
		DT_VEC_PUSH(&im->buf, '\n');
		im->newlines++;
	}
	dt_source_file f = { .name = dt_arena_strndup(im->a, name, strlen(name)),
			     .off = (uint32_t)im->buf.n, .line0 = im->newlines };
	DT_VEC_PUSH(&im->files, f);
	for (size_t i = 0; i < len; i++) {
		DT_VEC_PUSH(&im->buf, text[i]);
		im->newlines += text[i] == '\n';
	}
	free(text);
	struct unit u = { .off = f.off, .end = (uint32_t)im->buf.n, .dir = dir };
	DT_VEC_PUSH(&im->units, u);
}

enum kind { K_NONE = -1, K_SCRIPT, K_HEADER, K_BPF_C };

/* The file type of `name` (bpftrace's: by its extension). */
static enum kind file_kind(const char *name)
{
	if (has_suffix(name, ".bt"))
		return K_SCRIPT;
	if (has_suffix(name, ".bpf.c"))
		return K_BPF_C;
	if (has_suffix(name, ".h"))
		return K_HEADER;
	return K_NONE;
}

/* Lists C file `name` (a real path on disk, or a standard library file's text) once. */
static void add_cfile(struct importer *im, dt_span at, enum kind k, const char *name,
		      const char *real, const char *text, size_t len)
{
	for (size_t i = 0; i < im->cimports.n; i++)
		if (!strcmp(im->cimports.v[i].path ? im->cimports.v[i].path : im->cimports.v[i].name,
			    real ? real : name))
			return;
	dt_source_cimport c = {
		.kind = k == K_HEADER ? DT_CIMPORT_HEADER : DT_CIMPORT_BPF_C,
		.name = dt_arena_strndup(im->a, name, strlen(name)),
		.path = real ? dt_arena_strndup(im->a, real, strlen(real)) : NULL,
		.text = text, .len = len, .at = at,
	};
	DT_VEC_PUSH(&im->cimports, c);
}

/* A C file on disk, checked to exist. */
static void add_cfile_disk(struct importer *im, dt_span at, enum kind k, const char *name)
{
	char real[PATH_MAX];
	char *dir = dir_of(name);
	bool refused = dir_writable_by_all(im, at, dir);

	free(dir);
	if (refused)
		return;
	if (!realpath(name, real) || access(real, R_OK)) {
		dt_diag(im->d, DT_DIAG_ERROR, at, "cannot import '%s': %s", name, strerror(errno));
		return;
	}
	add_cfile(im, at, k, name, real, NULL, 0);
}

/* A directory: its .bt, .h and .bpf.c files in name order (not its subdirectories'); other
 * files are left alone, as bpftrace leaves them. */
static void add_dir(struct importer *im, dt_span at, const char *dir)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);

	if (n < 0) {
		dt_diag(im->d, DT_DIAG_ERROR, at, "cannot import '%s': %s", dir, strerror(errno));
		return;
	}
	if (dir_writable_by_all(im, at, dir))
		n = -n; /* free the entries, import none */
	for (int i = 0; i < (n < 0 ? -n : n); i++) {
		char *path = xasprintf("%s/%s", dir, ents[i]->d_name);
		struct stat st;
		enum kind k = file_kind(path);

		if (n > 0 && k != K_NONE && !stat(path, &st) && S_ISREG(st.st_mode)) {
			if (k == K_SCRIPT)
				add_file(im, at, path);
			else
				add_cfile_disk(im, at, k, path);
		}
		free(path);
		free(ents[i]);
	}
	free(ents);
}

/* PATH in the standard library: the file of that name, or the files of that directory (its
 * own, not its subdirectories'). Whether any matched. */
static bool import_stdlib(struct importer *im, dt_span at, const char *path)
{
	size_t n = strlen(path);
	bool found = false;

	while (n > 1 && path[n - 1] == '/')
		n--;
	for (const dt_stdlib_file *f = dt_stdlib_files; f->name; f++) {
		bool exact = strlen(f->name) == n && !strncmp(f->name, path, n);
		bool in_dir = !strncmp(f->name, path, n) && f->name[n] == '/' &&
			      !strchr(f->name + n + 1, '/');
		enum kind k = file_kind(f->name);

		if ((!exact && !in_dir) || k == K_NONE)
			continue;
		found = true;
		if (k == K_SCRIPT)
			/* The standard library holds no scripts yet: dwarftrace's builtins are its
			 * own. */
			continue;
		add_cfile(im, at, k, f->name, NULL, f->text, f->len);
	}
	return found;
}

/* Names of the standard library's directories and files, for a hint. */
static void stdlib_hint(struct importer *im, const char *path)
{
	DT_VEC(const char *) names = { 0 };

	for (const dt_stdlib_file *f = dt_stdlib_files; f->name; f++) {
		const char *slash = strrchr(f->name, '/');
		const char *dir = dt_arena_strndup(im->a, f->name, (size_t)(slash - f->name));
		if (!names.n || strcmp(names.v[names.n - 1], dir))
			DT_VEC_PUSH(&names, dir);
	}
	DT_VEC_PUSH(&names, NULL);
	const char *near = dt_closest(path, strlen(path), names.v);
	if (near)
		dt_diag_hint(im->d, "did you mean \"%s\" (of the standard library)?", near);
	free(names.v);
}

static void import_one(struct importer *im, dt_span at, const char *dir, const char *path,
		       bool in_block)
{
	char *name = path[0] == '/' || !dir ? xstrdup(path) : xasprintf("%s/%s", dir, path);
	struct stat st;

	if (in_block && ((!stat(name, &st) && S_ISDIR(st.st_mode)) ||
			 (file_kind(path) != K_HEADER && file_kind(path) != K_BPF_C))) {
		/* bpftrace's rule: scripts and directories only at the top. */
		dt_diag(im->d, DT_DIAG_ERROR, at, "an import inside a block can only bring in C: "
			"a .h header or a .bpf.c source");
		dt_diag_hint(im->d, "import scripts and directories at the top of the file");
	} else if (!*path) {
		dt_diag(im->d, DT_DIAG_ERROR, at, "empty import path");
	} else if (stat(name, &st)) {
		int err = errno;
		if (path[0] == '/' || !import_stdlib(im, at, path)) {
			dt_diag(im->d, DT_DIAG_ERROR, at, "cannot import '%s': %s", name,
				strerror(err));
			if (path[0] != '/' && !strncmp(path, "stdlib", 6))
				stdlib_hint(im, path);
		}
	} else if (S_ISDIR(st.st_mode)) {
		add_dir(im, at, name);
	} else if (!was_seen(im, name)) { /* a duplicate or a cycle: nothing new */
		enum kind k = file_kind(name);
		if (k == K_SCRIPT)
			add_file(im, at, name);
		else if (k != K_NONE)
			add_cfile_disk(im, at, k, name);
		else
			dt_diag(im->d, DT_DIAG_ERROR, at,
				"cannot import '%s': unsupported file type (a .bt script, a .h "
				"header, a .bpf.c source or a directory of them)", name);
	}
	free(name);
}

/* Reads the `import "PATH";` statements of unit `u` and imports each: at the top level (by
 * brace depth; the parser checks where they stand) anything, inside a block (a probe's, a
 * macro's: bpftrace's statement imports) C files only. */
static void scan_unit(struct importer *im, size_t ui)
{
	struct unit u = im->units.v[ui];
	int depth = 0;
	dt_token t;

	for (uint32_t off = u.off;; off = t.off + (t.len ? t.len : 1)) {
		/* buf grows as files are added: lex from a view of it as it is now. */
		dt_source view = *im->root;
		view.text = im->buf.v;
		view.len = u.end;
		dt_lex(&view, off, &t);
		if (t.kind == DT_TOK_EOF || t.off >= u.end)
			break;
		if (t.kind == DT_TOK_LBRACE)
			depth++;
		else if (t.kind == DT_TOK_RBRACE && depth)
			depth--;
		if (t.kind != DT_TOK_IDENT || t.len != 6 || memcmp(view.text + t.off, "import", 6))
			continue;
		dt_token s, semi;
		dt_lex(&view, t.off + t.len, &s);
		if (s.kind != DT_TOK_STR || s.err)
			continue;
		dt_lex(&view, s.off + s.len, &semi);
		if (semi.kind != DT_TOK_SEMI)
			continue;
		uint32_t plen, bad;
		char *path = dt_lex_string(im->a, &view, &s, &plen, &bad);
		if (strlen(path) != plen)
			dt_diag(im->d, DT_DIAG_ERROR, (dt_span){ s.off, s.len },
				"an import path cannot hold a NUL byte");
		else
			import_one(im, (dt_span){ s.off, s.len }, u.dir, path, depth > 0);
		t = semi;
	}
}

void dt_source_imports(dt_source *src, dt_arena *a, dt_diags *d)
{
	struct importer im = { .a = a, .d = d, .root = src };
	char real[PATH_MAX];
	bool file = dt_source_is_file(src);

	for (size_t i = 0; i < src->len; i++) {
		DT_VEC_PUSH(&im.buf, src->text[i]);
		im.newlines += src->text[i] == '\n';
	}
	if (file && realpath(src->name, real))
		seen_before(&im, real);
	struct unit root = { .off = 0, .end = (uint32_t)src->len, .dir = file ? dir_of(src->name) : NULL };
	DT_VEC_PUSH(&im.units, root);
	for (size_t i = 0; i < im.units.n; i++)
		scan_unit(&im, i);
	if (im.cimports.n) {
		dt_source_cimport *c = dt_arena_alloc(a, sizeof(*c) * im.cimports.n);
		memcpy(c, im.cimports.v, sizeof(*c) * im.cimports.n);
		src->cimports = c;
		src->ncimports = (uint32_t)im.cimports.n;
	}
	if (im.files.n) {
		char *text = dt_arena_alloc(a, im.buf.n + 1);
		memcpy(text, im.buf.v, im.buf.n);
		text[im.buf.n] = '\0';
		dt_source_file *files = dt_arena_alloc(a, sizeof(*files) * im.files.n);
		memcpy(files, im.files.v, sizeof(*files) * im.files.n);
		src->text = text;
		src->len = im.buf.n;
		src->files = files;
		src->nfiles = (uint32_t)im.files.n;
	}
	for (size_t i = 0; i < im.units.n; i++)
		free(im.units.v[i].dir);
	for (size_t i = 0; i < im.seen.n; i++)
		free(im.seen.v[i]);
	free(im.units.v);
	free(im.files.v);
	free(im.cimports.v);
	free(im.seen.v);
	free(im.buf.v);
}
