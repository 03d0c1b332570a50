int table_at(int i)
{
	static const int table[8] = { 3, 1, 4, 1, 5, 9, 2, 6 };
	return table[i & 7];
}
