/* session.c — the session: script maps that live across compilations, the kernel objects
 * generated code needs (auxiliary maps, the exec follower, the walkers: made by the resource step
 * before codegen, from what dt_cg_resources_of says the program will reference), and units — one
 * per program text — each compiled, loaded (with a verifier log only when something fails or
 * -d verifier asks), attached through attach.c, and detachable on its own. Also the loss counters
 * and the exit sequence: END, drain, print maps, report losses, then detach (slow, so last, and
 * handed to a helper process when a second stop signal says not to wait). This file calls the
 * others of the session and none calls it: the event loop is loop.c, the -c command and the -p
 * process are child.c, what userspace does to the maps while tracing (map commands, noting pids)
 * is session_maps.c. */
#include "runtime/session_internal.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NEED_ROOT "dwarftrace: root (or CAP_BPF and CAP_PERFMON) is needed to load BPF programs"
#define STACK_MAP_ENTRIES 4096
#define VERIFIER_TAIL_LINES 25
/* A bound on continuation slots of a session, below the unwinder's own array size. */
#define DT_CONT_SLOTS 4096
/* Entries of each chain prog array: the later parts of split probes a session may load. */
#define DT_CHAIN_SLOTS 4096

static uint64_t boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Prints the one sentence for missing privileges, once. */
static int perm_error(dt_session *s, int rc)
{
	if ((rc == -EPERM || rc == -EACCES) && !s->perm_reported) {
		s->perm_reported = true;
		fprintf(s->err, "%s\n", NEED_ROOT);
	}
	return rc;
}

/* One tiny map tells whether BPF is allowed at all, before compiling anything: without it the
 * first failure would surface inside codegen as a confusing internal error. */
static int check_privileges(dt_session *s)
{
	int fd;

	if (s->bpf_ok)
		return 0;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "dt_probe", 4, 4, 1, NULL);
	if (fd < 0)
		return perm_error(s, errno == EPERM || errno == EACCES ? -EPERM : -errno);
	close(fd);
	s->bpf_ok = true;
	/* Privileged, and about to trace: the time to remove what killed runs left behind. */
	if (!s->o.dry_run)
		dt_child_sweep_cgroups(s);
	return 0;
}

/* ---------------------------------------------------------------- life cycle */

static int libbpf_verbosity;

