/* Reads memory straight through a pointer: the verifier refuses that for a scalar. */
long load(long *p)
{
	return *p;
}
