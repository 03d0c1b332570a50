/* In the build tree only (BPFTRACE_KERNEL_BUILD names this tree): a generated header. */
#define DT_GENERATED_VALUE 42