/* libbpf logs through a callback; its warnings only matter with -v, its debug with -vv. */
static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (libbpf_verbosity < 1 || (level == LIBBPF_DEBUG && libbpf_verbosity < 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int open_profiles(dt_session *s);

dt_session *dt_session_new(const dt_session_opts *o)
{
	dt_session *s;
	dt_out_opts oo = { 0 };
	int rc;

	if (!o || o->sz < offsetof(dt_session_opts, params)) {
		errno = EINVAL;
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	memcpy(&s->o, o, DT_MIN(o->sz, sizeof(s->o)));
	s->o.sz = sizeof(s->o);
	if (!s->o.out)
		s->o.out = stdout;
	s->err = s->o.err ? s->o.err : stderr;
	s->arena = dt_arena_new();
	s->ctypes = dt_ctypes_new(NULL);
	for (uint32_t i = 0; i < s->o.ninclude_dirs; i++)
		dt_ctypes_add_include_dir(s->ctypes, s->o.include_dirs[i]);
	for (uint32_t i = 0; i < s->o.ninclude_files; i++)
		dt_ctypes_add_include(s->ctypes, s->o.include_files[i]);
	libbpf_verbosity = s->o.verbose;
	libbpf_set_print(libbpf_log);
	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0)
		s->ncpus = 1;
	s->elfc = dt_elf_cache_new();
	dt_elf_cache_set_debug_dirs(s->elfc, s->o.debug_dirs, s->o.ndebug_dirs);
	s->sym = dt_sym_new();
	oo.file = s->o.out;
	oo.format = s->o.format == DT_FORMAT_JSON ? DT_OUT_JSON :
		    s->o.format == DT_FORMAT_FOLDED ? DT_OUT_FOLDED : DT_OUT_TEXT;
	dt_sym_set_opts(s->sym, &(dt_sym_opts){ .no_demangle = s->o.no_demangle,
						.no_inline = s->o.no_inline,
						.srcline = s->o.srcline,
						.elf_cache = s->elfc });
	oo.sym = s->sym;
	oo.stack_frames = dt_session_stack_frames;
	oo.stack_ctx = s;
	oo.ncpus = s->ncpus;
	oo.notice = s->err;
	oo.json_frames = s->o.json_frames;
	oo.debug_info_at = s->o.debug_info_at;
	oo.stacks_apart = s->o.no_merge_stacks;
	oo.str_trunc_trailer = s->o.str_trunc_trailer;
	s->out = dt_out_new(&oo);
	s->out_opts = oo;
	s->stats_fd = s->scratch_fd = s->stats_enable_fd = s->frame_fd = -1;
	s->child_pidfd = s->child_go_fd = s->child_err_fd = s->pidfd = s->detach_helper_fd = -1;
	s->start_ns = boot_ns();
	{
		struct timespec rt;

		clock_gettime(CLOCK_REALTIME, &rt);
		s->wall_offset_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec -
				    s->start_ns;
	}
	s->next_unit_id = 1;
	rc = open_profiles(s);
	if (rc < 0) {
		dt_session_free(s);
		errno = -rc;
		return NULL;
	}
	return s;
}

static void close_fdvec(dt_fdvec *v)
{
	for (size_t i = 0; i < v->n; i++)
		close(v->v[i]);
	free(v->v);
	memset(v, 0, sizeof(*v));
}

/* Closing a perf event or a BPF link detaches it; attach_bulk.c says what that costs. */
static void close_attached(dt_fdvec *v)
{
	dt_rt_detach(v, 0);
	free(v->v);
	memset(v, 0, sizeof(*v));
}

static int chain_fd(dt_session *s, enum bpf_prog_type t)
{
	for (size_t i = 0; i < s->chains.n; i++)
		if (s->chains.v[i].type == t)
			return s->chains.v[i].fd;
	return -ENOENT;
}

static void unit_free(dt_unit *u)
{
	if (!u)
		return;
	/* The prog arrays would keep its parts loaded as long as the session lives. */
	for (size_t i = 0; i < u->chain_slots.n; i++)
		bpf_map_delete_elem(chain_fd(u->s, u->chain_slots.v[i].type),
				    &u->chain_slots.v[i].slot);
	free(u->chain_slots.v);
	close_attached(&u->attached);
	dt_wp_free(u);
	close_fdvec(&u->prog_fds);
	/* begin/end fds are also in prog_fds: only free the arrays. */
	free(u->begin_fds.v);
	free(u->end_fds.v);
	free(u->signal_fds.v);
	free(u->test_fds.v);
	free(u->test_names.v);
	free(u->end_types.v);
	free(u->begin_types.v);
	if (u->events_fd >= 0)
		close(u->events_fd);
	if (u->names_fd >= 0)
		close(u->names_fd);
	if (u->syscall_fd >= 0)
		close(u->syscall_fd);
	free(u->skip);
	free(u->map_index);
	if (u->arena)
		dt_arena_free(u->arena);
	free(u->name);
	free(u->text);
	free(u);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void dt_session_free(dt_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->units.n; i++)
		unit_free(s->units.v[i]);
	free(s->units.v);
	free(s->watch_exe);
	dt_loop_free(s);
	for (size_t i = 0; i < s->maps.n; i++) {
		close(s->maps.v[i]->fd);
		free(s->maps.v[i]);
	}
	free(s->maps.v);
	dt_strmap_fini(&s->map_names);
	for (size_t i = 0; i < s->stackmaps.n; i++)
		close(s->stackmaps.v[i].fd);
	free(s->stackmaps.v);
	close_fd(&s->stats_fd);
	close_fd(&s->scratch_fd);
	close_fd(&s->frame_fd);
	for (size_t i = 0; i < s->chains.n; i++)
		close(s->chains.v[i].fd);
	free(s->chains.v);
	close_fd(&s->stats_enable_fd);
	dt_unwinder_free(s->uw); /* before the exec follower whose maps it shares */
	dt_exec_follower_free(s->ef);
	dt_xprobe_free(s);
	dt_skb_free(s);
	dt_child_reap(s);
	close_fd(&s->pidfd);
	if (s->out) {
		dt_out_flush(s->out);
		dt_out_free(s->out);
	}
	dt_sym_free(s->sym);
	dt_ctypes_free(s->ctypes);
	dt_elf_cache_free(s->elfc);
	dt_arena_free(s->arena);
	for (int k = 0; k < 2; k++)
		if (s->profile_f[k])
			fclose(s->profile_f[k]); /* the run ended before any was written */
	/* Last: the detach helper (if any) lets go of the probes once nothing else holds them. */
	close_fd(&s->detach_helper_fd);
	free(s);
}

int dt_session_exit_code(const dt_session *s)
{
	return s->exit_code;
}

uint32_t dt_unit_id(const dt_unit *u)
{
	return u->id;
}

const char *dt_unit_text(const dt_unit *u)
{
	return u->text;
}

uint32_t dt_session_events_size(const dt_session *s)
{
	return s->o.events_size ? s->o.events_size : DT_EVENTS_RINGBUF_SIZE;
}

uint32_t dt_unit_nprobes(const dt_unit *u)
{
	return u->nprobes_attached;
}

dt_unit *dt_session_unit(dt_session *s, uint32_t i)
{
	return i < s->units.n ? s->units.v[i] : NULL;
}

int dt_session_expand(dt_session *s, const dt_attach *a, char ***names, uint32_t *n)
{
	struct dt_rt_expand_ctx x = { .pid = s->o.uprobe_pid };

	return dt_rt_expand(&x, a, names, n);
}

int dt_unit_hits(const dt_unit *u, uint64_t *hits)
{
	*hits = 0;
	if (u->s->stats_enable_fd < 0)
		return -ENOTSUP;
	for (size_t i = 0; i < u->prog_fds.n; i++) {
		struct bpf_prog_info info = { 0 };
		uint32_t len = sizeof(info);

		if (bpf_obj_get_info_by_fd(u->prog_fds.v[i], &info, &len) == 0)
			*hits += info.run_cnt;
	}
	return 0;
}

/* ---------------------------------------------------------------- maps */

dt_smap *dt_session_find_map(dt_session *s, const char *name)
{
	return dt_strmap_get(&s->map_names, name);
}

/* BPF object names: at most 15 characters of [A-Za-z0-9_.]; "@" becomes "AT_", as bpftrace. */
static void bpf_name(char out[16], const char *prefix, const char *name)
{
	size_t j = 0;

	for (const char *p = prefix; *p && j < 15; p++)
		out[j++] = *p;
	for (const char *p = name; *p && j < 15; p++) {
		char c = *p;

		if (c == '@')
			continue;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.';

		out[j++] = ok ? c : '_';
	}
	out[j] = 0;
}

static int create_script_map(dt_session *s, const dt_map_sym *m, dt_smap **out)
{
	dt_smap *sm = xcalloc(1, sizeof(*sm));
	char name[16];
	int fd;

	sm->sym.name = dt_arena_strndup(s->arena, m->name, strlen(m->name));
	sm->sym.key = m->key ? dt_type_clone(s->arena, m->key) : NULL;
	sm->sym.value = dt_type_clone(s->arena, m->value);
	sm->sym.id = (uint32_t)s->maps.n;
	sm->sym.decl_bpf_type = m->decl_bpf_type;
	sm->sym.decl_max_entries = m->decl_max_entries;
	sm->sym.current = m->current;
	dt_map_layout_of(&sm->sym, &sm->layout);
	/* max_map_keys sizes the maps the script does not declare (bpftrace's rule). */
	if (s->o.map_keys_max && !m->decl_max_entries)
		sm->layout.max_entries = s->o.map_keys_max;
	bpf_name(name, "AT_", m->name);
	fd = bpf_map_create(sm->layout.bpf_map_type, name, sm->layout.key_size,
			    sm->layout.value_size, sm->layout.max_entries, NULL);
	if (fd < 0) {
		int rc = -errno;

		if (rc != -EPERM)
			fprintf(s->err, "dwarftrace: cannot create map %s (key %u bytes, value %u bytes): %s\n",
				m->name, sm->layout.key_size, sm->layout.value_size,
				dt_strerror(-rc));
		free(sm);
		return perm_error(s, rc);
	}
	sm->fd = fd;
	DT_VEC_PUSH(&s->maps, sm);
	dt_strmap_put(&s->map_names, sm->sym.name, sm);
	*out = sm;
	return 0;
}

static int aux_create(dt_session *s, int *fd, enum bpf_map_type type, const char *name,
		      uint32_t key, uint32_t value, uint32_t entries)
{
	if (*fd >= 0)
		return *fd;
	*fd = bpf_map_create(type, name, key, value, entries, NULL);
	if (*fd < 0) {
		int rc = -errno;

		*fd = -1;
		if (rc != -EPERM)
			fprintf(s->err, "dwarftrace: cannot create the %s map: %s\n", name, dt_strerror(-rc));
		return perm_error(s, rc);
	}
	return *fd;
}

/* The prog arrays that chain the parts of split probes, one per program type in `types`
 * (bit 1 << enum bpf_prog_type each), and the frames they share. */
static int prepare_chains(dt_session *s, uint64_t types)
{
	int rc = aux_create(s, &s->frame_fd, BPF_MAP_TYPE_PERCPU_ARRAY, "frame", 4,
			    dt_cg_frame_size(s->o.strlen), DT_CG_FRAME_KEYS);

	for (int t = 0; t < 64 && rc >= 0; t++) {
		struct dt_chain ch = { .type = (enum bpf_prog_type)t, .fd = -1 };

		if (!(types & (1ull << t)) || chain_fd(s, ch.type) >= 0)
			continue;
		rc = aux_create(s, &ch.fd, BPF_MAP_TYPE_PROG_ARRAY, "chain", 4, 4, DT_CHAIN_SLOTS);
		if (rc >= 0)
			DT_VEC_PUSH(&s->chains, ch);
	}
	return rc;
}

static int stack_map_fd(dt_session *s, dt_stack_kind kind, uint32_t depth, bool create)
{
	dt_stackmap sm = { .kind = kind, .depth = depth ? depth : DT_STACK_DEFAULT_DEPTH,
			   .fd = -1 };
	char name[16];
	int rc;

	for (size_t i = 0; i < s->stackmaps.n; i++)
		if (s->stackmaps.v[i].kind == kind && s->stackmaps.v[i].depth == sm.depth)
			return s->stackmaps.v[i].fd;
	if (!create)
		return -ENOENT;
	snprintf(name, sizeof(name), "%cstack_%u", kind == DT_STACK_KERNEL ? 'k' : 'u',
		 sm.depth % 10000u); /* depth <= DT_STACK_MAX_DEPTH */
	rc = aux_create(s, &sm.fd, BPF_MAP_TYPE_STACK_TRACE, name, 4, sm.depth * 8,
			STACK_MAP_ENTRIES);
	if (rc < 0)
		return rc;
	DT_VEC_PUSH(&s->stackmaps, sm);
	return sm.fd;
}

int dt_session_stack_frames(void *ctx, const dt_type *t, const struct dt_stack_ref *ref,
			    uint64_t *frames, uint32_t max)
{
	dt_session *s = ctx;
	uint32_t depth = t->stack.depth ? t->stack.depth : DT_STACK_DEFAULT_DEPTH, id, n = 0;
	uint64_t *buf;
	int fd, rc;

	if (t->kind != DT_T_STACK)
		return -EINVAL;
	if (t->stack.kind == DT_STACK_USER_DWARF) {
		if (!s->uw)
			return -ENOENT;
		if (ref->pid)
			dt_sym_note_pid(s->sym, ref->pid);
		return dt_unwinder_frames(s->uw, ref, frames, max);
	}
	fd = stack_map_fd(s, t->stack.kind, depth, false);
	if (fd < 0)
		return fd;
	if (t->stack.kind != DT_STACK_KERNEL && ref->pid)
		dt_sym_note_pid(s->sym, ref->pid);
	buf = xcalloc(depth, sizeof(*buf));
	id = (uint32_t)ref->id;
	if (bpf_map_lookup_elem(fd, &id, buf) < 0) {
		rc = -errno;
		free(buf);
		return rc;
	}
	while (n < depth && n < max && buf[n]) {
		frames[n] = buf[n];
		n++;
	}
	free(buf);
	return (int)n;
}

static const char *const profile_opts[2] = { "--pprof", "--flamegraph" };

static const char *profile_path(const dt_session *s, int k)
{
	return k == 0 ? s->o.pprof_path : s->o.flamegraph_path;
}

/* The profile files are opened (created) before anything is traced: a path that cannot be
 * written is said at once, not after a long run whose result would be lost. */
static int open_profiles(dt_session *s)
{
	for (int k = 0; k < 2; k++) {
		const char *path = profile_path(s, k);

		if (!path)
			continue;
		s->profile_f[k] = fopen(path, "we");
		if (!s->profile_f[k]) {
			int err = errno;

			fprintf(s->err, "dwarftrace: %s: cannot write %s: %s\n", profile_opts[k],
				path, dt_strerror(err));
			return -err;
		}
	}
	return 0;
}

static void write_failed(dt_session *s)
{
	if (s->exit_code == 0)
		s->exit_code = 1;
}

bool dt_session_output_failed(dt_session *s)
{
	int rc;

	if (s->out_failed)
		return true;
	rc = dt_out_error(s->out);
	if (!rc)
		return false;
	s->out_failed = true;
	fprintf(s->err, "dwarftrace: cannot write the output to %s: %s\n",
		s->o.out_name ? s->o.out_name : "its file", dt_strerror(-rc));
	write_failed(s);
	return true;
}

/* Which probes write map `name`, for a profile's units: every writer a profile: probe of one
 * period gives w->period_ns and w->rate; any other writer, or a second period, clears them. */
struct map_writers {
	bool seen, mixed;
	uint64_t period_ns;
	const char *rate;
};

static void note_writers(const dt_stmt_list *l, const dt_probe *p, const char *name,
			 struct map_writers *w)
{
	for (uint32_t i = 0; i < l->n; i++) {
		const dt_stmt *st = l->v[i];

		switch (st->kind) {
		case DT_S_ASSIGN:
			if (st->assign.target->kind != DT_E_MAP ||
			    strcmp(st->assign.target->map.name, name))
				break;
			for (uint32_t k = 0; k < p->nattach; k++) {
				const dt_attach *a = p->attach[k];
				uint64_t ns = a->provider != DT_P_PROFILE ? 0 :
					      a->unit == DT_UNIT_HZ ? (a->rate ? 1000000000ull / a->rate : 0) :
					      a->period_ns;
				if (!ns || (w->seen && ns != w->period_ns))
					w->mixed = true;
				w->seen = true;
				w->period_ns = ns;
				w->rate = a->text;
			}
			break;
		case DT_S_IF:
			note_writers(&st->if_.then, p, name, w);
			note_writers(&st->if_.els, p, name, w);
			break;
		case DT_S_UNROLL:
			note_writers(&st->unroll.body, p, name, w);
			break;
		case DT_S_WHILE:
			note_writers(&st->while_.body, p, name, w);
			break;
		case DT_S_FOR:
			note_writers(&st->for_.body, p, name, w);
			break;
		case DT_S_BLOCK:
			note_writers(&st->block, p, name, w);
			break;
		default:
			break;
		}
	}
}

/* --pprof / --flamegraph: every stack-keyed map, written once at the end (output/profile.c),
 * with what the session knows of the run: the program, the target, when and how long, and
 * which maps hold profile: samples at one rate (their counts are CPU time). */
static void write_profiles(dt_session *s)
{
	const char *paths[2] = { s->o.pprof_path, s->o.flamegraph_path };
	dt_profile_kind kinds[2] = { DT_PROFILE_PPROF, DT_PROFILE_FLAMEGRAPH };
	dt_profile_map *maps;
	char *prog = NULL;
	struct timespec now;
	char target[64];

	if (!paths[0] && !paths[1])
		return;
	maps = xcalloc(s->maps.n + 1, sizeof(*maps));
	for (size_t i = 0; i < s->maps.n; i++) {
		struct map_writers w = { 0 };

		for (size_t u = 0; u < s->units.n; u++)
			for (uint32_t k = 0; k < s->units.v[u]->prog->nprobes; k++) {
				const dt_probe *p = s->units.v[u]->prog->probes[k];
				note_writers(&p->body, p, s->maps.v[i]->sym.name, &w);
			}
		maps[i] = (dt_profile_map){ .sym = &s->maps.v[i]->sym, .fd = s->maps.v[i]->fd,
					    .period_ns = w.mixed ? 0 : w.period_ns,
					    .rate = w.mixed ? NULL : w.rate };
	}
	/* The program: a script's name, else its text (the REPL's entries one after another). */
	for (size_t u = 0; u < s->units.n; u++) {
		const dt_source *src = &s->units.v[u]->src;
		bool file = dt_source_is_file(src);
		char *more = xasprintf("%s%s%s", prog ? prog : "", prog ? "  " : "",
				       file ? src->name : src->text);
		free(prog);
		prog = more;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	uint64_t dur = boot_ns() - s->start_ns;
	dt_profile_info info = {
		.program = prog ? prog : "",
		.target = s->child_cmd ? NULL : s->o.filter_pid ? target : NULL,
		.start_unix_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec - dur,
		.duration_ns = dur,
	};
	char *cmd = s->child_cmd ? xasprintf("-c '%s'", s->child_cmd) : NULL;
	snprintf(target, sizeof(target), "-p %u", s->o.filter_pid);
	if (cmd)
		info.target = cmd;
	for (int k = 0; k < 2; k++) {
		char *written = NULL;
		int rc;

		if (!s->profile_f[k])
			continue;
		/* The file opened at the start proved the path writable; the writer opens it
		 * again by path (a flame graph per stack map may add files beside it). */
		fclose(s->profile_f[k]);
		s->profile_f[k] = NULL;
		rc = dt_out_write_profile(s->out, kinds[k], paths[k], maps, s->maps.n, &info,
					  kinds[k] == DT_PROFILE_FLAMEGRAPH ? s->o.flamegraph_map : NULL,
					  &written);
		if (rc == -ENOENT && kinds[k] == DT_PROFILE_FLAMEGRAPH) {
			fprintf(s->err, "dwarftrace: --flamegraph-map %s: no map of that name is keyed "
				"by a stack with count/sum/min/max values\n", s->o.flamegraph_map);
			write_failed(s);
		} else if (rc < 0) {
			fprintf(s->err, "dwarftrace: %s: cannot write %s: %s\n", profile_opts[k],
				paths[k], dt_strerror(-rc));
			write_failed(s);
		} else if (written && strchr(written, ',')) {
			fprintf(s->err, "dwarftrace: --flamegraph: one graph per stack map: %s\n",
				written);
		}
		free(written);
	}
	free(cmd);
	free(prog);
	free(maps);
}

/* ---------------------------------------------------------------- codegen callbacks */

struct cg_ctx {
	dt_session *s;
	dt_unit *u;
};

static int cg_map_fd(void *ctx, const dt_map_sym *m)
{
	struct cg_ctx *c = ctx;

	if (m->id >= c->u->prog->nmaps)
		return -EINVAL;
	return c->s->maps.v[c->u->map_index[m->id]]->fd;
}

/* The unwinder's messages name their part themselves ("unwind: ", "walker: ", "exec follower: "). */
static void uw_log(void *ctx, const char *msg)
{
	dt_session *s = ctx;

	if (s->o.verbose)
		fprintf(s->err, "%s%s", msg,
			*msg && msg[strlen(msg) - 1] == '\n' ? "" : "\n");
}

/* What the unwinder must say without -v (a CPython it cannot read): once, prefixed like our other
 * warnings. */
static void uw_notice(void *ctx, const char *msg)
{
	dt_session *s = ctx;

	fprintf(s->err, "dwarftrace: %s\n", msg);
}

/* The symbolizer's question, the name of a Python frame: the unwinder's records answer. */
static int py_frame_name(void *ctx, uint32_t pid, uint64_t word, char *name, size_t nn,
			 char *file, size_t fnn, uint32_t *line)
{
	dt_session *s = ctx;

	return s->uw ? dt_unwinder_py_frame(s->uw, pid, word, name, nn, file, fnn, line) : -ENOENT;
}

/* The symbolizer's question, which image of pid runs now: the exec follower answers. */
static uint32_t exec_gen_now(void *ctx, uint32_t pid)
{
	const dt_session *s = ctx;

	return dt_exec_follower_gen(s->ef, pid);
}

/* Loads and attaches the exec follower on first use. 0, or -errno with a message printed. */
static int session_exec_follower(dt_session *s)
{
	dt_exec_follower_opts fo = { .sz = sizeof(fo), .log = uw_log, .log_ctx = s };
	int rc;

	if (s->ef)
		return 0;
	s->ef = dt_exec_follower_new(&fo);
	if (!s->ef) {
		rc = -errno;
		if (rc != -EPERM)
			fprintf(s->err, "dwarftrace: cannot follow exec (sched_process_exec): %s\n",
				dt_strerror(-rc));
		return perm_error(s, rc);
	}
	dt_sym_set_gen_fn(s->sym, exec_gen_now, s);
	return 0;
}

/* A process of the -c command held while the unwinder read it: now, not when its first stack
 * arrives (it may be gone by then), is when its mappings can be read for symbols. */
static void uw_held(void *ctx, uint32_t pid)
{
	dt_session *s = ctx;

	dt_sym_refresh_pid(s->sym, pid);
}

/* A debug file the unwinder asks for by build-id (a CPython interpreter's, for its structure
 * offsets): the symbolizer's debuginfod client, waited for at most 10 s (once per interpreter). */
static int uw_debug_file(void *ctx, const uint8_t *id, size_t idn, char **path)
{
	dt_session *s = ctx;

	return dt_sym_debuginfod_file(s->sym, id, idn, 10ull * 1000000000ull, path);
}

/* The unwinder, loaded on first use (by the resource step); NULL with a message printed if it
 * cannot load. */
static dt_unwinder *session_unwinder(dt_session *s)
{
	dt_unwinder_opts uo = { .sz = sizeof(uo), .log = uw_log, .log_ctx = s,
				.held = uw_held, .held_ctx = s,
				.notice = uw_notice, .notice_ctx = s,
				.debug_file = uw_debug_file, .debug_file_ctx = s,
				.elf_cache = s->elfc, .table_budget = s->o.unwind_budget,
				.max_stacks = s->o.unwind_stacks };
	if (s->uw)
		return s->uw;
	/* The walker follows exec through the session's one exec follower. */
	if (session_exec_follower(s) < 0) {
		s->uw_reported = true;
		return NULL;
	}
	uo.exec = s->ef;
	s->uw = dt_unwinder_new(&uo);
	if (s->uw)
		dt_sym_set_py_fn(s->sym, py_frame_name, s);
	/* Before anything attaches, so that no first sample finds "no tables yet": the -p process,
	 * or with neither -p nor -c (system-wide) every running process. A -c child has not exec'd
	 * yet: it is watched (its exec and library mmaps are followed) and read again at its entry
	 * point (loop.c); with a cgroup, it and every process it starts are followed from their
	 * exec and held while they are read instead. */
	if (s->uw && !s->o.dry_run && s->o.filter_pid) {
		dt_unwinder_add_pid(s->uw, s->o.filter_pid);
	} else if (s->uw && !s->o.dry_run && s->child > 0) {
		dt_unwinder_watch_pid(s->uw, (uint32_t)s->child);
		if (s->child_cgroup_id)
			dt_unwinder_follow_cgroup(s->uw, s->child_cgroup_id);
	} else if (s->uw && !s->o.dry_run) {
		dt_unwinder_add_all(s->uw); /* --dwarf-pid's processes among them */
	}
	/* --dwarf-pid beside -p or -c: those processes' tables too. One gone meanwhile is picked
	 * up as any process is, never, or when sampled: nothing to say. */
	for (uint32_t i = 0; s->uw && !s->o.dry_run && (s->o.filter_pid || s->child > 0) &&
			     i < s->o.ndwarf_pids; i++)
		dt_unwinder_add_pid(s->uw, s->o.dwarf_pids[i]);
	if (!s->uw && !s->uw_reported) {
		s->uw_reported = true;
		if (errno == EPERM)
			perm_error(s, -EPERM);
		else
			fprintf(s->err, "dwarftrace: ustack_dwarf: cannot load the DWARF stack walker: %s (run "
				"with -v for the details)\n", dt_strerror(errno));
	}
	return s->uw;
}

static int wrap_uw(dt_session *s, int fd, enum bpf_prog_type t)
{
	if (fd == -EOPNOTSUPP) {
		fprintf(s->err, "dwarftrace: ustack_dwarf cannot be used in this kind of probe (no stack "
			"walker for BPF program type %d)\n", (int)t);
	} else if (fd < 0 && fd != -EPERM && !s->uw_reported) {
		/* The precompiled walker is ours: a kernel refusing it is a dwarftrace bug. */
		fprintf(s->err, "dwarftrace: internal error: the kernel refused the DWARF stack walker for "
			"BPF program type %d (%s); this is a dwarftrace bug, please report it with "
			"the output of -v, which shows the verifier's log\n", (int)t, dt_strerror(-fd));
		s->uw_reported = true;
	}
	return fd;
}

/* The walkers for the program types in `types` (bit 1 << enum bpf_prog_type each), with the
 * unwinder, its tables for the running processes and its exec bookkeeping on first use. 0 or
 * -errno with a message printed. */
static int prepare_walkers(dt_session *s, uint64_t types)
{
	if (!session_unwinder(s))
		return -EOPNOTSUPP;
	for (int t = 0; t < 64; t++) {
		int rc = types & (1ull << t) ? dt_unwinder_load_walker(s->uw, t) : 0;

		if (rc < 0)
			return wrap_uw(s, rc, t);
	}
	return 0;
}

/* The unit's names map (dt_abi.h's dt_probe_name by attach slot), made and filled at once. */
static int make_probe_names(dt_session *s, dt_unit *u)
{
	int rc = aux_create(s, &u->names_fd, BPF_MAP_TYPE_ARRAY, "probe_names", 4,
			sizeof(struct dt_probe_name), DT_MAX(u->nattach, 1u));
	for (uint32_t i = 0; rc >= 0 && i < u->prog->nprobes; i++) {
		const dt_probe *p = u->prog->probes[i];

		for (uint32_t j = 0; rc >= 0 && j < p->nattach; j++) {
			const dt_attach *a = p->attach[j];
			struct dt_probe_name n = { { 0 } };

			/* As codegen writes them for a single attach point (cg_expr.c). */
			snprintf(n.func, sizeof(n.func), "%s", a->func ? a->func : a->text);
			snprintf(n.probe, sizeof(n.probe), "%s", dt_attach_probe_name(a));
			if (bpf_map_update_elem(u->names_fd, &a->index, &n, BPF_ANY) < 0) {
				rc = -errno;
				fprintf(s->err, "dwarftrace: cannot fill the probe names map: %s\n",
					dt_strerror(-rc));
			}
		}
	}
	return rc;
}

/* The resource step: every kernel object the unit's code will reference (dt_cg_resources_of) is
 * created, loaded or attached here, before codegen, which then only looks fds up (cg_aux_fd).
 * The events ring buffer is the unit's; the rest is the session's, made by the first unit that
 * needs it and shared with later ones. 0, or -errno with the reason printed. */
static int prepare_resources(dt_session *s, dt_unit *u, const dt_cg_resources *r)
{
	int rc;

	/* Any program may count a loss or need scratch memory (codegen.h): both are cheap. */
	rc = aux_create(s, &s->stats_fd, BPF_MAP_TYPE_PERCPU_ARRAY, "stats", 4, 8, DT_STAT__COUNT);
	dt_cg_scratch sh = dt_cg_scratch_shape(s->o.strlen);
	if (rc >= 0)
		rc = aux_create(s, &s->scratch_fd, BPF_MAP_TYPE_PERCPU_ARRAY, "scratch", 4,
				sh.entry_size, sh.entries);
	if (rc >= 0 && r->events)
		rc = aux_create(s, &u->events_fd, BPF_MAP_TYPE_RINGBUF, "events", 0, 0,
				dt_session_events_size(s));
	for (uint32_t i = 0; i < r->nstacks && rc >= 0; i++)
		rc = stack_map_fd(s, r->stacks[i].kind, r->stacks[i].depth, true);
	/* Before the walker: the unwinder shares the exec follower's process table. */
	if (rc >= 0 && r->user_addrs)
		rc = session_exec_follower(s);
	if (rc >= 0 && r->walker_prog_types)
		rc = prepare_walkers(s, r->walker_prog_types);
	if (rc >= 0 && r->xprobe_result)
		rc = dt_xprobe_load(s);
	if (rc >= 0 && r->probe_names)
		rc = make_probe_names(s, u);
	if (rc >= 0 && r->skb_output)
		rc = dt_skb_prepare(s, u);
	if (rc >= 0 && r->syscall_slots)
		rc = aux_create(s, &u->syscall_fd, BPF_MAP_TYPE_HASH, "syscall_slots",
				sizeof(struct dt_syscall_key), 4, DT_MAX(u->nattach, 1u));
	if (rc >= 0 && r->frame)
		rc = prepare_chains(s, r->chain_prog_types);
	return rc < 0 ? rc : 0;
}

/* dt_cg_env.aux_fd: a lookup among what prepare_resources made, -ENOENT for anything else. */
static int cg_aux_fd(void *ctx, dt_aux_map which, dt_stack_kind kind, uint32_t depth,
		     enum bpf_prog_type prog_type)
{
	struct cg_ctx *c = ctx;
	dt_session *s = c->s;
	int fd = -ENOENT;

	switch (which) {
	case DT_AUX_EVENTS:
		fd = c->u->events_fd;
		break;
	case DT_AUX_STATS:
		s->stats_used = true; /* its counters are reported at the end */
		fd = s->stats_fd;
		break;
	case DT_AUX_SCRATCH:
		fd = s->scratch_fd;
		break;
	case DT_AUX_PIDS_SEEN:
		fd = s->ef ? dt_exec_follower_seen_fd(s->ef) : -ENOENT;
		break;
	case DT_AUX_EXEC_GEN:
		fd = s->ef ? dt_exec_follower_gen_fd(s->ef) : -ENOENT;
		break;
	case DT_AUX_STACKS:
		fd = stack_map_fd(s, kind, depth, false);
		break;
	case DT_AUX_XPROBE_RESULT:
		fd = dt_xprobe_result_fd(s);
		break;
	case DT_AUX_PROBE_NAMES:
		fd = c->u->names_fd;
		break;
	case DT_AUX_SYSCALL_SLOTS:
		fd = c->u->syscall_fd;
		break;
	case DT_AUX_WALKER_PROGS:
		fd = s->uw ? dt_unwinder_walker_progs_fd(s->uw, prog_type) : -ENOENT;
		break;
	case DT_AUX_CONT_PROGS:
		fd = s->uw ? dt_unwinder_cont_progs_fd(s->uw, prog_type) : -ENOENT;
		break;
	case DT_AUX_WALKER_STATE:
		fd = s->uw ? dt_unwinder_state_fd(s->uw, prog_type) : -ENOENT;
		break;
	case DT_AUX_CHAIN_PROGS:
		fd = chain_fd(s, prog_type);
		break;
	case DT_AUX_FRAME:
		fd = s->frame_fd;
		break;
	case DT_AUX_SKB_OUTPUT:
		fd = dt_skb_map_fd(s);
		break;
	}
	return fd < 0 ? -ENOENT : fd;
}

static int cg_cont_slot(void *ctx)
{
	struct cg_ctx *c = ctx;

	/* Slots are handed out in order across the whole session and not reused, which bounds a
	 * REPL session to DT_CONT_SLOTS ustack_dwarf probes — plenty. */
	if (c->s->next_cont_slot >= DT_CONT_SLOTS ||
	    (c->s->uw && (uint32_t)c->s->next_cont_slot >= dt_unwinder_cont_slots(c->s->uw)))
		return -ENOSPC;
	return c->s->next_cont_slot++;
}

/* dt_cg_env.kfunc_id: a kernel function's id in the vmlinux BTF (the session's cached copy). */
static int cg_kfunc_id(void *ctx, const char *name)
{
	struct btf *btf = dt_rt_vmlinux_btf();
	int id;

	(void)ctx;
	if (!btf)
		return -ENODATA;
	id = btf__find_by_name_kind(btf, name, BTF_KIND_FUNC);
	return id > 0 ? id : -ENOENT;
}

/* Whether this kernel gives programs of prog_type helper `helper`: a program that calls it with
 * zero arguments is loaded, and the verifier's complaint says. libbpf_probe_bpf_helper takes
 * "cannot use helper" (a helper withheld, e.g. bpf_probe_write_user without CAP_SYS_ADMIN in
 * the initial user namespace) for yes. -1 when the probe itself cannot load (a type that needs
 * an attach target). */
static int cg_helper_allowed(void *ctx, enum bpf_prog_type prog_type, int helper)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3, .imm = 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = helper },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	char log[4096] = "";
	LIBBPF_OPTS(bpf_prog_load_opts, po, .log_buf = log, .log_size = sizeof(log),
		    .log_level = 1);
	int fd;

	(void)ctx;
	fd = bpf_prog_load(prog_type, "dt_helper_probe", "GPL", insns, DT_ARRAY_SIZE(insns), &po);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	if (strstr(log, "cannot use helper") || strstr(log, "unknown func") ||
	    strstr(log, "invalid func"))
		return 0;
	return strstr(log, "call ") ? 1 : -1; /* the call was verified: it failed on its arguments */
}

static int cg_chain_slot(void *ctx)
{
	struct cg_ctx *c = ctx;

	/* Like continuation slots: in order, never reused. */
	if (c->s->next_chain_slot >= DT_CHAIN_SLOTS)
		return -ENOSPC;
	return c->s->next_chain_slot++;
}

static bool chk_existing_map(void *ctx, const char *name, const dt_type **key,
			     const dt_type **value)
{
	dt_smap *m = dt_session_find_map(ctx, name);

	if (!m)
		return false;
	*key = m->sym.key;
	*value = m->sym.value;
	return true;
}

/* The check callbacks share one ctx: the expansion context first, so dt_rt_expand can take it. */
struct chk_ctx {
	struct dt_rt_expand_ctx x;
	dt_session *s;
};

static bool chk_existing(void *ctx, const char *name, const dt_type **key, const dt_type **value)
{
	return chk_existing_map(((struct chk_ctx *)ctx)->s, name, key, value);
}

/* ---------------------------------------------------------------- loading */

static const char *prog_label(const dt_cg_prog *p)
{
	return p->attach && p->attach->text ? p->attach->text : p->name;
}

static void print_log_tail(FILE *f, const char *log, int lines)
{
	const char *p = log + strlen(log);

	/* Skip trailing newlines, then walk back `lines` lines. */
	while (p > log && p[-1] == '\n')
		p--;
	for (int n = 0; p > log; p--)
		if (p[-1] == '\n' && ++n == lines)
			break;
	if (p > log)
		fprintf(f, "...\n");
	fprintf(f, "%s\n", p);
}

/* The BTF a program with callbacks loads with (the kernel wants func_info for each of its
 * functions then): one static function type `long dt_func(void)` that every function names
 * (the verifier checks the arguments of global functions only). Its BTF object, or NULL with
 * -errno in *err. */
static struct btf *func_btf(uint32_t *func_id, int *err)
{
	struct btf *b = btf__new_empty();
	int lng, proto, fn;

	if (!b) {
		*err = -errno;
		return NULL;
	}
	lng = btf__add_int(b, "long", 8, BTF_INT_SIGNED);
	proto = lng > 0 ? btf__add_func_proto(b, lng) : lng;
	fn = proto > 0 ? btf__add_func(b, "dt_func", BTF_FUNC_STATIC, proto) : proto;
	*err = fn > 0 ? btf__load_into_kernel(b) : fn;
	if (*err) {
		btf__free(b);
		return NULL;
	}
	*func_id = (uint32_t)fn;
	return b;
}

/* The BTF and func_info of a program with subprograms (p->nfuncs), set in *opts: 0, or -errno
 * with nothing to free. */
static int func_info_of(const dt_cg_prog *p, struct bpf_prog_load_opts *opts, struct btf **btf,
			struct bpf_func_info **finfo)
{
	uint32_t fid = 0;
	int r = 0;

	*btf = NULL;
	*finfo = NULL;
	if (!p->nfuncs)
		return 0;
	*btf = func_btf(&fid, &r);
	if (!*btf)
		return r ? r : -EINVAL;
	*finfo = xcalloc(p->nfuncs, sizeof(**finfo));
	for (uint32_t i = 0; i < p->nfuncs; i++)
		(*finfo)[i] = (struct bpf_func_info){ .insn_off = p->func_offs[i], .type_id = fid };
	opts->prog_btf_fd = (uint32_t)btf__fd(*btf);
	opts->func_info = *finfo;
	opts->func_info_cnt = p->nfuncs;
	opts->func_info_rec_size = sizeof(**finfo);
	return 0;
}

/* Loads one program. The first try has no log (cheap); a failure, or -d verifier, loads again
 * with a log, growing the buffer on ENOSPC. */
int dt_rt_load_prog(dt_session *s, const dt_cg_prog *p, int *fd_out)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = p->expected_attach_type);
	bool with_log = s->o.dump & DT_DUMP_VERIFIER;
	int obj_fd = -1;

	if (p->prog_type == BPF_PROG_TYPE_TRACING && p->attach) {
		uint32_t id = 0;
		int r = dt_rt_attach_btf_id(p->attach, p->expected_attach_type, &id, &obj_fd);

		if (r < 0) {
			fprintf(s->err, "dwarftrace: %s: no BTF id for '%s' to load against: %s\n",
				p->attach->text, p->attach->func, dt_strerror(-r));
			*fd_out = -1;
			return r;
		}
		opts.attach_btf_id = id;
		if (obj_fd >= 0)
			opts.attach_btf_obj_fd = (uint32_t)obj_fd;
	}
	struct btf *btf = NULL;
	struct bpf_func_info *finfo = NULL;
	int r = func_info_of(p, &opts, &btf, &finfo);

	if (r < 0) {
		fprintf(s->err, "dwarftrace: probe %s: cannot load the BTF its loop callbacks "
			"need: %s\n", prog_label(p), dt_strerror(-r));
		if (obj_fd >= 0)
			close(obj_fd);
		*fd_out = -1;
		return r;
	}
	size_t logsz = s->o.log_size ? s->o.log_size : 1u << 18;
	char *log = NULL;
	int fd, rc = 0;

	for (;;) {
		if (with_log) {
			log = xrealloc(log, logsz);
			log[0] = 0;
			opts.log_buf = log;
			opts.log_size = (uint32_t)logsz;
			/* -d verifier wants every instruction's state; a failure needs less. */
			opts.log_level = (s->o.dump & DT_DUMP_VERIFIER) ? 2 : 1;
		}
		fd = bpf_prog_load(p->prog_type, p->name, "GPL", p->insns, p->ninsns, &opts);
		if (fd >= 0)
			break;
		rc = -errno;
		if (rc == -EPERM && geteuid() != 0)
			break; /* privileges, not the verifier: no log will help */
		if (!with_log) {
			with_log = true;
			continue;
		}
		if (rc == -ENOSPC && logsz < (1u << 30)) {
			logsz *= 4;
			continue;
		}
		break;
	}
	if (obj_fd >= 0)
		close(obj_fd);
	btf__free(btf);
	free(finfo);
	if (fd < 0 && rc == -EPERM && geteuid() == 0 && p->attach &&
	    (p->attach->provider == DT_P_FENTRY || p->attach->provider == DT_P_FEXIT)) {
		/* Root, and still refused: the kernel does not let BPF trampolines be made here. */
		fprintf(s->err, "dwarftrace: %s: this kernel refuses fentry/fexit programs "
			"(loading one: Operation not permitted); use a tracepoint or "
			"rawtracepoint here, or a kernel that allows them\n", p->attach->text);
		free(log);
		*fd_out = -1;
		return rc;
	}
	if (fd >= 0 && (s->o.dump & DT_DUMP_VERIFIER) && log) {
		fprintf(s->err, "-- verifier log for %s (%s, %zu instructions):\n%s\n",
			prog_label(p), p->name, p->ninsns, log);
	} else if (fd < 0 && rc == -EPERM && geteuid() != 0) {
		perm_error(s, rc);
	} else if (fd < 0 && log && strstr(log, "helper call is not allowed in probe")) {
		/* bpf_d_path (path()) outside the kernel's btf_allowlist_d_path: 0.17's words. */
		fprintf(s->err, "dwarftrace: %s: helper bpf_d_path not supported in probe (the "
			"kernel allows path() only in the functions of its btf_allowlist_d_path: "
			"vfs_*, filp_close, security_file_open, …)\n", prog_label(p));
	} else if (fd < 0 && p->imported_c) {
		/* The C is the user's: the verifier's reasons are theirs to read. */
		fprintf(s->err, "dwarftrace: the verifier rejected probe %s, which runs code of the "
			"imported %s (checked by the verifier as written: it may read memory only "
			"through BPF helpers, e.g. bpf_probe_read_kernel)\n", prog_label(p),
			p->imported_c);
		fprintf(s->err, "bpf_prog_load: %s\n", dt_strerror(-rc));
		if (log && *log)
			print_log_tail(s->err, log, (s->o.dump & DT_DUMP_VERIFIER)
							    ? 1 << 30 : VERIFIER_TAIL_LINES);
	} else if (fd < 0) {
		fprintf(s->err, "dwarftrace: internal error: the verifier rejected generated code for probe %s "
			"(this is a dwarftrace bug; please report it with the output of "
			"-d verifier)\n", prog_label(p));
		fprintf(s->err, "bpf_prog_load: %s\n", dt_strerror(-rc));
		if (log && *log)
			print_log_tail(s->err, log, (s->o.dump & DT_DUMP_VERIFIER)
							    ? 1 << 30 : VERIFIER_TAIL_LINES);
	}
	free(log);
	*fd_out = fd < 0 ? -1 : fd;
	return fd < 0 ? rc : 0;
}

