/* Calls a function of a.bpf.c, imported with it. */
int base(int v);

int plus_base(int v)
{
	return base(v) + 100;
}
