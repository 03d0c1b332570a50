/* profile.c — stack-keyed maps as profiles for the tools people look at them with. One model serves
 * three outputs: a map entry becomes a sample (its combined value, the frames of every stack in its
 * key, the other key parts as labels), frames are resolved once per (process, address) into
 * locations that carry their inlined callees, and then: folded lines (`-f folded`, for
 * flamegraph.pl, inferno, speedscope: other key parts first, user frames outer to inner, then
 * kernel frames), a gzipped pprof profile.proto (--pprof: one sample type per map, locations with
 * mappings, addresses, functions and inline lines, labels for pid and comm) written through
 * protobuf-c, and a self-contained interactive SVG flame graph (--flamegraph: click to zoom, search,
 * tooltips with counts and percentages, all in the file's own script). */
#include "output/output_internal.h"
#include "common/common.h"
#include "profile.pb-c.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* ---------------------------------------------------------------- key parts */

static uint32_t key_n(const dt_type *key)
{
	return !key ? 0 : key->kind == DT_T_TUPLE ? key->tuple.n : 1;
}

static const dt_type *key_elem(const dt_type *key, uint32_t i, uint32_t *off)
{
	*off = key->kind == DT_T_TUPLE ? key->tuple.offsets[i] : 0;
	return key->kind == DT_T_TUPLE ? key->tuple.elems[i] : key;
}

bool dt_prof_key_has_stack(const dt_type *key)
{
	uint32_t off;

	for (uint32_t i = 0; i < key_n(key); i++)
		if (key_elem(key, i, &off)->kind == DT_T_STACK)
			return true;
	return false;
}

/* One frame as a flame graph names it: the function (no offset: flame graphs merge by function),
 * else [module]+0xoff, else the address, as text names it (dt_sym_frame_text); kernel and
 * inlined frames annotated. */
static void frame_label(dt_sbuf *b, const dt_sym_frame *f, uint64_t addr, bool kernel)
{
	char buf[1024];
	dt_sym_frame plain = *f;

	plain.inlined = false; /* "_[i]" below, not " [inlined]" */
	dt_sym_frame_text(&plain, addr, false, buf, sizeof(buf));
	dt_sb_puts(b, buf);
	if (kernel)
		dt_sb_puts(b, "_[k]");
	else if (f->inlined)
		dt_sb_puts(b, "_[i]");
}

/* The frames of one stack value, leaf first, each address expanded into its inlined callees
 * (innermost first). Returns how many; *out and *addrs_out are malloc'd (kernel names too). */
static size_t stack_frames(dt_out *o, const dt_type *t, const struct dt_stack_ref *ref,
			   dt_sym_frame **out, uint64_t **addrs_out)
{
	uint32_t max = t->stack.depth ? t->stack.depth : DT_STACK_DEFAULT_DEPTH;
	bool kernel = t->stack.kind == DT_STACK_KERNEL;
	DT_VEC(dt_sym_frame) v = {0};
	DT_VEC(uint64_t) a = {0};

	if (max > DT_STACK_MAX_DEPTH)
		max = DT_STACK_MAX_DEPTH;
	uint64_t *frames = xcalloc(max, sizeof(*frames));
	int n = o->stack_frames ? o->stack_frames(o->stack_ctx, t, ref, frames, max) : -ENOSYS;

	for (int i = 0; i < n && (uint32_t)i < max && frames[i]; i++) {
		dt_sym_frame fr[DT_SYM_MAX_INLINE];
		int nf = 1;

		memset(fr, 0, sizeof(fr));
		if (kernel) {
			char name[512];
			bool ok = o->sym && !dt_sym_kernel(o->sym, frames[i], false, name, sizeof(name));
			fr[0].name = ok ? xstrdup(name) : NULL;
		} else if (o->sym) {
			nf = DT_MAX(dt_sym_user_frames(o->sym, ref->pid, DT_GEN_OF(ref->flags),
						       frames[i], i > 0, fr, DT_SYM_MAX_INLINE), 1);
		}
		for (int k = 0; k < nf; k++) {
			DT_VEC_PUSH(&v, fr[k]);
			DT_VEC_PUSH(&a, frames[i]);
		}
	}
	free(frames);
	*out = v.v;
	*addrs_out = a.v;
	return v.n;
}