static bool is_begin_end(const dt_cg_prog *p, dt_provider which)
{
	return p->attach && p->attach->provider == which;
}

/* Loading a large script's programs is mostly the kernel's verifier, which runs in the thread
 * that calls bpf(): PRELOAD_MIN programs or more are first loaded quietly (no log) by
 * dt_worker_threads() threads, each taking the next program not taken. What loaded is kept; what
 * did not (or was not tried: fentry/fexit, -d verifier) is loaded again in order by
 * dt_rt_load_prog, which then says what went wrong exactly as without the threads. */
#define PRELOAD_MIN 16

struct preload {
	const dt_cg_prog *progs; /* with the expected attach type load_unit decided */
	uint32_t n;
	int *fds;                /* -1: not loaded */
	pthread_mutex_t lock;
	uint32_t next;
	bool failed;             /* stop: the rest loads in order, and fails there */
};

static void *preload_main(void *arg)
{
	struct preload *pl = arg;

	for (;;) {
		pthread_mutex_lock(&pl->lock);
		uint32_t i = pl->failed ? pl->n : pl->next++;
		pthread_mutex_unlock(&pl->lock);
		if (i >= pl->n)
			return NULL;
		const dt_cg_prog *p = &pl->progs[i];
		LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = p->expected_attach_type);
		struct btf *btf;
		struct bpf_func_info *finfo;

		if (p->prog_type == BPF_PROG_TYPE_TRACING)
			continue;
		if (func_info_of(p, &opts, &btf, &finfo) == 0) {
			pl->fds[i] = bpf_prog_load(p->prog_type, p->name, "GPL", p->insns, p->ninsns,
						   &opts);
			btf__free(btf);
			free(finfo);
		}
		if (pl->fds[i] < 0) {
			pl->fds[i] = -1;
			pthread_mutex_lock(&pl->lock);
			pl->failed = true;
			pthread_mutex_unlock(&pl->lock);
		}
	}
}

