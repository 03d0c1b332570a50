/* session_maps.c — what userspace does to a session's script maps while it traces: the map
 * commands probes send through their ring buffer (clear, zero, delete of one key's hist buckets),
 * and noting the processes behind user addresses in keys and values — stacks and symbols — so
 * that they still resolve after those processes exit; the printing of every map (at the end, and
 * on SIGUSR1 while tracing goes on); and the listing of maps for the REPL. The event loop
 * (loop.c) and the session (session.c) both call in; nothing here calls either. */
#include "runtime/session_internal.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- printing */

static int cmp_smap_name(const void *a, const void *b)
{
	return strcmp((*(dt_smap *const *)a)->sym.name, (*(dt_smap *const *)b)->sym.name);
}

void dt_session_print_maps(dt_session *s)
{
	dt_smap **sorted = xcalloc(s->maps.n + 1, sizeof(*sorted));

	memcpy(sorted, s->maps.v, s->maps.n * sizeof(*sorted));
	qsort(sorted, s->maps.n, sizeof(*sorted), cmp_smap_name);
	for (size_t i = 0; i < s->maps.n; i++) {
		int rc = dt_out_print_map(s->out, &sorted[i]->sym, sorted[i]->fd, 0, 0, false);

		if (rc < 0)
			fprintf(s->err, "dwarftrace: cannot read map %s: %s\n", sorted[i]->sym.name,
				dt_strerror(-rc));
	}
	free(sorted);
	dt_out_flush(s->out);
}

/* ---------------------------------------------------------------- map commands */

/* Keys of a map, read before changing it: deleting while walking restarts the walk. */
static int map_keys(int fd, uint32_t key_size, unsigned char **keys, size_t *n)
{
	unsigned char *cur = xcalloc(1, key_size), *v = NULL;
	size_t cnt = 0, cap = 0;
	const void *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, cur) == 0) {
		if (cnt == cap) {
			cap = cap ? cap * 2 : 64;
			v = xrealloc(v, cap * key_size);
		}
		memcpy(v + cnt * key_size, cur, key_size);
		prev = v + cnt * key_size;
		cnt++;
	}
	free(cur);
	*keys = v;
	*n = cnt;
	return 0;
}

int dt_map_clear(dt_session *s, dt_smap *m)
{
	unsigned char *keys;
	size_t n;

	if (m->layout.zero_not_delete)
		return dt_map_zero(s, m);
	map_keys(m->fd, m->layout.key_size, &keys, &n);
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(m->fd, keys + i * m->layout.key_size);
	free(keys);
	return 0;
}

int dt_map_zero(dt_session *s, dt_smap *m)
{
	size_t vsz = m->layout.percpu ? DT_ALIGN(m->layout.value_size, 8) * (size_t)s->ncpus
				      : m->layout.value_size;
	unsigned char *keys, *zero = xcalloc(1, vsz);
	size_t n;
	int rc = 0;

	map_keys(m->fd, m->layout.key_size, &keys, &n);
	for (size_t i = 0; i < n; i++)
		if (bpf_map_update_elem(m->fd, keys + i * m->layout.key_size, zero,
					BPF_EXIST) < 0 && errno != ENOENT)
			rc = -errno;
	free(keys);
	free(zero);
	return rc;
}

int dt_map_delete_prefix(dt_session *s, dt_smap *m, const void *key, size_t len)
{
	unsigned char *keys;
	size_t n, cmp = DT_MIN(len, m->layout.user_key_size);

	map_keys(m->fd, m->layout.key_size, &keys, &n);
	for (size_t i = 0; i < n; i++)
		if (!memcmp(keys + i * m->layout.key_size, key, cmp))
			bpf_map_delete_elem(m->fd, keys + i * m->layout.key_size);
	free(keys);
	return 0;
}

/* ---------------------------------------------------------------- listing (the REPL's .maps) */