static void free_frames(dt_sym_frame *f, size_t n, bool kernel)
{
	if (kernel)
		for (size_t i = 0; i < n; i++)
			free((char *)f[i].name);
	free(f);
}

/* Text of a non-stack key part (for folded prefixes and labels). */
static void part_text(dt_out *o, dt_sbuf *b, const dt_type *e, const uint8_t *p)
{
	dt_fmt_value(o, b, e, p, DT_FMT_VALUE);
}

void dt_prof_folded_key(dt_out *o, dt_sbuf *b, const dt_type *key, const uint8_t *data)
{
	bool first = true;
	uint32_t off;

	for (uint32_t i = 0; i < key_n(key); i++) {
		const dt_type *e = key_elem(key, i, &off);
		if (e->kind == DT_T_STACK)
			continue;
		if (!first)
			dt_sb_putc(b, ';');
		part_text(o, b, e, data + off);
		first = false;
	}
	/* User stacks before kernel stacks: the kernel is entered from user code, so its frames are
	 * nearer the leaf. */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < key_n(key); i++) {
			const dt_type *e = key_elem(key, i, &off);
			bool kernel;
			if (e->kind != DT_T_STACK)
				continue;
			kernel = e->stack.kind == DT_STACK_KERNEL;
			if (kernel != (pass == 1))
				continue;
			struct dt_stack_ref ref;
			dt_sym_frame *f;
			uint64_t *addrs;
			memcpy(&ref, data + off, sizeof(ref));
			size_t n = stack_frames(o, e, &ref, &f, &addrs);
			char end[128];
			/* Where the walk stopped is the outermost thing known: the root side. */
			if (dt_fmt_stack_end(e, &ref, end, sizeof(end))) {
				if (!first)
					dt_sb_putc(b, ';');
				dt_sb_puts(b, end);
				first = false;
			}
			for (size_t k = n; k-- > 0;) {
				if (!first)
					dt_sb_putc(b, ';');
				frame_label(b, &f[k], addrs[k], kernel);
				first = false;
			}
			free_frames(f, n, kernel);
			free(addrs);
		}
	}
	if (first)
		dt_sb_puts(b, "[empty]");
}

/* ---------------------------------------------------------------- the model */

struct loc {
	uint32_t pid, gen; /* 0 for kernel addresses; gen: the image (dt_abi.h DT_GEN_SHIFT) */
	uint64_t addr;
	bool kernel, ret;
	uint64_t id;  /* pprof Location.id, 1-based */
	uint32_t first, n; /* frames (innermost first) in prof.frames */
	uint64_t mapping;  /* pprof Mapping.id */
};

struct sample {
	uint32_t map;
	int64_t value;
	uint32_t loc_first, nlocs;   /* leaf first, in prof.sample_locs */
	uint32_t lab_first, nlabs;   /* in prof.labels */
	char *folded;                /* root-first frame names joined by ';' */
};

struct label {
	const char *key; /* interned in prof.strs */
	const char *str; /* or NULL for a number */
	int64_t num;
};

struct prof {
	dt_out *o;
	DT_VEC(dt_profile_map) maps;   /* the stack maps taken, in order; sample.map indexes it */
	DT_VEC(struct sample) samples;
	DT_VEC(struct loc) locs;
	uint32_t *loc_hash;
	size_t loc_hash_n;
	DT_VEC(uint32_t) sample_locs;
	DT_VEC(dt_sym_frame) frames;
	DT_VEC(struct label) labels;
	DT_VEC(char *) owned; /* strings the model allocated */
};

static const char *own(struct prof *p, char *s)
{
	DT_VEC_PUSH(&p->owned, s);
	return s;
}

static uint64_t loc_key_hash(uint32_t pid, uint32_t gen, uint64_t addr, bool kernel, bool ret)
{
	uint64_t h = addr * 0x9e3779b97f4a7c15ull ^
		     (((uint64_t)gen << 40 ^ (uint64_t)pid << 1) | kernel) * 0xc2b2ae3d27d4eb4full;
	return h ^ ret ^ (h >> 29);
}

