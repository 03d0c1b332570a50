/* What the kernel's own <linux/sched.h> has and the uapi one lacks (TASK_RUNNING), defined only
 * with the flags the kernel's headers are parsed with. */
#if defined(__KERNEL__) && defined(DT_TEST_KCONFIG)
#include <linux/dt_generated.h>
#define TASK_RUNNING 0x0000
#define TASK_INTERRUPTIBLE 0x0001
#define DT_TEST_GENERATED DT_GENERATED_VALUE
#endif
