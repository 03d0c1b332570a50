int base(int v)
{
	return v * 3;
}