static void preload(dt_session *s, const dt_cg_prog *progs, uint32_t n, int *fds)
{
	struct preload pl = { .progs = progs, .n = n, .fds = fds };
	unsigned nth = dt_worker_threads();
	pthread_t th[64];
	unsigned started = 0;

	for (uint32_t i = 0; i < n; i++)
		fds[i] = -1;
	if (n < PRELOAD_MIN || nth < 2 || (s->o.dump & DT_DUMP_VERIFIER))
		return;
	pthread_mutex_init(&pl.lock, NULL);
	for (unsigned t = 1; t < nth && t < DT_ARRAY_SIZE(th); t++)
		if (pthread_create(&th[started], NULL, preload_main, &pl) == 0)
			started++;
	preload_main(&pl);
	for (unsigned t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	pthread_mutex_destroy(&pl.lock);
}

/* Loads every program; continuations go into the prog-array slot their entry reserved. */
static int load_unit(dt_session *s, dt_unit *u, const dt_cg_result *cg)
{
	int *fds = xcalloc(cg->nprogs + 1, sizeof(int)), rc = 0;
	dt_cg_prog *progs = xcalloc(cg->nprogs + 1, sizeof(*progs));
	uint32_t i;

	for (i = 0; i < cg->nprogs; i++) {
		progs[i] = cg->progs[i];
		if (!progs[i].is_continuation &&
		    dt_rt_set_multi(progs[i].set, progs[i].nset, s->o.uprobe_pid,
				    progs[i].cont_slot >= 0))
			progs[i].expected_attach_type = BPF_TRACE_UPROBE_MULTI;
	}
	preload(s, progs, cg->nprogs, fds);
	for (i = 0; i < cg->nprogs; i++) {
		if (fds[i] < 0)
			rc = dt_rt_load_prog(s, &progs[i], &fds[i]);
		if (rc < 0)
			break;
		DT_VEC_PUSH(&u->prog_fds, fds[i]);
	}
	free(progs);
	if (rc < 0) {
		/* Loaded ahead of the one that failed: never pushed, closed here. */
		for (uint32_t j = i + 1; j < cg->nprogs; j++)
			if (fds[j] >= 0)
				close(fds[j]);
		goto out;
	}
	for (uint32_t i = 0; i < cg->nprogs; i++) {
		const dt_cg_prog *e = &cg->progs[i];
		int cont = -1;

		if (e->is_continuation || e->cont_slot < 0)
			continue;
		/* The entry's continuation: same probe and attach point, the next one first. */
		for (uint32_t j = 0; j < cg->nprogs && cont < 0; j++) {
			uint32_t k = (i + 1 + j) % cg->nprogs;

			if (cg->progs[k].is_continuation && cg->progs[k].probe == e->probe &&
			    cg->progs[k].attach == e->attach)
				cont = (int)k;
		}
		int cfd = s->uw ? dt_unwinder_cont_progs_fd(s->uw, e->prog_type) : -1;

		if (cont < 0 || cfd < 0) {
			fprintf(s->err, "dwarftrace: internal error: probe %s has no continuation program "
				"(this is a dwarftrace bug; please report it)\n", prog_label(e));
			rc = -EINVAL;
			goto out;
		}
		if (bpf_map_update_elem(cfd, &e->cont_slot, &fds[cont], BPF_ANY) < 0) {
			rc = -errno;
			fprintf(s->err, "dwarftrace: cannot install the continuation of %s: %s\n",
				prog_label(e), dt_strerror(-rc));
			goto out;
		}
	}
	/* Later parts of split probes: every slot is filled before anything attaches, so a
	 * chain never finds one empty. */
	for (uint32_t i = 0; i < cg->nprogs; i++) {
		const dt_cg_prog *p = &cg->progs[i];
		struct dt_chain_slot cs = { .type = p->prog_type, .slot = p->chain_slot };

		if (p->chain_slot < 0)
			continue;
		if (bpf_map_update_elem(chain_fd(s, p->prog_type), &cs.slot, &fds[i], BPF_ANY) < 0) {
			rc = -errno;
			fprintf(s->err, "dwarftrace: cannot chain part %s of %s: %s\n", p->name, prog_label(p),
				strerror(-rc));
			goto out;
		}
		DT_VEC_PUSH(&u->chain_slots, cs);
	}
out:
	free(fds);
	return rc;
}

/* Whether validating `a` failed with `rc` because it matches nothing: no such function, event or
 * marker (elsewhere -ENOENT means more: no hardware counters, no kernel support; for a uprobe, a
 * binary that is not there, which keeps its own words). */
static bool matches_nothing(dt_unit *u, const dt_attach *a, int rc)
{
	char *path = NULL;

	if (rc != -ENOENT)
		return false;
	switch (a->provider) {
	case DT_P_UPROBE: case DT_P_URETPROBE:
		if (dt_rt_resolve_binary(a->target, u->s->o.uprobe_pid, &path) < 0)
			return false;
		free(path);
		return true;
	case DT_P_KPROBE: case DT_P_KRETPROBE: case DT_P_TRACEPOINT: case DT_P_USDT:
		return true;
	default:
		return false;
	}
}

/* bpftrace's sentence for attach point `a` that is missing (`No matches for uprobe ./x:f`) or
 * that failed to attach (`Unable to attach probe: uprobe:./x:f`), without its full stop. */
static void skipped_words(const dt_attach *a, bool missing, char *buf, size_t n)
{
	if (missing)
		dt_attach_no_match(a, buf, n);
	else
		snprintf(buf, n, "Unable to attach probe: %s", a->text);
}

/* An attach point that is skipped (the rest goes on): bpftrace's warning (`… Skipping.`) and why
 * on a HINT line; an error instead while validating with missing_probes=error. `missing`: it
 * matched nothing, rather than failing to attach. */
static void say_skipped(dt_unit *u, const dt_attach *a, bool missing, const char *why)
{
	char words[512], msg[530];

	skipped_words(a, missing, words, sizeof(words));
	if (u->s->o.missing_probes == DT_MISSING_ERROR && u->validating) {
		dt_diag(u->validating, DT_DIAG_ERROR, a->span, "%s.", words);
		dt_diag_hint(u->validating, "%s", why);
		return;
	}
	if (u->s->o.no_warnings || u->s->o.missing_probes == DT_MISSING_IGNORE)
		return;
	snprintf(msg, sizeof(msg), "%s. Skipping.", words);
	dt_diag_render(u->s->err, &u->src, a->span, DT_DIAG_WARNING, msg, false);
	fprintf(u->s->err, "HINT: %s\n", why);
}

/* A set's member skipped (dt_rt_validate_set, dt_rt_attach_set). */
static void warn_skipped(void *ctx, const dt_attach *a, int rc, const char *why)
{
	say_skipped(ctx, a, matches_nothing(ctx, a, rc), why);
}

/* The attach error of attach point `a`, as a diagnostic at its span. */
static void attach_error(dt_session *s, dt_unit *u, const dt_attach *a, int rc, const char *err)
{
	/* A fresh list: the compile's warnings were printed already. */
	dt_diags *ad = dt_diags_new(&u->src);

	perm_error(s, rc);
	dt_diag(ad, DT_DIAG_ERROR, a->span, "%s", err ? err : dt_strerror(-rc));
	dt_diags_print(ad, s->err, isatty(fileno(s->err)));
	dt_diags_free(ad);
}

/* Attaching stops when a caught SIGINT/SIGTERM has come in meanwhile. */
static bool attach_cancelled(void *ctx)
{
	dt_session *s = ((dt_unit *)ctx)->s;

	dt_loop_poll_signals(s);
	return dt_session_stopped(s) != NULL;
}

/* Whether the kernel runs the programs attached to one such event newest first. */
/* dwarftrace's pid namespace when it is not the initial one (zeros when it is, or when it cannot
 * be told): `pid` and `tid` number tasks as that namespace does, as bpftrace's do. */
struct own_pidns {
	uint64_t dev, ino;
};

static struct own_pidns own_pidns(void)
{
	struct stat st;

	/* The initial namespace's inode number is fixed (PROC_PID_INIT_INO). */
	if (stat("/proc/self/ns/pid", &st) < 0 || st.st_ino == 0xEFFFFFFCu)
		return (struct own_pidns){ 0 };
	return (struct own_pidns){ .dev = st.st_dev, .ino = st.st_ino };
}

static bool runs_newest_first(const dt_attach *a)
{
	dt_provider pv = a->provider;

	/* The clock software events are timers, one per event: the one started first fires
	 * first. The other software events run the newest of an event's list first. */
	if (pv == DT_P_SOFTWARE && a->target &&
	    (!strcmp(a->target, "cpu-clock") || !strcmp(a->target, "task-clock")))
		return false;
	return pv == DT_P_UPROBE || pv == DT_P_URETPROBE || pv == DT_P_USDT || pv == DT_P_KPROBE ||
	       pv == DT_P_KRETPROBE || pv == DT_P_SOFTWARE || pv == DT_P_HARDWARE;
}

static int cmp_usdt_probe(const void *a, const void *b)
{
	const dt_usdt_loc *x = *(const dt_usdt_loc *const *)a, *y = *(const dt_usdt_loc *const *)b;
	int r = strcmp(x->path, y->path);

	if (!r)
		r = strcmp(x->provider, y->provider);
	return r ? r : strcmp(x->name, y->name);
}

/* The probes the unit attaches, counted two ways: *nuprobes as 0.17 counted them ("Attaching N
 * probes...": every uprobe it made, so each location of a USDT marker), the return value as
 * current bpftrace does ("Attached N probes", JSON's attached_probes: one for each USDT probe, a
 * marker of one object however many locations it has, as libbpf's bpf_program__attach_usdt
 * attaches it whole). Attach points validate_probe skipped are not counted. */
static uint32_t count_probes(const dt_unit *u, const dt_cg_result *cg, uint32_t *nuprobes)
{
	DT_VEC(const dt_usdt_loc *) usdt = { 0 };
	uint32_t n = 0;

	for (uint32_t i = 0; i < cg->nprogs; i++)
		for (uint32_t k = 0; !cg->progs[i].is_continuation && cg->progs[i].chain_slot < 0 &&
				      k < cg->progs[i].nset; k++) {
			const dt_attach *a = cg->progs[i].set[k];

			if (u->skip[a->index])
				continue;
			n++;
			if (a->provider == DT_P_USDT && a->usdt)
				DT_VEC_PUSH(&usdt, a->usdt);
		}
	*nuprobes = n;
	if (usdt.n)
		qsort(usdt.v, usdt.n, sizeof(*usdt.v), cmp_usdt_probe);
	for (size_t i = 1; i < usdt.n; i++)
		n -= !cmp_usdt_probe(&usdt.v[i - 1], &usdt.v[i]);
	free(usdt.v);
	return n;
}

static int attach_unit(dt_session *s, dt_unit *u, const dt_cg_result *cg)
{
	uint32_t nprobes;
	uint32_t nshown = count_probes(u, cg, &nprobes);
	uint64_t t0 = dt_now_ns();
	int rc = 0;

	/* BEGIN and END first: an attach failure that ends the session still runs END. */
	for (uint32_t i = 0; i < cg->nprogs; i++) {
		const dt_cg_prog *p = &cg->progs[i];

		if (p->is_continuation || p->chain_slot >= 0 || !p->attach)
			continue;
		if (is_begin_end(p, DT_P_BEGIN)) {
			DT_VEC_PUSH(&u->begin_fds, u->prog_fds.v[i]);
			DT_VEC_PUSH(&u->begin_types, p->prog_type);
		} else if (is_begin_end(p, DT_P_END)) {
			DT_VEC_PUSH(&u->end_fds, u->prog_fds.v[i]);
			DT_VEC_PUSH(&u->end_types, p->prog_type);
		} else if (is_begin_end(p, DT_P_SELF) && s->o.mode == DT_MODE_RUN) {
			DT_VEC_PUSH(&u->signal_fds, u->prog_fds.v[i]);
		} else if (is_begin_end(p, DT_P_TEST) || is_begin_end(p, DT_P_BENCH)) {
			DT_VEC_PUSH(&u->test_fds, u->prog_fds.v[i]);
			DT_VEC_PUSH(&u->test_names, p->attach->target);
		}
	}
	/* BEGIN runs before any other probe is attached, as in bpftrace: its output comes first,
	 * and an interval or a timer measured from a time BEGIN took (`@start = nsecs`) starts
	 * after it. Its records wait in the ring buffer until the loop reads them. */
	for (size_t i = 0; i < u->begin_fds.n; i++) {
		char *err = NULL;

		if (dt_rt_run_once(u->begin_fds.v[i], u->begin_types.v[i], &err) < 0) {
			fprintf(s->err, "dwarftrace: BEGIN: %s\n", err);
			free(err);
		}
	}
	/* Probes on the same event run in the order the script gives them, as bpftrace arranges:
	 * the kernel runs the programs of a tracepoint oldest first, but those of a uprobe, a
	 * kprobe or a perf counter newest first (a clock's timers: the first started first), so
	 * those attach last first, after the others. */
	for (uint32_t step = 0; step < 2 * cg->nprogs && rc >= 0; step++) {
		uint32_t i = step < cg->nprogs ? step : 2 * cg->nprogs - 1 - step;
		const dt_cg_prog *p = &cg->progs[i];
		size_t before = u->attached.n;
		uint32_t n = 1;
		char *err = NULL;

		bool live = false;

		/* --test/--bench attach nothing: BEGIN, the tests, END (as bpftrace). self probes
		 * are run by the loop, test and bench probes by dt_session_run_tests. */
		/* A later part of a probe in parts runs only by its chain's tail call, after the
		 * part before it (and the predicate): attached, it ran on every event. */
		if (p->is_continuation || p->chain_slot >= 0 || !p->attach ||
		    is_begin_end(p, DT_P_BEGIN) || is_begin_end(p, DT_P_END) ||
		    s->o.mode != DT_MODE_RUN ||
		    is_begin_end(p, DT_P_SELF) ||
		    runs_newest_first(p->attach) != (step >= cg->nprogs))
			continue;
		/* Every attach point of it was skipped (validate_probe warned). */
		for (uint32_t m = 0; m < p->nset; m++)
			live |= !u->skip[p->set[m]->index];
		if (!live)
			continue;
		if (attach_cancelled(u))
			break;
		if (p->nset > 1) {
			dt_rt_set st = {
				.set = p->set, .n = p->nset, .skip = &u->skip[p->attach->index],
				.prog_fd = u->prog_fds.v[i], .pid = s->o.uprobe_pid, .syscall_fd = -1,
				.multi = dt_rt_set_multi(p->set, p->nset, s->o.uprobe_pid,
							 p->cont_slot >= 0),
				.cancelled = attach_cancelled, .skipped = warn_skipped, .ctx = u,
			};

			/* A syscall set: raw_syscalls may serve it (attach_bulk.c); the resource
			 * step made the unit's syscall map for it. */
			if (p->attach->provider == DT_P_TRACEPOINT && p->attach->target &&
			    !strcmp(p->attach->target, "syscalls"))
				st.syscall_fd = u->syscall_fd;
			rc = dt_rt_attach_set(&st, &u->attached, &n, &err);
		} else if (p->attach->provider == DT_P_XPROBE) {
			rc = dt_xprobe_attach(s, p->attach, u->prog_fds.v[i], &u->attached, &err);
		} else if (p->attach->provider == DT_P_WATCHPOINT ||
			   p->attach->provider == DT_P_ASYNCWATCHPOINT) {
			rc = dt_wp_attach(s, u, p->attach, u->prog_fds.v[i], &err);
		} else {
			rc = dt_rt_attach(p->attach, u->prog_fds.v[i], s->o.uprobe_pid,
					  &u->attached, &err);
			if (rc >= 0 && p->attach->provider == DT_P_ITER)
				u->iter_link = u->attached.v[u->attached.n - 1];
		}
		if (rc == -ECANCELED) {
			u->nprobes_attached += n;
			rc = 0;
			break;
		}
		if (rc < 0) {
			attach_error(s, u, p->attach, rc, err);
			free(err);
			break;
		}
		u->nprobes_attached += n;
		/* A fixed-address executable traced here still names its frames in a process that
		 * exits before its first event is read (dt_sym_add_fixed_image). */
		if ((p->attach->provider == DT_P_UPROBE || p->attach->provider == DT_P_URETPROBE ||
		     p->attach->provider == DT_P_USDT) && p->attach->target) {
			char *path = NULL;

			if (dt_rt_resolve_binary(p->attach->target, s->o.uprobe_pid, &path) >= 0)
				dt_sym_add_fixed_image(s->sym, path);
			free(path);
		}
		if (s->o.verbose && p->nset > 1)
			fprintf(s->err, "attached %s and %u more of its set (%zu fd%s)\n",
				p->attach->text, n - 1, u->attached.n - before,
				u->attached.n - before == 1 ? "" : "s");
		else if (s->o.verbose)
			fprintf(s->err, "attached %s (%zu perf event%s)\n", p->attach->text,
				u->attached.n - before, u->attached.n - before == 1 ? "" : "s");
	}
	s->t_attach += dt_now_ns() - t0;
	/* Said once the probes are live, so that a user (or a test) may start the workload on
	 * this line; members of a set found unusable before attaching are not counted. */
	if (rc >= 0 && s->o.announce && !dt_session_stopped(s)) {
		dt_out_attached(s->out, s->o.format == DT_FORMAT_JSON ? nshown : nprobes);
		dt_out_flush(s->out);
		/* Both bpftraces' words: 0.17's "Attaching N probes..." on stdout (above), current
		 * bpftrace's "Attached N probes" on stderr, where its users and tests look for it,
		 * each with its count (count_probes). JSON output has its one attached_probes
		 * object, current bpftrace's. */
		if (s->o.format == DT_FORMAT_TEXT) {
			fprintf(s->err, "Attached %u probe%s\n", nshown,
				nshown == 1 ? "" : "s");
			fflush(s->err);
		}
	}
	return rc;
}

/* Which attach points validate_attach_points looks at. A dry run loads the programs even where
 * the machine lacks what they attach to (kprobes, a PMU), so that they are compiled and verified,
 * and then says what could not attach here: those are checked after the load. */
enum validate_what { VALIDATE_ALL, VALIDATE_BUT_MACHINE, VALIDATE_MACHINE };

static bool needs_machine(dt_provider pv)
{
	return pv == DT_P_KPROBE || pv == DT_P_KRETPROBE || pv == DT_P_HARDWARE;
}

/* Attach points that cannot work are script errors, reported before anything loads (and before
 * "Attaching N probes..."), as bpftrace does — unless the probe has others that can: then, as in
 * bpftrace, each one that cannot (a function missing from a list or a wildcard, a tracepoint
 * this kernel lacks) is skipped with a warning. In a set of attach points that one program
 * serves, dt_rt_validate_set skips such members itself. */
struct bad_group {
	uint32_t j, k; /* attach points [j, k) of the probe */
	int rc;
	char *err;
};

static int validate_probe(dt_session *s, dt_unit *u, const dt_probe *p, dt_diags *d,
			  enum validate_what w)
{
	DT_VEC(struct bad_group) bad = { 0 };
	bool usable = false;
	int rc = 0;

	for (uint32_t j = 0, k; j < p->nattach; j = k) {
		const dt_attach *a = p->attach[j];
		dt_provider pv = a->provider;
		char *err = NULL;
		int r;

		for (k = j + 1; k < p->nattach && dt_cg_same_set(a, p->attach[k]); k++)
			;
		if ((w == VALIDATE_BUT_MACHINE && needs_machine(pv)) ||
		    (w == VALIDATE_MACHINE && !needs_machine(pv))) {
			/* Not looked at in this pass: usable unless an earlier pass said not. */
			for (uint32_t i = j; i < k; i++)
				usable |= !u->skip[p->attach[i]->index];
			continue;
		}
		if (k - j > 1) {
			dt_rt_set st = { .set = (const dt_attach *const *)&p->attach[j],
					 .n = k - j, .pid = s->o.uprobe_pid,
					 .skipped = warn_skipped, .ctx = u };

			r = dt_rt_validate_set(&st, &u->skip[a->index], &err);
		} else {
			r = dt_rt_validate(a, s->o.uprobe_pid, &err);
		}
		if (r < 0) {
			DT_VEC_PUSH(&bad, ((struct bad_group){ .j = j, .k = k, .rc = r, .err = err }));
			continue;
		}
		free(err);
		for (uint32_t i = j; i < k; i++)
			usable |= !u->skip[p->attach[i]->index];
	}
	/* missing_probes=error: nothing is skipped; =warn and =ignore: even a probe left with
	 * no attach point is (it attaches nothing). */
	if (s->o.missing_probes == DT_MISSING_ERROR)
		usable = false;
	else if (s->o.missing_probes == DT_MISSING_WARN || s->o.missing_probes == DT_MISSING_IGNORE)
		usable = true;
	for (size_t i = 0; i < bad.n; i++) {
		const struct bad_group *b = &bad.v[i];
		const dt_attach *a = p->attach[b->j];
		const char *why = b->err ? b->err : dt_strerror(-b->rc);
		size_t tl = strlen(a->text);

		bool missing = matches_nothing(u, a, b->rc);
		char words[512];

		/* "uprobe:x:f: no function 'f' ..." says its attach point already. */
		if (!strncmp(why, a->text, tl) && !strncmp(why + tl, ": ", 2) && (usable || missing))
			why += tl + 2;
		if (usable) {
			for (uint32_t m = b->j; m < b->k; m++) {
				u->skip[p->attach[m]->index] = true;
				say_skipped(u, p->attach[m], missing, why);
			}
		} else if (b->rc == DT_RT_REFUSED) {
			/* bpftrace's shape: its sentences on ERROR lines of their own (scripts and
			 * its tests match them whole), then which attach point. */
			dt_diag_unplaced(d, DT_DIAG_ERROR, "%s", why);
			dt_diag(d, DT_DIAG_ERROR, a->span, "Unable to attach probe: %s.", a->text);
			rc = rc ? rc : b->rc;
		} else if (missing) {
			skipped_words(a, true, words, sizeof(words));
			dt_diag(d, DT_DIAG_ERROR, a->span, "%s.", words);
			dt_diag_hint(d, "%s", why);
			rc = rc ? rc : b->rc;
		} else {
			dt_diag(d, DT_DIAG_ERROR, a->span, "%s", why);
			rc = rc ? rc : b->rc;
		}
		free(b->err);
	}
	free(bad.v);
	return rc;
}

static int validate_attach_points(dt_session *s, dt_unit *u, dt_diags *d, enum validate_what w)
{
	int rc = 0;

	if (!u->skip) {
		u->nattach = 0;
		for (uint32_t i = 0; i < u->prog->nprobes; i++)
			u->nattach += u->prog->probes[i]->nattach;
		u->skip = xcalloc(u->nattach + 1, sizeof(*u->skip));
	}
	int errors = dt_diags_error_count(d);

	u->validating = d;
	for (uint32_t i = 0; i < u->prog->nprobes; i++) {
		int r = validate_probe(s, u, u->prog->probes[i], d, w);

		rc = rc ? rc : r;
	}
	u->validating = NULL;
	/* missing_probes=error said that a member of a set is missing. */
	return rc ? rc : dt_diags_error_count(d) > errors ? -ENOENT : 0;
}

static void print_diags(dt_session *s, dt_diags *d, bool color)
{
	if (s->o.no_warnings)
		dt_diags_drop_warnings(d);
	dt_diags_print(d, s->err, color);
}

/* Drops maps created after index n0 (a unit that failed must not leave maps behind). */
static void drop_maps_from(dt_session *s, size_t n0)
{
	while (s->maps.n > n0) {
		dt_smap *m = s->maps.v[--s->maps.n];

		dt_strmap_put(&s->map_names, m->sym.name, NULL);
		close(m->fd);
		free(m);
	}
}

/* Every script map is a file descriptor, and so is every program and attached event. A script
 * with more maps than the soft limit leaves room for (often 1024) raises it, up to the hard
 * limit; past that it says why it cannot run. The -c command was started before: it keeps the
 * limit it was given. */
static int ensure_fds(dt_session *s, size_t more_maps)
{
	/* Room for the rest: at least 256 descriptors, better 1024. */
	rlim_t maps = (rlim_t)(s->maps.n + more_maps), need = maps + 256, want = maps + 1024;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
		fprintf(s->err, "dwarftrace: this script needs at least %llu file descriptors for its %llu maps "
			"and programs, more than this process may open (ulimit -Hn: %llu)\n",
			(unsigned long long)need, (unsigned long long)maps,
			(unsigned long long)rl.rlim_max);
		return -EMFILE;
	}
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? want : DT_MIN(want, rl.rlim_max);
	return setrlimit(RLIMIT_NOFILE, &rl) < 0 ? -errno : 0;
}

