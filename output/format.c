/* format.c — the renderers behind every line dwarftrace prints: one value (ints, strings, symbols,
 * tuples), one stack, one hist/lhist body, one printf event, in bpftrace 0.17's text shapes or its
 * JSON shapes. They write into a dt_sbuf so the caller decides where a record goes and can build
 * a whole line before writing it. Where bpftrace's behaviour is odd but deliberate (32-bit %d of a
 * 64-bit argument, float-computed bar widths, `[1K, 2K)` labels) it is reproduced on purpose: the
 * golden tests compare our output with bpftrace's byte for byte. */
#include "output/output_internal.h"
#include "common/common.h"
#include "bpf-lib/dt_walker.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- string buffer */

static void sb_reserve(dt_sbuf *b, size_t extra)
{
	if (b->n + extra + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->n + extra + 1)
		cap *= 2;
	b->s = xrealloc(b->s, cap);
	b->cap = cap;
}

void dt_sb_putn(dt_sbuf *b, const char *s, size_t n)
{
	sb_reserve(b, n);
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

void dt_sb_puts(dt_sbuf *b, const char *s)
{
	dt_sb_putn(b, s, strlen(s));
}

void dt_sb_putc(dt_sbuf *b, char c)
{
	dt_sb_putn(b, &c, 1);
}

void dt_sb_vprintf(dt_sbuf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int len = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (len <= 0)
		return;
	sb_reserve(b, (size_t)len);
	vsnprintf(b->s + b->n, (size_t)len + 1, fmt, ap);
	b->n += (size_t)len;
}

void dt_sb_printf(dt_sbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	dt_sb_vprintf(b, fmt, ap);
	va_end(ap);
}

const char *dt_sb_str(const dt_sbuf *b)
{
	return b->s ? b->s : "";
}

void dt_sb_reset(dt_sbuf *b)
{
	b->n = 0;
	if (b->s)
		b->s[0] = '\0';
}

/* Length of the valid UTF-8 sequence starting at s (at most n bytes), or 0 if it is not one. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;
	if (s[0] < 0xc2)
		return 0;
	if (s[0] < 0xe0) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] < 0xf0) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] < 0xf5) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF are not valid UTF-8. */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

void dt_json_escape(dt_sbuf *b, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		switch (c) {
		case '"': dt_sb_puts(b, "\\\""); continue;
		case '\\': dt_sb_puts(b, "\\\\"); continue;
		case '\n': dt_sb_puts(b, "\\n"); continue;
		case '\r': dt_sb_puts(b, "\\r"); continue;
		case '\t': dt_sb_puts(b, "\\t"); continue;
		}
		if (c < 0x20) {
			dt_sb_printf(b, "\\u%04x", c);
		} else if (c < 0x80) {
			dt_sb_putc(b, (char)c);
		} else {
			size_t len = utf8_len(s + i, n - i);
			if (len) {
				dt_sb_putn(b, (const char *)s + i, len);
				i += len - 1;
			} else {
				dt_sb_printf(b, "\\u%04x", c);
			}
		}
	}
}

/* ---------------------------------------------------------------- values */

int64_t dt_fmt_read_int(const void *p, uint32_t size, bool is_signed)
{
	switch (size) {
	case 1: {
		uint8_t v;
		memcpy(&v, p, 1);
		return is_signed ? (int64_t)(int8_t)v : (int64_t)v;
	}
	case 2: {
		uint16_t v;
		memcpy(&v, p, 2);
		return is_signed ? (int64_t)(int16_t)v : (int64_t)v;
	}
	case 4: {
		uint32_t v;
		memcpy(&v, p, 4);
		return is_signed ? (int64_t)(int32_t)v : (int64_t)v;
	}
	default: {
		int64_t v;
		memcpy(&v, p, 8);
		return v;
	}
	}
}

static void put_int(dt_sbuf *b, int64_t v, bool is_signed)
{
	if (is_signed)
		dt_sb_printf(b, "%" PRId64, v);
	else
		dt_sb_printf(b, "%" PRIu64, (uint64_t)v);
}

/* Whether a double holds integer v exactly. */
static bool json_exact(int64_t v, bool is_signed)
{
	if (is_signed)
		return (v >= -(1ll << 53) && v <= (1ll << 53)) ||
		       ((double)v < 9223372036854775808.0 && (int64_t)(double)v == v);
	uint64_t u = (uint64_t)v;
	return u <= (1ull << 53) || ((double)u < 18446744073709551616.0 && (uint64_t)(double)u == u);
}

void dt_fmt_int(dt_out *o, dt_sbuf *b, const dt_type *t, int64_t v, bool json)
{
	/* A value of an enum prints as its enumerator's name, as bpftrace's text output does;
	 * JSON keeps the number (bpftrace's too), and so does a value no enumerator has. */
	const char *name = t->kind == DT_T_INT && !json ? dt_enum_name_of(t->enm, v) : NULL;
	if (name)
		dt_sb_puts(b, name);
	else if (t->kind == DT_T_PTR && !json && o && o->current)
		dt_sb_printf(b, "0x%" PRIx64, (uint64_t)v); /* current bpftrace's; 0.17's is decimal */
	else if (json && o && o->current && !json_exact(v, t->is_signed)) {
		/* Current bpftrace's JSON: a number a double cannot hold exactly is a string (RFC
		 * 8259's interoperable numbers), as JSON readers would round it. */
		dt_sb_putc(b, '"');
		put_int(b, v, t->is_signed);
		dt_sb_putc(b, '"');
	} else
		put_int(b, v, t->is_signed);
}

/* The name of number n in `table`, as bpftrace's standard library has them: the C library's
 * text of an errno (strerror) or of a signal 0..64 (strsignal; "N/A" past them), the system
 * call's name ("Unknown syscall" for a number without one). */
static const char *numtext(dt_numtext table, int64_t n)
{
	switch (table) {
	case DT_NUMTEXT_SIGNAL:
		return n >= 0 && n <= 64 ? strsignal((int)n) : "N/A";
	case DT_NUMTEXT_SYSCALL: {
		const char *name = dt_syscall_name(n);
		return name ? name : "Unknown syscall";
	}
	default:
		return strerror((int)n);
	}
}