const char *dt_session_map(dt_session *s, uint32_t i, const dt_type **key, const dt_type **value)
{
	if (i >= s->maps.n)
		return NULL;
	if (key)
		*key = s->maps.v[i]->sym.key;
	if (value)
		*value = s->maps.v[i]->sym.value;
	return s->maps.v[i]->sym.name;
}

int dt_session_map_entries(dt_session *s, uint32_t i, uint64_t *n)
{
	unsigned char *keys;
	size_t cnt;

	if (i >= s->maps.n)
		return -ENOENT;
	map_keys(s->maps.v[i]->fd, s->maps.v[i]->layout.key_size, &keys, &cnt);
	free(keys);
	*n = cnt;
	return 0;
}

/* ---------------------------------------------------------------- pids behind user addresses */

/* Does a value of this type carry a pid whose address space names its addresses? */
static bool type_has_upid(const dt_type *t)
{
	if (!t)
		return false;
	if (t->kind == DT_T_USYM || (t->kind == DT_T_STACK && t->stack.kind != DT_STACK_KERNEL))
		return true;
	if (t->kind == DT_T_TUPLE)
		for (uint32_t i = 0; i < t->tuple.n; i++)
			if (type_has_upid(t->tuple.elems[i]))
				return true;
	return false;
}

static void note_type_pids(dt_session *s, const dt_type *t, const unsigned char *p)
{
	uint32_t pid = 0, flags = 0;

	if (t->kind == DT_T_TUPLE) {
		for (uint32_t i = 0; i < t->tuple.n; i++)
			note_type_pids(s, t->tuple.elems[i], p + t->tuple.offsets[i]);
		return;
	}
	if (!type_has_upid(t))
		return;
	/* struct dt_stack_ref and struct dt_usym keep the pid and the generation at the same
	 * offsets (dt_abi.h). */
	memcpy(&pid, p + offsetof(struct dt_stack_ref, pid), sizeof(pid));
	memcpy(&flags, p + offsetof(struct dt_stack_ref, flags), sizeof(flags));
	if (pid) {
		dt_sym_note_pid(s->sym, pid);
		dt_sym_hold(s->sym, pid, DT_GEN_OF(flags));
	}
}

bool dt_session_has_user_addrs(dt_session *s)
{
	for (size_t i = 0; i < s->maps.n; i++)
		if (type_has_upid(s->maps.v[i]->sym.key) || type_has_upid(s->maps.v[i]->sym.value))
			return true;
	return false;
}

void dt_session_note_pids(dt_session *s)
{
	/* Reading every user address the maps hold is also a census of what the symbolizer must
	 * keep: snapshots of processes that have exited and that no map refers to any more are
	 * released, so that memory does not grow with every process that ever ran. Per-CPU values
	 * are not read here: if one could hold a user address, nothing is released. */
	bool complete = true;

	dt_sym_census_begin(s->sym);
	for (size_t i = 0; i < s->maps.n; i++) {
		dt_smap *m = s->maps.v[i];
		bool k = type_has_upid(m->sym.key);
		bool v = !m->layout.percpu && type_has_upid(m->sym.value);
		unsigned char *keys, *val;
		size_t n;

		if (m->layout.percpu && type_has_upid(m->sym.value))
			complete = false;
		if (!k && !v)
			continue;
		map_keys(m->fd, m->layout.key_size, &keys, &n);
		val = xcalloc(1, m->layout.value_size);
		for (size_t j = 0; j < n; j++) {
			const unsigned char *key = keys + j * m->layout.key_size;

			if (k)
				note_type_pids(s, m->sym.key, key);
			if (v && bpf_map_lookup_elem(m->fd, key, val) == 0)
				note_type_pids(s, m->sym.value, val);
		}
		free(val);
		free(keys);
	}
	if (s->child > 0 && !s->child_exited)
		dt_sym_note_pid(s->sym, (uint32_t)s->child);
	if (s->o.filter_pid)
		dt_sym_note_pid(s->sym, s->o.filter_pid);
	dt_sym_census_end(s->sym, complete);
}