static int create_unit_maps(dt_session *s, dt_unit *u)
{
	int rc = ensure_fds(s, u->prog->nmaps);

	if (rc < 0)
		return rc;
	u->map_index = xcalloc(u->prog->nmaps + 1, sizeof(*u->map_index));
	for (uint32_t i = 0; i < u->prog->nmaps; i++) {
		const dt_map_sym *m = u->prog->maps[i];
		dt_smap *sm = dt_session_find_map(s, m->name);
		int rc;

		if (!sm) {
			rc = create_script_map(s, m, &sm);
			if (rc < 0)
				return rc;
		}
		u->map_index[m->id < u->prog->nmaps ? m->id : i] = sm->sym.id;
	}
	return 0;
}

static void print_timings(dt_session *s)
{
	fprintf(s->err, "timings: parse %.2f ms, check %.2f ms, codegen %.2f ms, load %.2f ms, "
		"attach %.2f ms, detach %.2f ms\n", s->t_parse / 1e6, s->t_check / 1e6,
		s->t_codegen / 1e6, s->t_load / 1e6, s->t_attach / 1e6, s->t_detach / 1e6);
}

/* The program watchpoint:FUNC+argN names: the -c command's file (as written), else what the
 * -p process runs. */
static const char *watch_binary(dt_session *s)
{
	char link[64], path[PATH_MAX];
	ssize_t n;

	if (s->child_path || s->watch_exe)
		return s->child_path ? s->child_path : s->watch_exe;
	if (s->o.child_cmd) /* a dry run: the command is not started */
		return s->watch_exe = dt_child_find_program(s->o.child_cmd);
	if (s->o.uprobe_pid <= 0)
		return NULL;
	snprintf(link, sizeof(link), "/proc/%d/exe", s->o.uprobe_pid);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return NULL;
	path[n] = 0;
	s->watch_exe = xstrdup(path);
	return s->watch_exe;
}