static void put_quoted(dt_sbuf *b, const char *s, size_t n)
{
	dt_sb_putc(b, '"');
	dt_json_escape(b, s, n);
	dt_sb_putc(b, '"');
}

/* Symbol names as bpftrace prints ksym()/usym() values: the name, no offset; the address in hex
 * when nothing covers it. */
static void put_ksym(dt_out *o, dt_sbuf *b, uint64_t addr)
{
	char name[512];
	if (o->sym)
		dt_sym_kernel(o->sym, addr, false, name, sizeof(name));
	else
		snprintf(name, sizeof(name), "0x%" PRIx64, addr);
	dt_sb_puts(b, name);
}

static void put_usym(dt_out *o, dt_sbuf *b, uint32_t pid, uint32_t gen, uint64_t addr)
{
	char name[512];
	if (o->sym)
		dt_sym_user(o->sym, pid, gen, addr, false, name, sizeof(name));
	else
		snprintf(name, sizeof(name), "0x%" PRIx64, addr);
	dt_sb_puts(b, name);
}

/* A buf() value as bpftrace prints it: printable bytes as themselves and the rest as \xNN
 * (mode 0, %r), every byte as \xNN (mode 'x', %rx) or as hex bytes apart (mode 'h', %rh). */
static void put_buf(dt_sbuf *b, const dt_type *t, const unsigned char *data, char mode)
{
	uint32_t n = DT_MIN((uint32_t)data[0], t->size - 1);

	for (uint32_t i = 0; i < n; i++) {
		unsigned char ch = data[1 + i];

		if (mode == 'h')
			dt_sb_printf(b, i ? " %02x" : "%02x", ch);
		else if (mode == 'x' || ch < 0x20 || ch > 0x7e)
			dt_sb_printf(b, "\\x%02x", ch);
		else
			dt_sb_putc(b, (char)ch);
	}
}

static int64_t mono_to_wall_ns;

static void read_mono_to_wall(void)
{
	struct timespec rt, mono;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	mono_to_wall_ns = ((int64_t)rt.tv_sec - mono.tv_sec) * 1000000000 +
			  (rt.tv_nsec - mono.tv_nsec);
}

/* strftime(): `ns` since boot (bpf_ktime_get_ns, CLOCK_MONOTONIC) as local wall-clock time in
 * `fmt`, with bpftrace's %f for the microseconds. The offset between the two clocks is read
 * once per run, as bpftrace does: read at each call, it moved by a microsecond or so between two
 * reads, so two timestamps 123 µs apart could print 122 µs apart. */
static void put_strftime(dt_sbuf *b, const char *fmt, uint64_t ns)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	char f[512], out[1024];
	size_t k = 0;

	pthread_once(&once, read_mono_to_wall);
	uint64_t wall = (uint64_t)mono_to_wall_ns + ns;
	time_t sec = (time_t)(wall / 1000000000);
	struct tm tm;

	for (const char *p = fmt; *p && k + 8 < sizeof(f); p++) {
		if (p[0] == '%' && p[1] == 'f') {
			k += (size_t)snprintf(f + k, sizeof(f) - k, "%06u",
					      (unsigned)(wall % 1000000000 / 1000));
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			f[k++] = *p++;
			f[k++] = *p;
		} else {
			f[k++] = *p;
		}
	}
	f[k] = '\0';
	if (!localtime_r(&sec, &tm) || !strftime(out, sizeof(out), f, &tm))
		snprintf(out, sizeof(out), "(?)"); /* bpftrace's text for a time it cannot format */
	dt_sb_puts(b, out);
}

/* cgroup_path(): where cgroup `id` (its directory's inode) is in each mounted hierarchy, as
 * bpftrace prints it: "NAME:/path" joined by ',', the v2 hierarchy first as "unified", then the
 * v1 ones by name (the mount point's last component). nftw has no context argument, hence the
 * statics: output runs on one thread. */
static uint64_t cg_find_ino;
static size_t cg_root_len;
static char cg_found[4096];

static int cg_visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag != FTW_D || st->st_ino != cg_find_ino)
		return 0;
	snprintf(cg_found, sizeof(cg_found), "%s", path[cg_root_len] ? path + cg_root_len : "/");
	return 1;
}

static int cg_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void put_cgroup_path(dt_sbuf *b, uint64_t id)
{
	FILE *f = fopen("/proc/self/mounts", "r");
	char dev[256], dir[1024], type[64];
	DT_VEC(char *) found = { 0 };

	if (!f)
		return;
	while (fscanf(f, "%255s %1023s %63s %*[^\n]", dev, dir, type) == 3) {
		bool v2 = !strcmp(type, "cgroup2");
		if (!v2 && strcmp(type, "cgroup"))
			continue;
		cg_find_ino = id;
		cg_root_len = strlen(dir);
		if (nftw(dir, cg_visit, 16, FTW_PHYS) != 1)
			continue;
		const char *name = v2 ? "unified" : strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
		/* A leading space sorts the v2 hierarchy first. */
		char *s = NULL;
		if (asprintf(&s, "%s%s:%s", v2 ? " " : "", name, cg_found) < 0)
			continue;
		DT_VEC_PUSH(&found, s);
	}
	fclose(f);
	qsort(found.v, found.n, sizeof(char *), cg_name_cmp);
	for (size_t i = 0; i < found.n; i++) {
		dt_sb_printf(b, "%s%s", i ? "," : "", found.v[i][0] == ' ' ? found.v[i] + 1 :
			     found.v[i]);
		free(found.v[i]);
	}
	free(found.v);
}

/* A user's name from the password database; the number when it has none. */
static void put_username(dt_sbuf *b, uid_t uid)
{
	struct passwd pw, *res = NULL;
	char buf[1024];

	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res)
		dt_sb_puts(b, res->pw_name);
	else
		dt_sb_printf(b, "%u", (unsigned)uid);
}

