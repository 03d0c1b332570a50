/* callback.bpf.c — a static callback passed to bpf_loop: it stays a function of its own, in the
 * calling program's section. */
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

struct sum_ctx {
	__u64 total;
};

static long add_index(__u32 i, void *data)
{
	struct sum_ctx *s = data;

	s->total += i;
	return 0;
}

__u64 sum_below(__u32 n)
{
	struct sum_ctx s = { 0 };

	bpf_loop(n, add_index, &s, 0);
	return s.total;
}
