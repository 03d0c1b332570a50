/* warn.bpf.c — compiles, with a warning clang gives by default. */
int always_one(int v)
{
	return v == v;
}
