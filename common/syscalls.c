/* syscalls.c — the x86-64 system calls of the build's kernel headers (asm/unistd_64.h, through
 * runtime/syscall_table.sh), by name and by number: syscall tracepoint sets (runtime) and
 * syscall_name() (output) read the one table. */
#include "common/common.h"

#include <stdlib.h>
#include <string.h>

typedef struct dt_syscall {
	const char *name;
	uint32_t nr;
} dt_syscall;

static const dt_syscall syscalls[] = {
#define DT_SYSCALL(name, nr) { #name, nr },
#include "syscall_table.h"
#undef DT_SYSCALL
};

static int cmp_syscall(const void *key, const void *el)
{
	return strcmp(key, ((const dt_syscall *)el)->name);
}

int64_t dt_syscall_nr(const char *name)
{
	const dt_syscall *s = bsearch(name, syscalls, DT_ARRAY_SIZE(syscalls), sizeof(*syscalls),
				      cmp_syscall);
	return s ? (int64_t)s->nr : -1;
}

const char *dt_syscall_name(int64_t nr)
{
	for (size_t i = 0; i < DT_ARRAY_SIZE(syscalls); i++)
		if (syscalls[i].nr == nr)
			return syscalls[i].name;
	return NULL;
}