/* Whether a C value has a float (bpftrace's none type) in it, in a member or an element. */
static bool holds_float(const dt_type *t)
{
	if (t->kind == DT_T_ARRAY)
		return holds_float(t->array.elem);
	if (t->kind != DT_T_CSTRUCT)
		return t->kind == DT_T_INT && t->is_float;
	for (uint32_t i = 0; i < t->cstruct.n; i++)
		if (!t->cstruct.members[i].bit_size && holds_float(t->cstruct.members[i].type))
			return true;
	return false;
}

void dt_fmt_value(dt_out *o, dt_sbuf *b, const dt_type *t, const void *data, dt_fmt_ctx ctx)
{
	bool json = ctx == DT_FMT_JSON;
	dt_sbuf tmp = {0};

	if (!t || !data)
		return;
	switch (t->kind) {
	case DT_T_INT:
	case DT_T_PTR: /* bpftrace 0.17 prints a pointer as its address in decimal, now in hex */
		if (t->is_float) { /* bpftrace's none type: no value it can show */
			dt_sb_puts(b, "null");
			break;
		}
		dt_fmt_int(o, b, t, dt_fmt_read_int(data, t->size, t->is_signed), json);
		break;
	case DT_T_STR: {
		size_t n = strnlen(data, t->size);
		/* No NUL in its bytes: it was cut (str() reads a byte more than max_strlen). */
		const char *trailer = n && n == t->size && o ? o->trailer : "";
		dt_sbuf *dst = json ? &tmp : b;

		dt_sb_putn(dst, data, n);
		dt_sb_puts(dst, trailer);
		if (json)
			put_quoted(b, dt_sb_str(&tmp), tmp.n);
		break;
	}
	case DT_T_STACK: {
		struct dt_stack_ref ref;
		memcpy(&ref, data, sizeof(ref));
		dt_fmt_stack(o, b, t, &ref, ctx);
		break;
	}
	case DT_T_KSYM:
	case DT_T_USYM: {
		dt_sbuf *dst = json ? &tmp : b;
		if (t->kind == DT_T_KSYM) {
			uint64_t addr;
			memcpy(&addr, data, 8);
			put_ksym(o, dst, addr);
		} else {
			struct dt_usym u;
			memcpy(&u, data, sizeof(u));
			put_usym(o, dst, u.pid, DT_GEN_OF(u.pad), u.addr);
		}
		if (json)
			put_quoted(b, dt_sb_str(&tmp), tmp.n);
		break;
	}
	case DT_T_BUF:
		if (json) {
			put_buf(&tmp, t, data, 0);
			put_quoted(b, dt_sb_str(&tmp), tmp.n);
		} else {
			put_buf(b, t, data, 0);
		}
		break;
	case DT_T_INET: {
		uint64_t af;
		char text[INET6_ADDRSTRLEN] = "";
		memcpy(&af, data, 8);
		if (!inet_ntop(af == AF_INET6 ? AF_INET6 : AF_INET, (const char *)data + 8, text,
			       sizeof(text)))
			snprintf(text, sizeof(text), "(?)");
		if (json)
			put_quoted(b, text, strlen(text));
		else
			dt_sb_puts(b, text);
		break;
	}
	case DT_T_CGROUP_PATH: {
		uint64_t id;
		memcpy(&id, data, 8);
		dt_sbuf *dst = json ? &tmp : b;
		put_cgroup_path(dst, id);
		if (json)
			put_quoted(b, dt_sb_str(&tmp), tmp.n);
		break;
	}
	case DT_T_MACADDR: {
		const unsigned char *m = data;
		char text[18];
		snprintf(text, sizeof(text), "%02X:%02X:%02X:%02X:%02X:%02X", m[0], m[1], m[2],
			 m[3], m[4], m[5]);
		if (json)
			put_quoted(b, text, strlen(text));
		else
			dt_sb_puts(b, text);
		break;
	}
	case DT_T_BOOL: /* 8 bytes, or one in an array */
		dt_sb_puts(b, dt_fmt_read_int(data, t->size, false) ? "true" : "false");
		break;
	case DT_T_STRERROR: {
		int64_t n;
		memcpy(&n, data, 8);
		const char *text = numtext(t->numtext.table, n);
		if (json)
			put_quoted(b, text, strlen(text));
		else
			dt_sb_puts(b, text);
		break;
	}
	case DT_T_USERNAME: {
		uint64_t uid;
		memcpy(&uid, data, 8);
		dt_sbuf *dst = json ? &tmp : b;
		put_username(dst, (uid_t)uid);
		if (json)
			put_quoted(b, dt_sb_str(&tmp), tmp.n);
		break;
	}
	case DT_T_CSTRUCT: {
		/* bpftrace's shapes: `{ .m = 2, .n = 3 }` as a value, `{.m=2,.n=3}` in a key (0.17's;
		 * current bpftrace's key is the value's shape), `{ "m": 2, "n": 3 }` in JSON (0.17's),
		 * `{"m": 2, "n": 3}` in current bpftrace's. A uprobe's args print as current
		 * bpftrace's in any program (print_current), and so does a struct holding a float,
		 * which 0.17 could not print (its print() of one crashed): o says so while its
		 * members print. */
		bool was_current = o && o->current;
		if (o && (t->cstruct.print_current || holds_float(t)))
			o->current = true;
		bool key = ctx == DT_FMT_KEY && !(o && o->current);
		bool tight = key || (json && o && o->current);
		bool first = true;
		dt_sb_puts(b, tight ? "{" : "{ ");
		for (uint32_t i = 0; i < t->cstruct.n; i++) {
			const dt_member *m = &t->cstruct.members[i];
			const char *p = (const char *)data + m->offset;
			if (!first)
				dt_sb_puts(b, json ? ", " : key ? "," : ", ");
			first = false;
			if (json)
				dt_sb_printf(b, "\"%s\": ", m->name);
			else if (m->name[0])
				dt_sb_printf(b, key ? ".%s=" : ".%s = ", m->name);
			if (m->bit_size) {
				uint64_t w = 0;
				memcpy(&w, p, DT_MIN((m->bit_off + m->bit_size + 7u) / 8, 8u));
				w = (w >> m->bit_off) & (m->bit_size >= 64 ? ~0ull
								   : (1ull << m->bit_size) - 1);
				put_int(b, (int64_t)w, false);
			} else {
				dt_fmt_value(o, b, m->type, p, ctx);
			}
		}
		dt_sb_puts(b, tight ? "}" : " }");
		if (o)
			o->current = was_current;
		break;
	}
	case DT_T_ARRAY: {
		const dt_type *el = t->array.elem;
		dt_sb_putc(b, '[');
		for (uint32_t i = 0; i < t->array.n; i++) {
			if (i)
				dt_sb_putc(b, ',');
			dt_fmt_value(o, b, el, (const char *)data + (size_t)i * el->size, ctx);
		}
		dt_sb_putc(b, ']');
		break;
	}
	case DT_T_TUPLE:
		if (t->tuple.names) {
			/* A record, as bpftrace prints one: `{ .a = 1, .b = str }`, an object in
			 * JSON. */
			dt_sb_puts(b, json ? "{" : "{ ");
			for (uint32_t i = 0; i < t->tuple.n; i++) {
				if (i)
					dt_sb_puts(b, ", ");
				if (json)
					dt_sb_printf(b, "\"%s\": ", t->tuple.names[i]);
				else
					dt_sb_printf(b, ".%s = ", t->tuple.names[i]);
				dt_fmt_value(o, b, t->tuple.elems[i],
					     (const char *)data + t->tuple.offsets[i], ctx);
			}
			dt_sb_puts(b, json ? "}" : " }");
			break;
		}
		dt_sb_putc(b, json ? '[' : '(');
		for (uint32_t i = 0; i < t->tuple.n; i++) {
			if (i)
				dt_sb_puts(b, json ? "," : ", ");
			dt_fmt_value(o, b, t->tuple.elems[i],
				     (const char *)data + t->tuple.offsets[i], ctx);
		}
		dt_sb_putc(b, json ? ']' : ')');
		break;
	case DT_T_TIMESTAMP:
		if (t->ts.fmt) {
			uint64_t ns;
			memcpy(&ns, data, 8);
			dt_sbuf *dst = json ? &tmp : b;
			put_strftime(dst, t->ts.fmt, ns);
			if (json)
				put_quoted(b, dt_sb_str(&tmp), tmp.n);
			break;
		}
		/* fall through */
	case DT_T_COUNT:
	case DT_T_SUM:
	case DT_T_MIN:
	case DT_T_MAX: {
		/* An aggregation read outside a map (already combined): its first 8 bytes. */
		int64_t v;
		memcpy(&v, data, 8);
		put_int(b, v, t->is_signed || t->kind != DT_T_COUNT);
		break;
	}
	default:
		/* VOID, NONE, RECORD and the bucketed aggregations have no single-value form; say so
		 * rather than print bytes that mean nothing. */
		if (json)
			dt_sb_puts(b, "null");
		break;
	}
	free(tmp.s);
}

