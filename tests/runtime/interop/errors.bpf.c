int fine(int v)
{
	return v;
}

int broken(int v)
{
	return v + not_declared;
}