static uint32_t *loc_slot(struct prof *p, uint32_t pid, uint32_t gen, uint64_t addr, bool kernel,
			  bool ret)
{
	for (size_t h = loc_key_hash(pid, gen, addr, kernel, ret) & (p->loc_hash_n - 1);;
	     h = (h + 1) & (p->loc_hash_n - 1)) {
		uint32_t i = p->loc_hash[h];
		if (!i)
			return &p->loc_hash[h];
		const struct loc *l = &p->locs.v[i - 1];
		if (l->pid == pid && l->gen == gen && l->addr == addr && l->kernel == kernel &&
		    l->ret == ret)
			return &p->loc_hash[h];
	}
}

/* The location of one stack address: resolved (with inline frames) the first time it is seen. */
static uint32_t prof_loc(struct prof *p, uint32_t pid, uint32_t gen, uint64_t addr, bool kernel,
			 bool ret)
{
	if ((p->locs.n + 1) * 2 > p->loc_hash_n) {
		size_t n = p->loc_hash_n ? p->loc_hash_n * 2 : 1024;
		free(p->loc_hash);
		p->loc_hash = xcalloc(n, sizeof(*p->loc_hash));
		p->loc_hash_n = n;
		for (size_t i = 0; i < p->locs.n; i++) {
			const struct loc *l = &p->locs.v[i];
			*loc_slot(p, l->pid, l->gen, l->addr, l->kernel, l->ret) = (uint32_t)i + 1;
		}
	}
	uint32_t *slot = loc_slot(p, pid, gen, addr, kernel, ret);
	if (*slot)
		return *slot - 1;

	struct loc l = { .pid = pid, .gen = gen, .addr = addr, .kernel = kernel, .ret = ret,
			 .id = p->locs.n + 1, .first = (uint32_t)p->frames.n };
	dt_sym_frame fr[DT_SYM_MAX_INLINE];
	int nf = 1;

	memset(fr, 0, sizeof(fr));
	if (kernel) {
		char name[512];
		if (p->o->sym && !dt_sym_kernel(p->o->sym, addr, false, name, sizeof(name)))
			fr[0].name = own(p, xstrdup(name));
		fr[0].module = "[kernel.kallsyms]";
	} else if (p->o->sym) {
		nf = DT_MAX(dt_sym_user_frames(p->o->sym, pid, gen, addr, ret, fr,
					       DT_SYM_MAX_INLINE), 1);
	}
	for (int k = 0; k < nf; k++)
		DT_VEC_PUSH(&p->frames, fr[k]);
	l.n = (uint32_t)nf;
	DT_VEC_PUSH(&p->locs, l);
	*slot = (uint32_t)p->locs.n;
	return (uint32_t)p->locs.n - 1;
}

/* A label name for a non-stack key part: dwarftrace keys carry no names, so a 16-byte string
 * (TASK_COMM_LEN, what `comm` is) is "comm", other parts are "key<i>". */
static const char *part_label(struct prof *p, const dt_type *e, uint32_t i)
{
	if (e->kind == DT_T_STR && e->size == 16)
		return "comm";
	return own(p, xasprintf("key%u", i));
}