/* ---------------------------------------------------------------- stacks */

/* A ustack_dwarf walk that stopped for want of its process's tables (a process that ran the probe
 * before they were read: one started after tracing began): once a session, on the notice stream,
 * bpftrace's warning for a process it has no DWARF data for, then why here and how to avoid it. */
static void no_tables_warning(dt_out *o, const struct dt_stack_ref *ref)
{
	if (o->warned_no_tables || (ref->flags & DT_UNWIND_STATUS_MASK) != DT_UNWIND_NO_TABLES)
		return;
	o->warned_no_tables = true;
	fprintf(o->notice, "WARNING: No DWARF unwind data available for this process (pid %u) "
		"yet: its stack stops at [stopped: no tables yet]\n"
		"HINT: a process's unwind tables are read when it is first seen, and it ran the "
		"probe before they were; its later stacks unwind. -p, -c or --dwarf-pid reads them "
		"before tracing starts\n", ref->pid);
	fflush(o->notice);
}

bool dt_fmt_stack_end(const dt_type *t, const struct dt_stack_ref *ref, char *buf, size_t n)
{
	/* The walker's statuses and their words, from the one table beside the enum. */
	static const char *const text[DT_UNWIND_STATUS_MASK + 1] = {
#define STATUS_TEXT(id, value, wstat, txt) [DT_UNWIND_##id] = txt,
		DT_UNWIND_STATUSES(STATUS_TEXT)
#undef STATUS_TEXT
	};
	uint32_t st = ref->flags & DT_UNWIND_STATUS_MASK;
	uint32_t depth = t->stack.depth ? t->stack.depth : DT_STACK_DEFAULT_DEPTH;

	/* Only ustack_dwarf knows how its walk ended; the kernel's stack maps do not say. */
	if (t->stack.kind != DT_STACK_USER_DWARF || st == DT_UNWIND_NONE ||
	    st == DT_UNWIND_COMPLETE || !text[st])
		return false;
	if (st == DT_UNWIND_TRUNCATED_DEPTH)
		snprintf(buf, n, "[truncated at depth %u]", DT_MIN(depth, (uint32_t)DT_STACK_MAX_DEPTH));
	else if (st == DT_UNWIND_TRUNCATED_TAILCALLS)
		snprintf(buf, n, "[truncated: tail call limit]");
	else
		snprintf(buf, n, "[stopped: %s]",
			 strncmp(text[st], "error: ", 7) ? text[st] : text[st] + 7);
	return true;
}

/* One frame as JSON for programs that want the parts, not a string to split:
 * {"addr": "0x...", "func": NAME or null, "offset": N, "module": PATH or null} and, when they
 * apply, "inlined": true, "file" and "line". `fr` is the user frame (NULL for kernel frames and
 * when nothing symbolizes); `text` the frame's printed form, which gives a kernel frame's parts. */
