int from_dir(int v)
{
	return v * 10;
}