/* The unit's imported .bpf.c files, compiled by clang for codegen to link (env->bitcode: the
 * caller frees each data and the array). 0, or -EINVAL with a diagnostic at the import. */
static int compile_imported_c(dt_session *s, dt_unit *u, dt_cg_env *env, dt_diags *d)
{
	dt_cg_bitcode *bc = NULL;
	uint32_t n = 0;

	for (uint32_t i = 0; i < u->src.ncimports; i++) {
		const dt_source_cimport *c = &u->src.cimports[i];
		void *data;
		size_t len;

		if (c->kind != DT_CIMPORT_BPF_C)
			continue;
		if (dt_ctypes_bpf_bitcode(s->ctypes, c, d, &data, &len) < 0)
			break;
		bc = xrealloc(bc, sizeof(*bc) * (n + 1));
		bc[n++] = (dt_cg_bitcode){ .name = c->name, .at = c->at, .data = data, .len = len };
	}
	env->bitcode = bc;
	env->nbitcode = n;
	return dt_diags_error_count(d) ? -EINVAL : 0;
}

/* Which failed helpers the program reports (dt_cg_env.helper_check): in 0.17's language -k
 * map updates and deletes, -kk also lookups and reads; in the current language, as bpftrace
 * now, updates and deletes always (--no-warnings: none) and -k (or -kk) adds the rest. */
static uint32_t helper_check_of(const dt_session *s, const dt_program *p)
{
	if (!dt_program_current(p))
		return s->o.helper_check;
	return s->o.helper_check ? 2 : s->o.no_warnings ? 0 : 1;
}