static void put_frame_object(dt_out *o, dt_sbuf *b, const dt_type *t,
			     const struct dt_stack_ref *ref, uint64_t addr, const dt_sym_frame *fr,
			     const char *text)
{
	const char *module = NULL;

	dt_sb_printf(b, "{\"addr\": \"0x%" PRIx64 "\", \"func\": ", addr);
	if (fr) {
		if (fr->name)
			put_quoted(b, fr->name, strlen(fr->name));
		else
			dt_sb_puts(b, "null");
		if (fr->name && !fr->inlined)
			dt_sb_printf(b, ", \"offset\": %" PRIu64, fr->off);
		module = dt_sym_user_path(o->sym, ref->pid, DT_GEN_OF(ref->flags), addr);
	} else if (t->stack.kind == DT_STACK_KERNEL && o->sym && text[0] && !strchr(text, ' ') &&
		   strncmp(text, "0x", 2)) {
		/* "name+off" or "[module]+0xoff": the name and the decimal offset after '+'. */
		const char *plus = strrchr(text, '+');
		bool dec = plus && plus[1] && strspn(plus + 1, "0123456789") == strlen(plus + 1);

		if (text[0] == '[')
			dt_sb_puts(b, "null");
		else
			put_quoted(b, text, dec ? (size_t)(plus - text) : strlen(text));
		if (dec && text[0] != '[')
			dt_sb_printf(b, ", \"offset\": %s", plus + 1);
		module = dt_sym_kernel_module(o->sym, addr);
	} else {
		dt_sb_puts(b, "null");
	}
	dt_sb_puts(b, ", \"module\": ");
	if (module)
		put_quoted(b, module, strlen(module));
	else
		dt_sb_puts(b, "null");
	if (fr && fr->inlined)
		dt_sb_puts(b, ", \"inlined\": true");
	if (fr && fr->file) {
		dt_sb_puts(b, ", \"file\": ");
		put_quoted(b, fr->file, strlen(fr->file));
		dt_sb_printf(b, ", \"line\": %u", fr->line);
	}
	dt_sb_putc(b, '}');
}

/* A named user frame as bpftrace prints it with show_debug_info: `[inlined] func@file:line`
 * or `func+off@file:line` (no `@…` without a line); in perf mode the name alone (the caller adds
 * the module, or " (inlined)"), since bpftrace's perf frames carry no file. */
static void debug_info_frame_text(const dt_sym_frame *f, bool perf, char *buf, size_t n)
{
	int k;

	if (f->inlined)
		k = snprintf(buf, n, "%s%s", perf ? "" : "[inlined] ", f->name);
	else
		k = snprintf(buf, n, "%s+%" PRIu64, f->name, f->off);
	if (!perf && f->file && k >= 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, "@%s:%u", f->file, f->line);
}

/* A frame of a build_id stack, as bpftrace prints one: the build ID of the file the address is
 * in, in hex, and the address's offset in that file; the address alone (hex) when the file is
 * not known or has no build ID. Named in userspace from the process's mappings, so ustack_dwarf
 * has the mode too. */
static void put_build_id_frame(dt_out *o, dt_sbuf *line, const struct dt_stack_ref *ref,
			       uint64_t addr)
{
	const uint8_t *id;
	uint64_t off;
	size_t n = o->sym ? dt_sym_user_build_id(o->sym, ref->pid, DT_GEN_OF(ref->flags), addr,
						 &id, &off) : 0;

	if (!n) {
		dt_sb_printf(line, "%" PRIx64, addr);
		return;
	}
	for (size_t i = 0; i < n; i++)
		dt_sb_printf(line, "%02x", id[i]);
	dt_sb_printf(line, " 0x%02" PRIx64, off);
}

