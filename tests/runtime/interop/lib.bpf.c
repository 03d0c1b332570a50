/* lib.bpf.c — C functions head_interop.test's scripts import and call. */
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#include "shapes.h"

int add_one(int v)
{
	return v + 1;
}

int negate(int v)
{
	return -v;
}

/* A BPF helper from libbpf's header: the calling thread's id. */
__u32 thread_id(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

/* A pointer in and out. */
void *same(void *p)
{
	return p;
}

/* A struct of the imported header, read through a pointer with a helper. */
long area(struct rect *r)
{
	struct rect copy;

	if (bpf_probe_read_kernel(&copy, sizeof(copy), r))
		return -1;
	return (long)copy.w * copy.h;
}

/* A type of its own, which the script can name too. */
struct tally {
	int count;
	long total;
};

int tally_size(void)
{
	return sizeof(struct tally);
}

void nothing(int v)
{
	(void)v;
}

/* Not callable: static. */
static int hidden(void)
{
	return 7;
}

int calls_hidden(void)
{
	return hidden() * 6;
}