int dt_session_add(dt_session *s, const dt_source *src, dt_unit **out)
{
	dt_unit *u = xcalloc(1, sizeof(*u));
	dt_config_value config[DT_CONFIG_VALUES];
	struct chk_ctx cc = { .x = { .pid = s->o.uprobe_pid, .child_path = s->child_path },
			      .s = s };
	dt_check_opts co = {
		.sz = sizeof(co), .existing_map = chk_existing, .ctx = &cc, .expand = dt_rt_expand,
		.usdt = dt_rt_usdt_locations,
		.params = s->o.params, .nparams = s->o.nparams, .strlen = s->o.strlen,
		.has_child = s->o.has_child, .unsafe = s->o.unsafe, .watch_binary = watch_binary(s),
		.ctype = dt_ctypes_lookup, .cdefs = dt_ctypes_cdefs,
		.uprobe_args = dt_ctypes_uprobe_args, .kernel_args = dt_ctypes_kernel_args,
		.ctype_ctx = s->ctypes, .constant = dt_ctypes_constant, .stack_mode = s->o.stack_mode,
		.extern_fn = dt_ctypes_extern,
		.mode = s->o.mode,
		.usym_addr = dt_rt_usym_addr, .uprobe_line = dt_rt_uprobe_line,
		.named = s->o.named, .nnamed = s->o.nnamed, .config = config,
		.probe_filter = s->o.probe_filter, .dummy_ts_map = s->o.dummy_ts_map,
		.unstable_tseries = s->o.unstable_tseries,
	};
	co.nconfig = dt_config_values(&s->o, config);
	struct cg_ctx gc = { .s = s, .u = u };
	struct own_pidns pidns = own_pidns();
	dt_cg_env env = {
		.sz = sizeof(env), .ctx = &gc, .map_fd = cg_map_fd, .aux_fd = cg_aux_fd,
		.cont_slot = cg_cont_slot, .chain_slot = cg_chain_slot, .start_ns = s->start_ns,
		.wall_offset_ns = s->wall_offset_ns,
		.filter_pid = s->o.filter_pid, .filter_cgroup = s->child_cgroup_id,
		.cpid = s->child > 0 ? (uint32_t)s->child : 0,
		.pidns_dev = pidns.dev, .pidns_ino = pidns.ino,
		.ncpus = (uint32_t)DT_MAX(libbpf_num_possible_cpus(), 1),
		.want_ir = s->o.dump & DT_DUMP_IR, .want_asm = s->o.dump & DT_DUMP_ASM,
		.helper_check = s->o.helper_check, .helper_allowed = cg_helper_allowed,
		.kfunc_id = cg_kfunc_id,
	};
	dt_cg_result *cg = NULL;
	dt_cg_resources res = { 0 };
	size_t maps0 = s->maps.n;
	bool color = isatty(fileno(s->err));
	dt_diags *d;
	uint64_t t;
	int rc, attach_rc;

	if (out)
		*out = NULL;
	u->s = s;
	/* Its id from the start, which codegen writes into what the programs send (skboutput's
	 * header); taken for good once the unit joins the session. */
	u->id = s->next_unit_id;
	env.unit = u->id;
	u->events_fd = u->names_fd = u->syscall_fd = u->iter_link = -1;
	u->name = xstrdup(src->name ? src->name : DT_SOURCE_STDIN);
	u->text = xstrndup(src->text ? src->text : "", src->len);
	u->src = (dt_source){ .name = u->name, .text = u->text, .len = src->len,
			      .hidden = src->hidden, .params = s->o.params,
			      .nparams = s->o.nparams };
	u->arena = dt_arena_new();
	d = dt_diags_new(&u->src);

	if (s->o.dump & DT_DUMP_TOKENS) {
		dt_dump_tokens(&u->src, s->o.out);
		dt_out_flush(s->out);
	}
	t = dt_now_ns();
	dt_source_imports(&u->src, u->arena, d);
	u->prog = dt_parse(u->arena, &u->src, d);
	s->t_parse += dt_now_ns() - t;
	if (dt_diags_error_count(d)) {
		rc = -EINVAL;
		goto diags;
	}
	t = dt_now_ns();
	rc = dt_check(u->prog, u->arena, d, &co);
	s->t_check += dt_now_ns() - t;
	if (s->o.dump & DT_DUMP_AST) {
		dt_dump_ast(u->prog, s->o.out);
		dt_out_flush(s->out);
	}
	if (rc < 0 || dt_diags_error_count(d)) {
		rc = -EINVAL;
		goto diags;
	}
	dt_out_set_current(s->out, dt_program_current(u->prog));
	env.helper_check = helper_check_of(s, u->prog);
	if (s->o.dump & DT_DUMP_TYPES) {
		dt_dump_types(u->prog, s->o.out);
		dt_out_flush(s->out);
	}
	/* A dry run that dumps front-end stages only has nothing left to do: what the script says
	 * is shown, nothing of the machine is looked up or loaded, so it needs no privileges (the
	 * unit is undone as on a failure, with rc 0). */
	if (s->o.dry_run && s->o.dump && !(s->o.dump & ~DT_DUMP_FRONT_END)) {
		print_diags(s, d, color);
		dt_session_output_failed(s);
		rc = 0;
		goto fail;
	}

	/* Privileges first: without them, looking attach points up (tracefs) fails in ways that
	 * would read as a wrong probe. */
	rc = check_privileges(s);
	if (rc < 0)
		goto fail;
	if (validate_attach_points(s, u, d, s->o.dry_run ? VALIDATE_BUT_MACHINE : VALIDATE_ALL) < 0) {
		rc = -EINVAL;
		goto diags;
	}
	/* What the code will need, and whether each probe fits the kernel's limits (in parts if
	 * need be): the program's last errors, reported before any kernel object exists. */
	rc = dt_cg_resources_of(u->prog, &res, d);
	if (rc < 0)
		goto diags;
	if (env.helper_check)
		res.events = true; /* -k reports come through the events ring */
	/* Warnings (and notes) of a program that checks out. */
	print_diags(s, d, color);
	if (s->o.max_probes) {
		uint32_t n = 0;

		for (uint32_t i = 0; i < u->nattach; i++)
			n += !u->skip[i];
		if (n > s->o.max_probes) {
			fprintf(s->err, "dwarftrace: %u probes would attach, over BPFTRACE_MAX_PROBES "
				"(%u); raise it if the system can take that many\n", n,
				s->o.max_probes);
			rc = -E2BIG;
			goto fail;
		}
	}

	if ((s->o.count_hits || s->o.verbose) && s->stats_enable_fd < 0)
		s->stats_enable_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	rc = create_unit_maps(s, u);
	if (rc < 0)
		goto fail;
	t = dt_now_ns();
	rc = prepare_resources(s, u, &res);
	s->t_load += dt_now_ns() - t;
	if (rc < 0)
		goto fail;
	t = dt_now_ns();
	rc = compile_imported_c(s, u, &env, d);
	if (!rc)
		rc = dt_codegen(u->prog, &env, &cg, d);
	for (uint32_t i = 0; i < env.nbitcode; i++)
		free((void *)env.bitcode[i].data);
	free((void *)env.bitcode);
	s->t_codegen += dt_now_ns() - t;
	if (rc < 0) {
		if (dt_diags_error_count(d))
			goto diags;
		goto fail;
	}
	if (cg->ir)
		fprintf(s->o.out, "%s\n", cg->ir);
	if (cg->asm_text)
		fprintf(s->o.out, "%s\n", cg->asm_text);
	dt_out_flush(s->out);
	t = dt_now_ns();
	rc = load_unit(s, u, cg);
	s->t_load += dt_now_ns() - t;
	if (rc < 0)
		goto fail;
	if (s->o.dry_run) {
		fprintf(s->o.out, "dry run: %zu program%s loaded\n", u->prog_fds.n,
			u->prog_fds.n == 1 ? "" : "s");
		/* A dry run never reaches dt_session_finish: -v's stage timings are printed here,
		 * so that compile time can be measured without attaching. */
		if (s->o.verbose)
			print_timings(s);
		/* What the real run could not attach on this machine is an error, as it
		 * would be there. */
		dt_diags *md = dt_diags_new(&u->src);

		rc = validate_attach_points(s, u, md, VALIDATE_MACHINE) < 0 ? -EOPNOTSUPP : 0;
		print_diags(s, md, color);
		dt_diags_free(md);
		if (rc < 0)
			goto fail;
	} else {
		rc = attach_unit(s, u, cg);
		if (rc < 0 && !s->o.end_on_attach_error)
			goto fail;
	}
	attach_rc = rc;
	s->next_unit_id++;
	DT_VEC_PUSH(&s->units, u);
	rc = dt_loop_add_unit(s, u);
	if (rc < 0) {
		fprintf(s->err, "dwarftrace: cannot read the event ring buffer: %s\n", dt_strerror(-rc));
		s->units.n--;
		goto fail;
	}
	dt_cg_result_free(cg);
	dt_cg_resources_fini(&res);
	dt_diags_free(d);
	if (attach_rc < 0) {
		/* Kept with what it attached, for dt_session_finish: END, maps, then detach. */
		if (out)
			*out = u;
		return attach_rc;
	}
	if (!s->o.dry_run) {
		/* An iterator runs once, to its end, and so does the run, as in bpftrace. */
		if (u->iter_link >= 0) {
			char *err = NULL;

			if (dt_rt_iter_run(u->iter_link, &err) < 0) {
				fprintf(s->err, "dwarftrace: %s\n", err);
				free(err);
			}
			if (!s->stop_reason)
				s->stop_reason = "iter";
		}
	}
	if (out)
		*out = u;
	return 0;
diags:
	print_diags(s, d, color);
fail:
	if (cg)
		dt_cg_result_free(cg);
	dt_cg_resources_fini(&res);
	dt_diags_free(d);
	unit_free(u);
	drop_maps_from(s, maps0);
	return rc;
}

bool dt_unit_current(const dt_unit *u)
{
	return dt_program_current(u->prog);
}

bool dt_unit_begin_end_only(const dt_unit *u)
{
	const dt_program *p = u->prog;

	for (uint32_t i = 0; i < p->nprobes; i++)
		for (uint32_t j = 0; j < p->probes[i]->nattach; j++) {
			const dt_attach *a = p->probes[i]->attach[j];

			if (a->provider != DT_P_BEGIN && a->provider != DT_P_END)
				return false;
		}
	/* 0.17's BEGIN/END alone run until Ctrl-C, as they did there: old scripts unchanged. */
	return dt_program_current(p);
}

int dt_session_detach(dt_session *s, dt_unit *u)
{
	size_t i;

	for (i = 0; i < s->units.n && s->units.v[i] != u; i++)
		;
	if (i == s->units.n)
		return -ENOENT;
	/* Events already in its ring buffer are delivered first; the ring itself stays with the
	 * loop's manager (libbpf cannot remove one) and its callback finds no unit afterwards. */
	close_attached(&u->attached);
	dt_loop_drain(s);
	memmove(&s->units.v[i], &s->units.v[i + 1], (s->units.n - i - 1) * sizeof(*s->units.v));
	s->units.n--;
	unit_free(u);
	return 0;
}

/* ---------------------------------------------------------------- -p and -c */

/* child.c does the work; the loop is told of the pidfds at once, so that a caller already
 * waiting on dt_session_poll_fd sees the exit. */
int dt_session_watch_pid(dt_session *s, int pid)
{
	int rc = dt_pid_watch(s, pid);

	return rc < 0 ? rc : dt_loop_sync(s);
}

int dt_session_spawn_child(dt_session *s, const char *cmd, int *pid)
{
	int rc = dt_child_spawn(s, cmd);

	if (rc < 0)
		return rc;
	if (pid)
		*pid = s->child;
	return dt_loop_sync(s);
}

int dt_session_start_child(dt_session *s)
{
	/* The unwinder holds the command's processes, itself included, while it reads them (and
	 * they are noted for symbols then): the entry stop would only come second. */
	bool held = s->uw && s->child_cgroup_id;

	return dt_child_release(s, !held && (s->uw || dt_session_has_user_addrs(s)));
}

/* ---------------------------------------------------------------- the end */

/* Each loss counter's -v name and exit sentence, by slot (bpf-lib/dt_abi.h's DT_STATS). */
static const struct {
	const char *name, *what;
} stat_text[DT_STAT__COUNT] = {
#define STAT_TEXT(id, slot, name, what) [DT_STAT_##id] = { name, what },
	DT_STATS(STAT_TEXT)
#undef STAT_TEXT
};

static void report_stats(dt_session *s)
{
	uint64_t *vals, totals[DT_STAT__COUNT] = { 0 };

	if (!s->stats_used)
		return;
	vals = xcalloc((size_t)s->ncpus, sizeof(*vals));
	for (uint32_t k = 0; k < DT_STAT__COUNT; k++) {
		if (bpf_map_lookup_elem(s->stats_fd, &k, vals) < 0)
			continue;
		for (int c = 0; c < s->ncpus; c++)
			totals[k] += vals[c];
		if (totals[k])
			fprintf(s->err, "dwarftrace: %llu %s\n", (unsigned long long)totals[k],
				stat_text[k].what ? stat_text[k].what
						  : "events counted by an unnamed loss counter");
	}
	free(vals);
	if (!s->o.verbose)
		return;
	fprintf(s->err, "loss counters:");
	for (uint32_t k = 0; k < DT_STAT__COUNT; k++) {
		if (stat_text[k].name)
			fprintf(s->err, " %s=%llu", stat_text[k].name, (unsigned long long)totals[k]);
		else if (totals[k])
			fprintf(s->err, " stat%u=%llu", k, (unsigned long long)totals[k]);
	}
	fputc('\n', s->err);
}

