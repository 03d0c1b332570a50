/* maps.c — script maps as output reads them: a whole BPF map walked into flat key and value
 * arrays (values per possible CPU for per-CPU maps), and the facts about a value's layout that
 * both map printing (output.c) and profile writing (profile.c) need: how per-CPU copies of a
 * count/sum/int/min/max combine and how many buckets a hist/lhist holds. */
#include "output/output_internal.h"
#include "common/common.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint32_t dt_out_nbuckets(const dt_type *t)
{
	if (t->kind == DT_T_LHIST) {
		uint32_t n = dt_lhist_nbuckets(t->lhist.min, t->lhist.max, t->lhist.step);
		return n >= 2 ? n : 2;
	}
	return dt_hist_nbuckets(t->hist.bits);
}

int64_t dt_out_plain_value(const dt_type *t, const uint8_t *val, size_t ncpu, size_t stride)
{
	int64_t v = 0;
	bool any = false;
	for (size_t c = 0; c < ncpu; c++) {
		const uint8_t *p = val + c * stride;
		switch (t->kind) {
		case DT_T_COUNT:
		case DT_T_SUM: {
			int64_t x;
			memcpy(&x, p, 8);
			v = (int64_t)((uint64_t)v + (uint64_t)x);
			break;
		}
		case DT_T_MIN:
		case DT_T_MAX: {
			struct dt_agg_minmax mm;
			memcpy(&mm, p, sizeof(mm));
			if (!mm.set)
				break;
			if (!any || (t->kind == DT_T_MIN ? mm.value < v : mm.value > v))
				v = mm.value;
			any = true;
			break;
		}
		case DT_T_INT: case DT_T_PTR:
			return dt_fmt_read_int(p, t->size, t->is_signed);
		default:
			return 0;
		}
	}
	return v;
}

int dt_out_read_map(dt_out *o, const dt_map_sym *m, int map_fd, dt_map_layout *l, void **keys_out,
		    void **vals_out, size_t *n_out, int *ncpus_out)
{
	DT_VEC(uint8_t) keys = {0}, vals = {0};
	size_t n = 0;
	int err = 0;

	*keys_out = *vals_out = NULL;
	*n_out = 0;
	dt_map_layout_of(m, l);
	if (!l->key_size || !l->value_size)
		return -EINVAL;
	/* The kernel writes one value per possible CPU whatever we were told: size the buffers
	 * and combine by its count, or a wrong ncpus would overflow them. */
	int ncpus = o->ncpus, possible = libbpf_num_possible_cpus();
	if (l->percpu && possible > 0)
		ncpus = possible;
	size_t vsize = l->percpu ? DT_ALIGN(l->value_size, 8) * (size_t)ncpus : l->value_size;
	uint8_t *prev = NULL;
	uint8_t *next = xmalloc(l->key_size), *prevbuf = xmalloc(l->key_size);

	for (;;) {
		if (bpf_map_get_next_key(map_fd, prev, next)) {
			if (errno != ENOENT)
				err = -errno;
			break;
		}
		memcpy(prevbuf, next, l->key_size);
		prev = prevbuf;
		/* Make room for one more entry, then look it up in place. */
		while (keys.cap < (n + 1) * l->key_size) {
			keys.cap = keys.cap ? keys.cap * 2 : 64 * l->key_size;
			keys.v = xrealloc(keys.v, keys.cap);
		}
		while (vals.cap < (n + 1) * vsize) {
			vals.cap = vals.cap ? vals.cap * 2 : 64 * vsize;
			vals.v = xrealloc(vals.v, vals.cap);
		}
		/* Zeroed first so a value shorter than expected never prints stale bytes. */
		memset(vals.v + n * vsize, 0, vsize);
		if (bpf_map_lookup_elem(map_fd, next, vals.v + n * vsize)) {
			/* Deleted by the program between the two calls: skip it, keep walking. */
			if (errno == ENOENT)
				continue;
			err = -errno;
			break;
		}
		memcpy(keys.v + n * l->key_size, next, l->key_size);
		n++;
		if (n > (size_t)l->max_entries + 1024)
			break; /* a map being refilled as we walk it: stop rather than loop forever */
	}
	free(next);
	free(prevbuf);
	if (err) {
		free(keys.v);
		free(vals.v);
		return err;
	}
	*keys_out = keys.v;
	*vals_out = vals.v;
	*n_out = n;
	*ncpus_out = ncpus;
	return 0;
}