static void add_entry(struct prof *p, uint32_t map, const dt_type *key, const uint8_t *data,
		      int64_t value)
{
	struct sample s = { .map = map, .value = value, .loc_first = (uint32_t)p->sample_locs.n,
			    .lab_first = (uint32_t)p->labels.n };
	dt_sbuf folded = {0};
	uint32_t off, pid = 0;

	dt_prof_folded_key(p->o, &folded, key, data);
	s.folded = folded.s ? folded.s : xstrdup("");
	/* Leaf first: kernel stacks (nearest the leaf), then user stacks. */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < key_n(key); i++) {
			const dt_type *e = key_elem(key, i, &off);
			if (e->kind != DT_T_STACK || (e->stack.kind == DT_STACK_KERNEL) != (pass == 0))
				continue;
			struct dt_stack_ref ref;
			memcpy(&ref, data + off, sizeof(ref));
			uint32_t max = e->stack.depth ? e->stack.depth : DT_STACK_DEFAULT_DEPTH;
			max = DT_MIN(max, (uint32_t)DT_STACK_MAX_DEPTH);
			uint64_t *fr = xcalloc(max, sizeof(*fr));
			int n = p->o->stack_frames ? p->o->stack_frames(p->o->stack_ctx, e, &ref, fr,
									max) : -ENOSYS;
			for (int k = 0; k < n && (uint32_t)k < max && fr[k]; k++) {
				uint32_t li = prof_loc(p, pass ? ref.pid : 0,
						       pass ? DT_GEN_OF(ref.flags) : 0, fr[k],
						       pass == 0, k > 0);
				DT_VEC_PUSH(&p->sample_locs, li);
				s.nlocs++;
			}
			free(fr);
			if (pass && ref.pid)
				pid = ref.pid;
		}
	}
	for (uint32_t i = 0; i < key_n(key); i++) {
		const dt_type *e = key_elem(key, i, &off);
		struct label lb = { .key = part_label(p, e, i) };
		if (e->kind == DT_T_STACK)
			continue;
		if (e->kind == DT_T_INT) {
			lb.num = dt_fmt_read_int(data + off, e->size, e->is_signed);
		} else {
			dt_sbuf t = {0};
			part_text(p->o, &t, e, data + off);
			lb.str = own(p, t.s ? t.s : xstrdup(""));
		}
		DT_VEC_PUSH(&p->labels, lb);
		s.nlabs++;
	}
	if (pid) {
		struct label lb = { .key = "pid", .num = pid };
		DT_VEC_PUSH(&p->labels, lb);
		s.nlabs++;
	}
	DT_VEC_PUSH(&p->samples, s);
}

static bool plain_value(const dt_type *t)
{
	return t && (t->kind == DT_T_COUNT || t->kind == DT_T_SUM || t->kind == DT_T_INT ||
		     t->kind == DT_T_MIN || t->kind == DT_T_MAX);
}

static int prof_add_map(struct prof *p, const dt_profile_map *pm)
{
	const dt_map_sym *m = pm->sym;
	int fd = pm->fd;
	dt_map_layout l;
	void *keys, *vals;
	size_t n;
	int ncpus, err;

	if (!m->key || !dt_prof_key_has_stack(m->key) || !plain_value(m->value))
		return 0;
	err = dt_out_read_map(p->o, m, fd, &l, &keys, &vals, &n, &ncpus);
	if (err)
		return err;
	size_t ncpu = l.percpu ? (size_t)ncpus : 1;
	size_t stride = l.percpu ? DT_ALIGN(l.value_size, 8) : l.value_size;
	uint32_t idx = (uint32_t)p->maps.n;
	DT_VEC_PUSH(&p->maps, *pm);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *v = (const uint8_t *)vals + i * stride * ncpu;
		add_entry(p, idx, m->key, (const uint8_t *)keys + i * l.key_size,
			  dt_out_plain_value(m->value, v, ncpu, stride));
	}
	free(keys);
	free(vals);
	return 0;
}

static void prof_free(struct prof *p)
{
	for (size_t i = 0; i < p->samples.n; i++)
		free(p->samples.v[i].folded);
	for (size_t i = 0; i < p->owned.n; i++)
		free(p->owned.v[i]);
	free(p->owned.v);
	free(p->samples.v);
	free(p->locs.v);
	free(p->loc_hash);
	free(p->sample_locs.v);
	free(p->frames.v);
	free(p->labels.v);
	free(p->maps.v);
}

/* ---------------------------------------------------------------- pprof */

