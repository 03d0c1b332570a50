int inner_double(int v)
{
	return 2 * v;
}
