/* uw_lib.c — a shared object uw_target dlopen()s after the unwinder already knows the process, so
 * the walker meets a pc in no known mapping and must ask userspace to re-read the maps. Built at
 * test time with -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -shared -fPIC. */
__attribute__((noinline)) int uw_lib_call(int (*fn)(int), int x)
{
	return fn(x + 1) + 1;
}