void dt_fmt_stack(dt_out *o, dt_sbuf *b, const dt_type *t, const struct dt_stack_ref *ref,
		  dt_fmt_ctx ctx)
{
	bool json = ctx == DT_FMT_JSON;
	bool user = t->stack.kind != DT_STACK_KERNEL;
	uint32_t max = t->stack.depth ? t->stack.depth : DT_STACK_DEFAULT_DEPTH;
	if (max > DT_STACK_MAX_DEPTH)
		max = DT_STACK_MAX_DEPTH;
	uint64_t *frames = xcalloc(max, sizeof(*frames));
	int n = o->stack_frames ? o->stack_frames(o->stack_ctx, t, ref, frames, max) : -ENOSYS;

	/* bpftrace prints nothing at all for a stack it cannot look up (e.g. kstack taken in user
	 * mode): keep that, so keys like `@[kstack, comm]` read the same. */
	if (n < 0) {
		if (json)
			dt_sb_puts(b, "[]");
		goto out;
	}
	if ((uint32_t)n > max)
		n = (int)max;

	dt_sb_puts(b, json ? "[" : "\n");
	for (int i = 0, shown = 0; i < n; i++) {
		uint64_t addr = frames[i];
		dt_sym_frame fr[DT_SYM_MAX_INLINE];
		int nf = 1;

		if (addr == 0)
			break;
		memset(fr, 0, sizeof(fr));
		/* Every frame but the first holds a return address: its inline context and line
		 * are the call's. An address gives one line per inlined callee, then its own. */
		if (t->stack.mode == DT_STACKMODE_RAW || t->stack.mode == DT_STACKMODE_BUILD_ID ||
		    !o->sym)
			;
		else if (user)
			nf = DT_MAX(dt_sym_user_frames(o->sym, ref->pid, DT_GEN_OF(ref->flags),
						       addr, i > 0, fr, DT_SYM_MAX_INLINE), 1);
		for (int k = 0; k < nf; k++, shown++) {
			char sym[1024];
			dt_sbuf line = {0};

			if (t->stack.mode == DT_STACKMODE_RAW || t->stack.mode == DT_STACKMODE_BUILD_ID)
				sym[0] = '\0'; /* addresses only: nothing to look up */
			else if (o->sym && user && o->debug_info_at && fr[k].name && !fr[k].python)
				debug_info_frame_text(&fr[k], t->stack.mode == DT_STACKMODE_PERF, sym,
						      sizeof(sym));
			else if (o->sym && user)
				dt_sym_frame_text(&fr[k], addr, true, sym, sizeof(sym));
			else if (o->sym)
				dt_sym_kernel(o->sym, addr, true, sym, sizeof(sym));
			else
				snprintf(sym, sizeof(sym), "0x%" PRIx64, addr);

			switch (t->stack.mode) {
			case DT_STACKMODE_PERF:
				dt_sb_printf(&line, "%" PRIx64 " %s", addr, sym);
				if (user && o->debug_info_at && fr[k].inlined) {
					dt_sb_puts(&line, " (inlined)"); /* bpftrace's word for it */
				} else if (user) {
					const char *path = o->sym ? dt_sym_user_path(o->sym,
						ref->pid, DT_GEN_OF(ref->flags), addr) : NULL;
					/* bpftrace says [unknown] whenever the symbol is; we still
					 * name the file when the address is in one, as perf does. */
					dt_sb_printf(&line, " (%s)", path ? path : "[unknown]");
				}
				break;
			case DT_STACKMODE_RAW:
				dt_sb_printf(&line, "%" PRIx64, addr);
				break;
			case DT_STACKMODE_BUILD_ID:
				put_build_id_frame(o, &line, ref, addr);
				break;
			default:
				dt_sb_puts(&line, sym);
				break;
			}

			if (json && o->json_frames) {
				if (shown)
					dt_sb_puts(b, ", ");
				put_frame_object(o, b, t, ref, addr, o->sym && user ? &fr[k] : NULL,
						 sym);
			} else if (json) {
				if (shown)
					dt_sb_puts(b, ", ");
				put_quoted(b, dt_sb_str(&line), line.n);
			} else if (t->stack.mode == DT_STACKMODE_PERF) {
				dt_sb_printf(b, "\t%s\n", dt_sb_str(&line));
			} else if (t->stack.mode == DT_STACKMODE_RAW ||
				   t->stack.mode == DT_STACKMODE_BUILD_ID) {
				dt_sb_printf(b, "%s\n", dt_sb_str(&line));
			} else {
				dt_sb_printf(b, "%*s%s\n", ctx == DT_FMT_KEY ? 4 : 8, "",
					     dt_sb_str(&line));
			}
			free(line.s);
		}
	}
	char end[128];
	/* A sample taken as a process starts (in the exec's return, before its tables could be
	 * read) has one frame, the entry point: nothing is missing, whatever the walker knew. */
	bool at_entry = user && n == 1 && o->sym &&
			(ref->flags & DT_UNWIND_STATUS_MASK) == DT_UNWIND_NO_TABLES &&
			dt_sym_user_at_entry(o->sym, ref->pid, DT_GEN_OF(ref->flags), frames[0]);
	if (!at_entry && dt_fmt_stack_end(t, ref, end, sizeof(end))) {
		if (!json)
			no_tables_warning(o, ref);
		if (json && o->json_frames)
			dt_sb_printf(b, "%s{\"marker\": \"%s\"}", n ? ", " : "", end);
		else if (json)
			dt_sb_printf(b, "%s\"%s\"", n ? ", " : "", end);
		else if (t->stack.mode == DT_STACKMODE_PERF)
			dt_sb_printf(b, "\t%s\n", end);
		else if (t->stack.mode == DT_STACKMODE_RAW || t->stack.mode == DT_STACKMODE_BUILD_ID)
			dt_sb_printf(b, "%s\n", end);
		else
			dt_sb_printf(b, "%*s%s\n", ctx == DT_FMT_KEY ? 4 : 8, "", end);
	}
	if (json)
		dt_sb_putc(b, ']');
out:
	free(frames);
}

/* ---------------------------------------------------------------- histograms */

/* 2^power with bpftrace's K/M/G/T suffixes: 1, 2, …, 512, 1K, …, 512K, 1M, … */
/* The text of hist label j: where bucket j ends (bucket j + 1 starts). Up to 2^(bits+1) it is the
 * number; above, bpftrace's 2^p * (2^bits + low bits) with the largest power of 1024 as a
 * K/M/G/T/P/E suffix (1K, 2K, 11K with bits 3). */
static void hist_label(dt_sbuf *b, uint32_t j, uint32_t bits)
{
	uint32_t n = 1u << bits;

	if (j <= 2 * n) {
		dt_sb_printf(b, "%u", j);
		return;
	}
	uint32_t p = (j >> bits) - 1, decade = p / 10;
	dt_sb_printf(b, "%" PRIu64, ((uint64_t)1 << (p - 10 * decade)) * (n + (j & (n - 1))));
	if (decade)
		dt_sb_putc(b, "KMGTPE"[decade - 1]);
}

static void lhist_label(dt_sbuf *b, int64_t v)
{
	if (v != 0 && v % 1048576 == 0)
		dt_sb_printf(b, "%" PRId64 "M", v / 1048576);
	else if (v != 0 && v % 1024 == 0)
		dt_sb_printf(b, "%" PRId64 "K", v / 1024);
	else
		dt_sb_printf(b, "%" PRId64, v);
}

/* One text bucket line: label left in 16 columns, count right in 8, then a bar of up to 52 '@'
 * scaled to the largest bucket (computed in float, as bpftrace does, so the widths match). */
static void bucket_line(dt_sbuf *b, const char *label, uint64_t count, uint64_t shown,
			uint64_t max_value)
{
	char bar[53];
	int w = max_value ? (int)((float)count / (float)max_value * 52) : 0;
	if (w < 0)
		w = 0;
	if (w > 52)
		w = 52;
	memset(bar, '@', (size_t)w);
	bar[w] = '\0';
	dt_sb_printf(b, "%-16s%8" PRIu64 " |%-52s|\n", label, shown, bar);
}

/* The first and last non-empty buckets and the largest count, shared by hist and lhist (bars
 * are scaled to the largest count of all buckets). With every bucket empty it prints JSON's
 * empty list (text prints nothing) and returns false. */
