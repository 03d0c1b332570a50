/* stdlib/test/test.bpf.c — `import "stdlib/test";`: a C function a script can call, which
 * shows that C interop works (bpftrace's standard library has the same one). */
int __always_true(void)
{
	return 1;
}
