#!/bin/sh
# syscall_table.sh CC OUT — writes OUT: one DT_SYSCALL(name, number) line per x86-64 syscall that
# the kernel headers the build sees define (asm/unistd_64.h), sorted by name as strcmp orders them,
# for common/syscalls.c (syscall tracepoint sets served by raw_syscalls, syscall_name()).
set -eu
cc=$1
out=$2
printf '#include <asm/unistd_64.h>\n' | "$cc" -dM -E -x c - |
	sed -n 's/^#define __NR_\([a-z0-9_]*\) \([0-9][0-9]*\)$/DT_SYSCALL(\1, \2)/p' |
	LC_ALL=C sort > "$out.tmp"
[ -s "$out.tmp" ] || { echo "syscall_table.sh: no __NR_ names from asm/unistd_64.h" >&2; exit 1; }
mv "$out.tmp" "$out"