static void report_verbose(dt_session *s)
{
	uint64_t mem = 0;

	for (size_t i = 0; i < s->maps.n; i++) {
		const dt_map_layout *l = &s->maps.v[i]->layout;
		uint64_t v = l->percpu ? DT_ALIGN(l->value_size, 8) * (uint64_t)s->ncpus
				       : l->value_size;

		mem += (uint64_t)l->max_entries * (l->key_size + v);
	}
	for (size_t i = 0; i < s->stackmaps.n; i++)
		mem += (uint64_t)STACK_MAP_ENTRIES * s->stackmaps.v[i].depth * 8;
	for (size_t i = 0; i < s->units.n; i++) {
		uint64_t hits;

		if (s->units.v[i]->events_fd >= 0)
			mem += dt_session_events_size(s);
		if (dt_unit_hits(s->units.v[i], &hits) == 0)
			fprintf(s->err, "unit %u: programs ran %llu times\n", s->units.v[i]->id,
				(unsigned long long)hits);
	}
	fprintf(s->err, "maps: %zu script maps, %zu stack maps, at most %.1f MiB\n", s->maps.n,
		s->stackmaps.n, (double)mem / (1 << 20));
	if (s->uw)
		dt_unwinder_print_stats(s->uw, s->err);
	if (s->sym)
		dt_sym_print_stats(s->sym, s->err);
	print_timings(s);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Keeps the perf events of unit `unit` and those after it attached in a helper process
 * that releases them after dwarftrace has exited, and closes our copies, which is then quick:
 * the kernel tears an event down when its last reference goes. Exiting with them open would not
 * help — a process's files are released before it counts as exited, so its parent would wait
 * just as long. The helper holds nothing else (stdio on /dev/null, so nobody reading our output
 * waits for it either), waits for EOF on a pipe whose other end only we hold, i.e. for our exit,
 * and exits; the kernel reclaims everything with it. If it cannot be made, we close them here. */
static void hand_off_detach(dt_session *s, size_t unit)
{
	DT_VEC(int) keep = { 0 };
	int p[2], null, prev = -1;
	pid_t pid;
	char c;

	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || pipe2(p, O_CLOEXEC) < 0) {
		if (null >= 0)
			close(null);
		return;
	}
	/* The fds to keep, sorted, made before fork: the child only makes system calls. */
	DT_VEC_PUSH(&keep, p[0]);
	DT_VEC_PUSH(&keep, null);
	for (size_t i = unit; i < s->units.n; i++)
		for (size_t j = 0; j < s->units.v[i]->attached.n; j++)
			DT_VEC_PUSH(&keep, s->units.v[i]->attached.v[j]);
	qsort(keep.v, keep.n, sizeof(int), cmp_int);
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 3; i++)
			dup2(null, i);
		for (size_t i = 0; i < keep.n; i++) {
			if (keep.v[i] > prev + 1 && keep.v[i] > 3)
				syscall(SYS_close_range, (unsigned)DT_MAX(prev + 1, 3),
					(unsigned)keep.v[i] - 1, 0);
			prev = keep.v[i];
		}
		syscall(SYS_close_range, (unsigned)DT_MAX(prev + 1, 3), ~0u, 0);
		setsid();
		while (read(p[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(p[0]);
	close(null);
	free(keep.v);
	if (pid < 0) {
		close(p[1]);
		return;
	}
	/* Held until our exit (close-on-exec: no command inherits it). */
	s->detach_helper_fd = p[1];
}

/* Probes are detached a batch at a time (dt_rt_detach closes one from several threads), so that
 * a stop signal between two batches is acted on within a fraction of a second (~0.7 s for 32
 * tracepoint perf events, ~0.5 s for 32 uprobes: larger batches detach uprobes faster but answer
 * later). */
#define DETACH_BATCH 32

/* The last step of the end: every probe detached. A stop signal that comes meanwhile (a second
 * Ctrl-C: thousands of perf events take a while) stops the waiting — END and the maps are out by
 * then — and what is left is handed to a helper that detaches it in the background. */
static void detach_all(dt_session *s)
{
	uint64_t t = dt_now_ns();
	bool handed = false;

	for (size_t i = 0; i < s->units.n; i++) {
		dt_fdvec *v = &s->units.v[i]->attached;

		while (v->n && !handed) {
			dt_loop_poll_signals(s); /* sets s->hurry on a stop signal */
			if (s->hurry) {
				hand_off_detach(s, i);
				handed = true;
			} else {
				dt_rt_detach(v, v->n > DETACH_BATCH ? v->n - DETACH_BATCH : 0);
			}
		}
		/* What is left once handed off: copies the helper also holds, quick to close. */
		close_attached(v);
	}
	s->t_detach = dt_now_ns() - t;
}

int dt_session_finish(dt_session *s)
{
	if (s->finished)
		return 0;
	s->finished = true;
	/* Processes that are still alive are read before the maps print, while they can be. */
	if (dt_session_has_user_addrs(s))
		dt_session_note_pids(s);
	/* After exit(), what the probes queued behind it goes unprinted (bpftrace's way); END's
	 * own output, next, prints. */
	if (s->muted) {
		dt_loop_drain_final(s);
		s->muted = false;
		s->end_only = true;
	}
	/* END and every map come first, with the probes still attached: detaching is the slow
	 * part (each perf event waits for the kernel), and nothing must wait for it. */
	if (!s->o.dry_run) {
		for (size_t i = 0; i < s->units.n; i++) {
			dt_unit *u = s->units.v[i];

			for (size_t j = 0; j < u->end_fds.n; j++) {
				char *err = NULL;

				if (dt_rt_run_once(u->end_fds.v[j], u->end_types.v[j], &err) < 0) {
					fprintf(s->err, "dwarftrace: END: %s\n", err);
					free(err);
				}
			}
		}
	}
	/* What the probes still write while this drains comes after what was there: bounded. */
	dt_loop_drain_final(s);
	dt_out_flush(s->out);
	if (!s->o.dry_run) {
		dt_out_maps_start(s->out);
		if (!s->o.no_print_maps)
			dt_session_print_maps(s);
		write_profiles(s);
	}
	dt_out_flush(s->out);
	dt_session_output_failed(s);
	report_stats(s);
	dt_xprobe_report(s);
	dt_skb_consume(s); /* packets of the last moments, before their files are reported on */
	dt_skb_report(s);
	if (s->uw && !s->o.verbose)
		dt_unwinder_warn_losses(s->uw, s->err); /* -v prints every counter instead */
	fflush(s->err);
	detach_all(s);
	if (s->o.verbose)
		report_verbose(s);
	return 0;
}

/* ---------------------------------------------------------------- self, test and bench probes */

bool dt_session_signal_probes(dt_session *s)
{
	bool any = false;

	for (size_t i = 0; i < s->units.n; i++) {
		const dt_unit *u = s->units.v[i];

		for (size_t j = 0; j < u->signal_fds.n; j++) {
			char *err = NULL;

			any = true;
			if (dt_rt_run_once(u->signal_fds.v[j], BPF_PROG_TYPE_RAW_TRACEPOINT, &err) < 0) {
				fprintf(s->err, "dwarftrace: self:signal:SIGUSR1: %s\n", err);
				free(err);
			}
		}
	}
	return any;
}

/* One timed test run of an XDP program repeated `repeat` times: the kernel's average ns per run
 * in *ns and the program's return value in *retval. */
static int test_run(int fd, uint32_t repeat, uint64_t *ns, uint32_t *retval)
{
	unsigned char pkt[64] = { 0 }; /* an Ethernet header at least, or the kernel refuses */
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt, .data_size_in = sizeof(pkt),
		    .repeat = repeat);

	if (bpf_prog_test_run_opts(fd, &opts) < 0)
		return -errno;
	*ns = opts.duration;
	*retval = opts.retval;
	return 0;
}

/* Runs program i of the unit with its output going to a buffer (*text, malloc'd) rather than
 * the session's output. An exit() in it sets *exit_code and is forgotten afterwards, as
 * bpftrace resets it for the next test. */
static int run_captured(dt_session *s, dt_unit *u, size_t i, uint32_t repeat, uint64_t *ns,
			uint32_t *retval, int *exit_code, char **text)
{
	size_t len = 0;
	FILE *f = open_memstream(text, &len);
	dt_out_opts oo = s->out_opts;
	dt_out *saved = s->out;
	int rc;

	if (!f)
		return -errno;
	oo.file = f;
	oo.notice = f;
	s->out = dt_out_new(&oo);
	s->exit_code = 0;
	rc = test_run(u->test_fds.v[i], repeat, ns, retval);
	dt_loop_drain(s);
	dt_out_flush(s->out);
	dt_out_free(s->out);
	s->out = saved;
	fclose(f);
	*exit_code = s->exit_code;
	s->exit_code = 0;
	s->stop_reason = NULL;
	s->muted = false;
	return rc;
}

static void print_duration(FILE *f, uint64_t ns)
{
	if (ns >= 1000000000ull)
		fprintf(f, "%" PRIu64 " s", ns / UINT64_C(1000000000));
	else if (ns >= 1000000ull)
		fprintf(f, "%" PRIu64 " ms", ns / UINT64_C(1000000));
	else if (ns >= 1000ull)
		fprintf(f, "%" PRIu64 " us", ns / UINT64_C(1000));
	else
		fprintf(f, "%" PRIu64 " ns", ns);
}

static void json_string(FILE *f, const char *t)
{
	fputc('"', f);
	for (; *t; t++) {
		unsigned char ch = (unsigned char)*t;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/* bpftrace's report of one test: RUN, the output when it failed, OK or FAILED with the time. */
static void report_test(dt_session *s, const char *name, bool passed, uint64_t ns,
			const char *text)
{
	FILE *f = s->o.out;
	bool color = isatty(fileno(f));
	const char *green = color ? "\033[32m" : "", *red = color ? "\033[31m" : "",
		   *off = color ? "\033[0m" : "";

	if (s->o.format == DT_FORMAT_JSON) {
		fputs("{\"type\": \"test_result\", \"data\": {", f);
		json_string(f, name);
		fprintf(f, ": {\"duration\": %" PRIu64 ", \"passed\": %s, \"output\": ", ns,
			passed ? "true" : "false");
		json_string(f, text);
		fputs("}}}\n", f);
		return;
	}
	fprintf(f, "%s[ RUN      ]%s %s\n", green, off, name);
	if (!passed) {
		for (const char *l = text; *l;) {
			size_t n = strcspn(l, "\n");

			if (n)
				fprintf(f, "%.*s\n", (int)n, l);
			l += n + (l[n] == '\n');
		}
	}
	fprintf(f, "%s %s (", passed ? "[       OK ]" : "[  FAILED  ]", name);
	print_duration(f, ns);
	fputs(")\n", f);
	(void)red;
}

static int run_tests(dt_session *s, dt_unit *u)
{
	FILE *f = s->o.out;
	bool color = isatty(fileno(f)) && s->o.format != DT_FORMAT_JSON;
	const char *green = color ? "\033[32m" : "", *red = color ? "\033[31m" : "",
		   *off = color ? "\033[0m" : "";
	bool *passed = xcalloc(u->test_fds.n + 1, sizeof(bool));
	size_t npassed = 0;
	int rc = 0;

	for (size_t i = 0; i < u->test_fds.n && rc >= 0; i++) {
		uint64_t ns = 0;
		uint32_t ret = 0;
		int code = 0;
		char *text = NULL;

		rc = run_captured(s, u, i, 1, &ns, &ret, &code, &text);
		if (rc < 0) {
			fprintf(s->err, "dwarftrace: test:%s cannot run: %s\n", u->test_names.v[i],
				dt_strerror(-rc));
		} else {
			passed[i] = ret == 0 && code == 0;
			npassed += passed[i];
			report_test(s, u->test_names.v[i], passed[i], ns, text ? text : "");
		}
		free(text);
	}
	if (rc >= 0 && s->o.format != DT_FORMAT_JSON) {
		size_t n = u->test_fds.n, nfailed = n - npassed;

		fprintf(f, "%s[==========]%s %zu test%s ran.\n", green, off, n, n == 1 ? "" : "s");
		fprintf(f, "%s[  PASSED  ]%s %zu test%s.\n", green, off, npassed,
			npassed == 1 ? "" : "s");
		if (nfailed) {
			fprintf(f, "%s[  FAILED  ]%s %zu test%s, listed below:\n", red, off, nfailed,
				nfailed == 1 ? "" : "s");
			for (size_t i = 0; i < n; i++)
				if (!passed[i])
					fprintf(f, "%s[  FAILED  ]%s %s\n", red, off,
						u->test_names.v[i]);
		}
	}
	fflush(f);
	rc = rc < 0 ? rc : npassed == u->test_fds.n ? 0 : 1;
	free(passed);
	return rc;
}

static int run_benches(dt_session *s, dt_unit *u)
{
	FILE *f = s->o.out;
	size_t width = 40; /* bpftrace's table: the names' column at least 40 wide */
	int rc = 0, failed = 0;
	bool header = false;

	for (size_t i = 0; i < u->test_names.n; i++)
		width = DT_MAX(width, strlen(u->test_names.v[i]));
	for (size_t i = 0; i < u->test_fds.n && rc >= 0; i++) {
		uint64_t ns = 0;
		uint32_t ret = 0, iters = 1;
		int code = 0;

		/* Repeat until a run takes 1 ms in all, as bpftrace: the average is then the
		 * kernel's over enough runs to mean something. */
		for (;;) {
			char *text = NULL;
			uint64_t total;

			rc = run_captured(s, u, i, iters, &ns, &ret, &code, &text);
			free(text); /* a benchmark's output is dropped */
			if (rc < 0 || (code == 0 && ret != 0)) /* returning non-zero skips it */
				break;
			total = ns * iters;
			if (iters >= (1u << 30) || total >= 1000000)
				break;
			iters *= total < 1000 ? 1000 : total < 10000 ? 100 : total < 100000 ? 10 : 2;
		}
		if (rc < 0) {
			fprintf(s->err, "dwarftrace: bench:%s cannot run: %s\n", u->test_names.v[i],
				dt_strerror(-rc));
			break;
		}
		if (code != 0) {
			fprintf(s->err, "dwarftrace: ERROR: Benchmark '%s' failed.\n",
				u->test_names.v[i]);
			failed = 1;
			continue;
		}
		if (ret != 0)
			continue;
		if (s->o.format == DT_FORMAT_JSON) {
			fputs("{\"type\": \"benchmark_result\", \"data\": {", f);
			json_string(f, u->test_names.v[i]);
			fprintf(f, ": {\"average\": %" PRIu64 ", \"iters\": %u}}}\n", ns, iters);
			continue;
		}
		if (!header) {
			header = true;
			fprintf(f, "%-*s%-15s%s\n", (int)width + 1, "Benchmark", "Time(ns)",
				"Iterations");
			for (size_t k = 0; k < width + 1 + 15 + strlen("Iterations"); k++)
				fputc('-', f);
			fputc('\n', f);
		}
		fprintf(f, "%-*s%-15" PRIu64 "%u\n", (int)width + 1, u->test_names.v[i], ns, iters);
	}
	fflush(f);
	return rc < 0 ? rc : failed;
}

int dt_session_run_tests(dt_session *s, dt_unit *u)
{
	/* What BEGIN printed comes first. */
	dt_loop_drain(s);
	dt_out_flush(s->out);
	return s->o.mode == DT_MODE_TEST ? run_tests(s, u) : run_benches(s, u);
}