/* pprof's string table: every string once, found again through an open-addressing index. */
struct strtab {
	DT_VEC(char *) v;
	uint32_t *idx; /* position in v + 1, 0 = empty */
	size_t n;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int64_t str_id(struct strtab *t, const char *s)
{
	if (!s)
		s = "";
	if ((t->v.n + 1) * 2 > t->n) {
		size_t n = t->n ? t->n * 2 : 1024;
		uint32_t *idx = xcalloc(n, sizeof(*idx));
		for (size_t i = 0; i < t->v.n; i++) {
			size_t h = (size_t)(hash_str(t->v.v[i]) & (n - 1));
			while (idx[h])
				h = (h + 1) & (n - 1);
			idx[h] = (uint32_t)i + 1;
		}
		free(t->idx);
		t->idx = idx;
		t->n = n;
	}
	size_t h = (size_t)(hash_str(s) & (t->n - 1));
	while (t->idx[h]) {
		if (!strcmp(t->v.v[t->idx[h] - 1], s))
			return t->idx[h] - 1;
		h = (h + 1) & (t->n - 1);
	}
	DT_VEC_PUSH(&t->v, xstrdup(s));
	t->idx[h] = (uint32_t)t->v.n;
	return (int64_t)t->v.n - 1;
}

/* zlib's error as -errno: its own codes are not errnos, Z_ERRNO says errno has the reason. */
static int gz_errno(int zerr)
{
	return zerr == Z_ERRNO && errno ? -errno : -EIO;
}

/* Gzips into f through a descriptor of its own (gzclose closes it; f stays the caller's). */
static int gzip_write(FILE *f, const uint8_t *buf, size_t len)
{
	gzFile gz;
	int fd, err = 0, zerr;

	if (fflush(f))
		return -errno;
	fd = dup(fileno(f));
	if (fd < 0)
		return -errno;
	gz = gzdopen(fd, "wb");
	if (!gz) {
		close(fd);
		return -ENOMEM;
	}
	while (len) {
		unsigned chunk = len > (1u << 30) ? 1u << 30 : (unsigned)len;
		errno = 0;
		if (gzwrite(gz, buf, chunk) != (int)chunk) {
			gzerror(gz, &zerr);
			err = gz_errno(zerr);
			break;
		}
		buf += chunk;
		len -= chunk;
	}
	errno = 0;
	zerr = gzclose(gz);
	if (zerr != Z_OK && !err)
		err = gz_errno(zerr);
	return err;
}

/* One column of pprof's sample values: a map's value, or its CPU time (value * period). */
struct column {
	uint32_t map;
	uint64_t scale; /* 1, or the period in ns */
};

static int write_pprof(struct prof *p, const char *path, const dt_profile_info *info)
{
	Perftools__Profiles__Profile pr = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType period_type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	struct strtab st = {0};
	size_t nm = p->maps.n, nc = 0, ncount = 0;
	int64_t comments[2];
	int err;

	str_id(&st, "");
	/* Sample types, as pprof's consumers expect them: samples/count for a count() map, and
	 * for a map of profile: samples at one period also cpu/nanoseconds, which go tool pprof
	 * shows as CPU time and Pyroscope/Parca label as CPU. With several count() maps their
	 * columns are named after them ("@a_samples", "@a_cpu"); another value is "NAME/count". */
	for (size_t i = 0; i < nm; i++)
		ncount += p->maps.v[i].sym->value->kind == DT_T_COUNT;
	struct column *cols = xcalloc(2 * nm + 1, sizeof(*cols));
	Perftools__Profiles__ValueType *vts = xcalloc(2 * nm + 1, sizeof(*vts));
	Perftools__Profiles__ValueType **vtp = xcalloc(2 * nm + 1, sizeof(*vtp));
	for (size_t i = 0; i < nm; i++) {
		const dt_profile_map *m = &p->maps.v[i];
		bool counts = m->sym->value->kind == DT_T_COUNT;
		for (int cpu = 0; cpu < 2; cpu++) {
			if (cpu && !(counts && m->period_ns))
				continue;
			char *name = counts && ncount == 1 ? xstrdup(cpu ? "cpu" : "samples") :
				     counts ? xasprintf("%s_%s", m->sym->name, cpu ? "cpu" : "samples") :
				     xstrdup(m->sym->name);
			perftools__profiles__value_type__init(&vts[nc]);
			vts[nc].type = str_id(&st, name);
			vts[nc].unit = str_id(&st, cpu ? "nanoseconds" : "count");
			free(name);
			vtp[nc] = &vts[nc];
			cols[nc++] = (struct column){ (uint32_t)i, cpu ? m->period_ns : 1 };
			if (cpu && !pr.period) {
				period_type.type = vts[nc - 1].type;
				period_type.unit = vts[nc - 1].unit;
				pr.period_type = &period_type;
				pr.period = (int64_t)m->period_ns;
				pr.default_sample_type = vts[nc - 1].type;
			}
		}
	}
	pr.n_sample_type = nc;
	pr.sample_type = vtp;
	if (info) {
		pr.time_nanos = (int64_t)info->start_unix_ns;
		pr.duration_nanos = (int64_t)info->duration_ns;
		size_t ncom = 0;
		if (info->program)
			comments[ncom++] = str_id(&st, info->program);
		if (info->target)
			comments[ncom++] = str_id(&st, info->target);
		pr.n_comment = ncom;
		pr.comment = comments;
	}

	/* Mappings: one per module name (a file, or the kernel); the names are already resolved,
	 * so pprof must not try to symbolize again (has_functions). */
	DT_VEC(const char *) mods = {0};
	uint64_t *loc_map = xcalloc(p->locs.n + 1, sizeof(*loc_map));
	for (size_t i = 0; i < p->locs.n; i++) {
		const struct loc *l = &p->locs.v[i];
		const char *mod = p->frames.v[l->first].module;
		size_t k;
		if (!mod)
			mod = "[unknown]";
		for (k = 0; k < mods.n && strcmp(mods.v[k], mod); k++)
			;
		if (k == mods.n)
			DT_VEC_PUSH(&mods, mod);
		loc_map[i] = k + 1;
	}
	Perftools__Profiles__Mapping *maps = xcalloc(mods.n + 1, sizeof(*maps));
	Perftools__Profiles__Mapping **mapp = xcalloc(mods.n + 1, sizeof(*mapp));
	for (size_t k = 0; k < mods.n; k++) {
		perftools__profiles__mapping__init(&maps[k]);
		maps[k].id = k + 1;
		maps[k].filename = str_id(&st, mods.v[k]);
		maps[k].has_functions = true;
		maps[k].has_inline_frames = true;
		mapp[k] = &maps[k];
	}
	pr.n_mapping = mods.n;
	pr.mapping = mapp;

	/* Functions: one per distinct (name, file); locations: one per resolved address, its
	 * lines innermost first as pprof wants them. */
	size_t nl = p->locs.n, nlines = p->frames.n;
	Perftools__Profiles__Location *locs = xcalloc(nl + 1, sizeof(*locs));
	Perftools__Profiles__Location **locp = xcalloc(nl + 1, sizeof(*locp));
	Perftools__Profiles__Line *lines = xcalloc(nlines + 1, sizeof(*lines));
	Perftools__Profiles__Line **linep = xcalloc(nlines + 1, sizeof(*linep));
	Perftools__Profiles__Function *fns = xcalloc(nlines + 1, sizeof(*fns));
	Perftools__Profiles__Function **fnp = xcalloc(nlines + 1, sizeof(*fnp));
	size_t nfn = 0;
	int64_t *fn_of_name = NULL; /* string id -> function id, grown as needed */
	size_t fn_of_name_n = 0;
	for (size_t i = 0; i < nl; i++) {
		const struct loc *l = &p->locs.v[i];
		perftools__profiles__location__init(&locs[i]);
		locs[i].id = l->id;
		locs[i].mapping_id = loc_map[i];
		locs[i].address = l->addr;
		locs[i].n_line = l->n;
		locs[i].line = &linep[l->first];
		for (uint32_t k = 0; k < l->n; k++) {
			const dt_sym_frame *f = &p->frames.v[l->first + k];
			dt_sbuf name = {0};
			frame_label(&name, &(dt_sym_frame){ .name = f->name, .module = f->module,
							     .module_off = f->module_off },
				    l->addr, false);
			int64_t sid = str_id(&st, dt_sb_str(&name));
			free(name.s);
			if ((size_t)sid >= fn_of_name_n) {
				size_t n = DT_MAX((size_t)sid + 1, fn_of_name_n * 2);
				fn_of_name = xrealloc(fn_of_name, n * sizeof(*fn_of_name));
				memset(fn_of_name + fn_of_name_n, 0,
				       (n - fn_of_name_n) * sizeof(*fn_of_name));
				fn_of_name_n = n;
			}
			if (!fn_of_name[sid]) {
				Perftools__Profiles__Function *fn = &fns[nfn];
				perftools__profiles__function__init(fn);
				fn->id = nfn + 1;
				fn->name = sid;
				fn->system_name = sid;
				fn->filename = f->src_file ? str_id(&st, f->src_file) : 0;
				fnp[nfn++] = fn;
				fn_of_name[sid] = (int64_t)fn->id;
			}
			Perftools__Profiles__Line *ln = &lines[l->first + k];
			perftools__profiles__line__init(ln);
			ln->function_id = (uint64_t)fn_of_name[sid];
			ln->line = f->src_line;
			linep[l->first + k] = ln;
		}
		locp[i] = &locs[i];
	}
	pr.n_location = nl;
	pr.location = locp;
	pr.n_function = nfn;
	pr.function = fnp;

	/* Samples: the map's value in its own columns, zero in the others. */
	size_t ns = p->samples.n;
	Perftools__Profiles__Sample *ss = xcalloc(ns + 1, sizeof(*ss));
	Perftools__Profiles__Sample **ssp = xcalloc(ns + 1, sizeof(*ssp));
	int64_t *values = xcalloc((ns + 1) * (nc ? nc : 1), sizeof(*values));
	uint64_t *locids = xcalloc(p->sample_locs.n + 1, sizeof(*locids));
	Perftools__Profiles__Label *labs = xcalloc(p->labels.n + 1, sizeof(*labs));
	Perftools__Profiles__Label **labp = xcalloc(p->labels.n + 1, sizeof(*labp));
	for (size_t i = 0; i < p->sample_locs.n; i++)
		locids[i] = p->locs.v[p->sample_locs.v[i]].id;
	for (size_t i = 0; i < p->labels.n; i++) {
		const struct label *lb = &p->labels.v[i];
		perftools__profiles__label__init(&labs[i]);
		labs[i].key = str_id(&st, lb->key);
		if (lb->str)
			labs[i].str = str_id(&st, lb->str);
		else
			labs[i].num = lb->num;
		labp[i] = &labs[i];
	}
	for (size_t i = 0; i < ns; i++) {
		const struct sample *s = &p->samples.v[i];
		perftools__profiles__sample__init(&ss[i]);
		ss[i].n_location_id = s->nlocs;
		ss[i].location_id = &locids[s->loc_first];
		ss[i].n_value = nc;
		ss[i].value = &values[i * nc];
		for (size_t c = 0; c < nc; c++)
			if (cols[c].map == s->map)
				values[i * nc + c] = s->value * (int64_t)cols[c].scale;
		ss[i].n_label = s->nlabs;
		ss[i].label = &labp[s->lab_first];
		ssp[i] = &ss[i];
	}
	pr.n_sample = ns;
	pr.sample = ssp;
	if (!pr.time_nanos)
		pr.time_nanos = (int64_t)time(NULL) * 1000000000ll;
	pr.n_string_table = st.v.n;
	pr.string_table = st.v.v;

	size_t len = perftools__profiles__profile__get_packed_size(&pr);
	uint8_t *buf = xmalloc(len ? len : 1);
	perftools__profiles__profile__pack(&pr, buf);
	FILE *f = fopen(path, "we");

	if (!f) {
		err = -errno;
	} else {
		err = gzip_write(f, buf, len);
		errno = 0;
		if (fclose(f) && !err)
			err = errno ? -errno : -EIO;
	}

	free(buf);
	free(values);
	free(locids);
	free(labs);
	free(labp);
	free(ss);
	free(ssp);
	free(fn_of_name);
	free(fns);
	free(fnp);
	free(lines);
	free(linep);
	free(locs);
	free(locp);
	free(maps);
	free(mapp);
	free(mods.v);
	free(loc_map);
	free(vts);
	free(vtp);
	free(cols);
	for (size_t i = 0; i < st.v.n; i++)
		free(st.v.v[i]);
	free(st.v.v);
	free(st.idx);
	return err;
}

/* ---------------------------------------------------------------- entry */

/* PATH with "-NAME" before its extension: prof.svg, @bytes -> prof-bytes.svg. */
static char *path_for_map(const char *path, const char *name)
{
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
	const char *n = name[0] == '@' ? name + 1 : name;

	if (!dot || (slash && dot < slash) || dot == (slash ? slash + 1 : path))
		dot = path + strlen(path);
	return xasprintf("%.*s-%s%s", (int)(dot - path), path, *n ? n : "map", dot);
}

/* "1.97 s", "420 ms", "15 us": a duration as a reader takes it in. */
static void put_duration(dt_sbuf *b, double ns)
{
	if (ns >= 1e9)
		dt_sb_printf(b, "%.2f s", ns / 1e9);
	else if (ns >= 1e6)
		dt_sb_printf(b, "%.1f ms", ns / 1e6);
	else
		dt_sb_printf(b, "%.0f us", ns / 1e3);
}

/* One map's flame graph: its own samples only (maps of different meaning are never summed). */
static int write_flamegraph(struct prof *p, uint32_t map, const char *path,
			    const dt_profile_info *info)
{
	const dt_profile_map *m = &p->maps.v[map];
	bool counts = m->sym->value->kind == DT_T_COUNT;
	const char **lines = xcalloc(p->samples.n + 1, sizeof(*lines));
	int64_t *vals = xcalloc(p->samples.n + 1, sizeof(*vals));
	dt_sbuf title = {0}, sub = {0};
	size_t n = 0;
	int64_t total = 0;
	int err = 0;

	for (size_t i = 0; i < p->samples.n; i++) {
		const struct sample *s = &p->samples.v[i];
		if (s->map != map || !strcmp(s->folded, "[empty]") || s->value <= 0)
			continue;
		lines[n] = s->folded;
		vals[n++] = s->value;
		total += s->value;
	}
	/* The title is the program on one line (a script's name when it came from a file). */
	const char *prog = info && info->program ? info->program : "dwarftrace";
	for (const char *c = prog; *c && title.n < 160; c++)
		if (*c != '\n' && *c != '\t')
			dt_sb_putc(&title, *c);
		else if (title.n && dt_sb_str(&title)[title.n - 1] != ' ')
			dt_sb_putc(&title, ' ');
	if (strlen(prog) > title.n && title.n >= 160)
		dt_sb_puts(&title, "...");
	dt_sb_puts(&sub, m->sym->name);
	if (info && info->target)
		dt_sb_printf(&sub, " · %s", info->target);
	if (m->rate)
		dt_sb_printf(&sub, " · %s", m->rate);
	if (info && info->duration_ns) {
		dt_sb_puts(&sub, " · ");
		put_duration(&sub, (double)info->duration_ns);
	}
	dt_sb_printf(&sub, " · total %" PRId64 "%s", total, counts ? " samples" : "");
	if (counts && m->period_ns) {
		dt_sb_puts(&sub, " = ");
		put_duration(&sub, (double)total * (double)m->period_ns);
		dt_sb_puts(&sub, " CPU");
	}
	dt_fg_head h = { .title = dt_sb_str(&title), .subtitle = dt_sb_str(&sub),
			 .unit = counts ? "samples" : "value",
			 .unit_ns = counts ? m->period_ns : 0 };
	FILE *f = fopen(path, "w");
	if (!f) {
		err = -errno;
	} else {
		err = dt_flamegraph_write(f, &h, lines, vals, n);
		/* The writer knows only that a write failed; a flush says why (ENOSPC, ...). */
		errno = 0;
		int ferr = fflush(f) ? errno : 0;
		if (fclose(f) && !ferr)
			ferr = errno ? errno : EIO;
		if (ferr && (!err || err == -EIO))
			err = -ferr;
	}
	free(title.s);
	free(sub.s);
	free(lines);
	free(vals);
	return err;
}

int dt_out_write_profile(dt_out *o, dt_profile_kind kind, const char *path,
			 const dt_profile_map *maps, size_t n, const dt_profile_info *info,
			 const char *map, char **written)
{
	struct prof p = { .o = o };
	dt_sbuf files = {0};
	int err = 0;

	for (size_t i = 0; i < n && !err; i++)
		if (kind == DT_PROFILE_PPROF || !map || !strcmp(maps[i].sym->name, map))
			err = prof_add_map(&p, &maps[i]);
	if (err)
		goto out;
	if (kind == DT_PROFILE_PPROF) {
		err = write_pprof(&p, path, info);
		dt_sb_puts(&files, path);
	} else if (map && !p.maps.n) {
		err = -ENOENT;
	} else {
		for (uint32_t i = 0; i < (uint32_t)p.maps.n && !err; i++) {
			char *pth = i ? path_for_map(path, p.maps.v[i].sym->name) : xstrdup(path);
			err = write_flamegraph(&p, i, pth, info);
			dt_sb_printf(&files, "%s%s", i ? ", " : "", pth);
			free(pth);
		}
	}
out:
	if (written)
		*written = files.s;
	else
		free(files.s);
	prof_free(&p);
	return err;
}