static bool bucket_range(dt_sbuf *b, const uint64_t *counts, uint32_t n, bool json, int *lo,
			 int *hi, uint64_t *max_value)
{
	*lo = *hi = -1;
	*max_value = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (counts[i] > 0) {
			if (*lo < 0)
				*lo = (int)i;
			*hi = (int)i;
		}
		if (counts[i] > *max_value)
			*max_value = counts[i];
	}
	if (*hi < 0 && json)
		dt_sb_puts(b, "[]");
	return *hi >= 0;
}

void dt_fmt_hist(dt_sbuf *b, const uint64_t *counts, uint32_t n, uint32_t bits, uint64_t div,
		 bool json)
{
	int lo, hi;
	uint64_t max_value;
	dt_sbuf label = {0};

	if (!div)
		div = 1;
	if (!bucket_range(b, counts, n, json, &lo, &hi, &max_value))
		return;
	if (json)
		dt_sb_putc(b, '[');
	for (int i = lo; i <= hi; i++) {
		if (json) {
			if (i > lo)
				dt_sb_puts(b, ", ");
			dt_sb_putc(b, '{');
			if (i == 0)
				dt_sb_puts(b, "\"max\": -1, ");
			else
				dt_sb_printf(b, "\"min\": %" PRId64 ", \"max\": %" PRId64 ", ",
					     (int64_t)dt_hist_bucket_start((uint32_t)i, bits),
					     (int64_t)(dt_hist_bucket_start((uint32_t)i + 1, bits) - 1));
			dt_sb_printf(b, "\"count\": %" PRIu64 "}", counts[i] / div);
			continue;
		}
		dt_sb_reset(&label);
		if (i == 0) {
			dt_sb_puts(&label, "(..., 0)");
		} else if ((uint32_t)i <= 2u << bits) { /* one value */
			dt_sb_printf(&label, "[%d]", i - 1);
		} else {
			dt_sb_putc(&label, '[');
			hist_label(&label, (uint32_t)i - 1, bits);
			dt_sb_puts(&label, ", ");
			hist_label(&label, (uint32_t)i, bits);
			dt_sb_putc(&label, ')');
		}
		bucket_line(b, dt_sb_str(&label), counts[i], counts[i] / div, max_value);
	}
	if (json)
		dt_sb_putc(b, ']');
	free(label.s);
}

void dt_fmt_lhist(dt_sbuf *b, const uint64_t *counts, uint32_t n, int64_t min, int64_t max,
		  int64_t step, bool json)
{
	/* n comes from dt_lhist_nbuckets, the rule codegen fills buckets by: the last in-range
	 * bucket may be cut short by max, and its label says so. */
	int64_t buckets = n >= 2 ? (int64_t)n - 2 : 0;
	int lo32, hi32;
	int64_t lo, hi;
	uint64_t max_value;
	dt_sbuf label = {0};

	if (!bucket_range(b, counts, n, json, &lo32, &hi32, &max_value))
		return;
	lo = lo32;
	hi = hi32;
	if (json)
		dt_sb_putc(b, '[');
	for (int64_t i = lo; i <= hi; i++) {
		if (json) {
			if (i > lo)
				dt_sb_puts(b, ", ");
			dt_sb_putc(b, '{');
			if (i == 0)
				dt_sb_printf(b, "\"max\": %" PRId64 ", ", min - 1);
			else if (i == buckets + 1)
				dt_sb_printf(b, "\"min\": %" PRId64 ", ", max);
			else
				dt_sb_printf(b, "\"min\": %" PRId64 ", \"max\": %" PRId64 ", ",
					     (i - 1) * step + min, DT_MIN(i * step + min, max) - 1);
			dt_sb_printf(b, "\"count\": %" PRIu64 "}", counts[i]);
			continue;
		}
		dt_sb_reset(&label);
		if (i == 0) {
			dt_sb_puts(&label, "(..., ");
			lhist_label(&label, min);
			dt_sb_putc(&label, ')');
		} else if (i == buckets + 1) {
			dt_sb_putc(&label, '[');
			lhist_label(&label, max);
			dt_sb_puts(&label, ", ...)");
		} else {
			dt_sb_putc(&label, '[');
			lhist_label(&label, (i - 1) * step + min);
			dt_sb_puts(&label, ", ");
			lhist_label(&label, DT_MIN(i * step + min, max));
			dt_sb_putc(&label, ')');
		}
		bucket_line(b, dt_sb_str(&label), counts[i], counts[i], max_value);
	}
	if (json)
		dt_sb_putc(b, ']');
	free(label.s);
}

/* ---------------------------------------------------------------- printf */

/* A parsed conversion: the flags/width/precision text to reuse, the length modifier's class and
 * the conversion character. */
struct conv {
	char flags[48]; /* "%", flags, width, precision — without length and conversion */
	int len;        /* -2 hh, -1 h, 0 none, 1 l/ll/z/j/t/q/L */
	char c;         /* 'g': %gr (GFP flags) */
	char rmode;     /* %r: 0, or the 'x' of %rx / the 'h' of %rh; %gr: its 'r' */
};

/* Parses the conversion at p (just after '%'); returns its length, or 0 if it is not one we
 * know (the caller then copies the '%' literally). */
static size_t parse_conv(const char *p, struct conv *cv)
{
	const char *s = p;
	size_t k = 0;
	cv->flags[k++] = '%';
	while (*p && strchr("-+ #0", *p) && k < 20)
		cv->flags[k++] = *p++;
	/* Widths and precisions of at most 4 digits: a 10-digit width would make a gigabyte of
	 * padding out of one event. Longer ones, and '*', are copied literally. */
	for (int d = 0; *p >= '0' && *p <= '9'; d++) {
		if (d == 4)
			return 0;
		cv->flags[k++] = *p++;
	}
	if (*p == '.') {
		cv->flags[k++] = *p++;
		for (int d = 0; *p >= '0' && *p <= '9'; d++) {
			if (d == 4)
				return 0;
			cv->flags[k++] = *p++;
		}
	}
	if (*p == '*')
		return 0;
	cv->flags[k] = '\0';
	cv->len = 0;
	if (p[0] == 'h' && p[1] == 'h') {
		cv->len = -2;
		p += 2;
	} else if (p[0] == 'h') {
		cv->len = -1;
		p++;
	} else if (p[0] == 'l' && p[1] == 'l') {
		cv->len = 1;
		p += 2;
	} else if (*p && strchr("lzjtqL", *p)) {
		cv->len = 1;
		p++;
	}
	if (!*p || !(strchr("diouxXcspr", *p) || (p[0] == 'g' && p[1] == 'r')))
		return 0;
	cv->c = *p++;
	cv->rmode = 0;
	if ((cv->c == 'r' && (*p == 'x' || *p == 'h')) || cv->c == 'g')
		cv->rmode = *p++;
	return (size_t)(p - s);
}

