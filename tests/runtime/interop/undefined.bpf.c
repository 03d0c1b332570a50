/* undefined.bpf.c — calls a function nothing defines, and a kernel function (kfunc). */
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

int not_here(int v);
extern int bpf_strnlen(const char *s, unsigned long n) __ksym __weak;

int uses_missing(int v)
{
	return not_here(v) + 1;
}

long uses_kfunc(const char *s)
{
	return bpf_strnlen ? bpf_strnlen(s, 8) : -1;
}
