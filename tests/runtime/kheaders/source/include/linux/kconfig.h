/* A kernel header tree for ctypes.test's kernel_headers_* tests: -include'd first, as the
 * kernel's own kconfig.h is. */
#define DT_TEST_KCONFIG 1