/* Formats one integer of `size` bytes the way C's printf does with this conversion. An explicit
 * length modifier decides how many of its bits are read (%hhx of 300 prints 2c). Without one, in
 * the current language (c_int), the conversion reads a C int as current bpftrace's does (%x of
 * 0x12345678abcdef prints 78abcdef); in 0.17's the argument's own width does, as in DTrace: %d
 * of a 64-bit value (a literal, nsecs, a map count) prints the whole value, not its low 32 bits
 * (bpftrace 0.17 prints 705032704 for printf("%d", 5000000000) and negative numbers for %d of
 * nsecs), while %x of an int32 stays 32 bits wide. */
static void conv_int(dt_sbuf *b, const struct conv *cv, int64_t v, uint32_t size, bool arg_signed,
		     bool c_int)
{
	char spec[64];
	bool is_signed = cv->c == 'd' || cv->c == 'i';
	/* %d of an unsigned argument narrower than 64 bits prints its value ((uint32)-1 is
	 * 4294967295), which the 64-bit form holds. */
	int len = cv->len == 0 && !c_int && (size > 4 || (is_signed && !arg_signed)) ? 1 : cv->len;

	if (cv->c == 'c') {
		snprintf(spec, sizeof(spec), "%sc", cv->flags);
		dt_sb_printf(b, spec, (int)(unsigned char)v);
		return;
	}
	if (cv->c == 'p') {
		snprintf(spec, sizeof(spec), "%sp", cv->flags);
		dt_sb_printf(b, spec, (void *)(uintptr_t)v);
		return;
	}
	switch (len) {
	case -2:
		snprintf(spec, sizeof(spec), "%shh%c", cv->flags, cv->c);
		if (is_signed)
			dt_sb_printf(b, spec, (int)(signed char)v);
		else
			dt_sb_printf(b, spec, (unsigned)(unsigned char)v);
		break;
	case -1:
		snprintf(spec, sizeof(spec), "%sh%c", cv->flags, cv->c);
		if (is_signed)
			dt_sb_printf(b, spec, (int)(short)v);
		else
			dt_sb_printf(b, spec, (unsigned)(unsigned short)v);
		break;
	case 0:
		snprintf(spec, sizeof(spec), "%s%c", cv->flags, cv->c);
		if (is_signed)
			dt_sb_printf(b, spec, (int)v);
		else
			dt_sb_printf(b, spec, (unsigned)v);
		break;
	default:
		snprintf(spec, sizeof(spec), "%sll%c", cv->flags, cv->c);
		if (is_signed)
			dt_sb_printf(b, spec, (long long)v);
		else
			dt_sb_printf(b, spec, (unsigned long long)v);
		break;
	}
}

void dt_fmt_printf(dt_out *o, dt_sbuf *b, const char *fmt, const dt_type *args, const void *data,
		   size_t len)
{
	uint32_t argi = 0;
	uint32_t nargs = 0;
	dt_sbuf tmp = {0};

	if (!fmt)
		return;
	if (args && args->kind == DT_T_TUPLE)
		nargs = args->tuple.n;

	for (const char *p = fmt; *p;) {
		const char *pct = strchr(p, '%');
		if (!pct) {
			dt_sb_puts(b, p);
			break;
		}
		dt_sb_putn(b, p, (size_t)(pct - p));
		if (pct[1] == '%') {
			dt_sb_putc(b, '%');
			p = pct + 2;
			continue;
		}
		struct conv cv;
		size_t cl = parse_conv(pct + 1, &cv);
		if (!cl) {
			dt_sb_putc(b, '%');
			p = pct + 1;
			continue;
		}
		p = pct + 1 + cl;

		if (argi >= nargs)
			continue; /* checked at compile time; never trust a payload to agree */
		const dt_type *at = args->tuple.elems[argi];
		uint32_t off = args->tuple.offsets[argi];
		argi++;
		if ((size_t)off + at->size > len)
			continue;
		const char *ap = (const char *)data + off;

		if ((at->kind == DT_T_INT || at->kind == DT_T_PTR || at->kind == DT_T_BOOL) &&
		    cv.c == 'g') {
			/* The names are text: the width applies, a precision does not (bpftrace's). */
			char spec[64];
			dt_sb_reset(&tmp);
			dt_fmt_gfp(&tmp, (uint64_t)dt_fmt_read_int(ap, at->size, at->is_signed));
			snprintf(spec, sizeof(spec), "%.*ss", (int)strcspn(cv.flags, "."), cv.flags);
			dt_sb_printf(b, spec, dt_sb_str(&tmp));
			continue;
		}
		if ((at->kind == DT_T_INT || at->kind == DT_T_PTR || at->kind == DT_T_BOOL) &&
		    cv.c != 's') {
			conv_int(b, &cv, dt_fmt_read_int(ap, at->size, at->is_signed), at->size,
				 at->is_signed, o && o->current);
			continue;
		}
		if (at->kind == DT_T_BUF) {
			put_buf(b, at, (const unsigned char *)ap, cv.rmode);
			continue;
		}
		/* Strings, symbols, stacks and tuples print as their text, with the spec's width and
		 * precision; an integer under %s prints as its decimal text. */
		char spec[64];
		dt_sb_reset(&tmp);
		dt_fmt_value(o, &tmp, at, ap, DT_FMT_VALUE);
		snprintf(spec, sizeof(spec), "%ss", cv.flags);
		dt_sb_printf(b, spec, dt_sb_str(&tmp));
	}
	free(tmp.s);
}
