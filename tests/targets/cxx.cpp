// cxx — C++ frames for symbolization and unwinding: a virtual call (Shape::area overridden by
// Square::area), a template (Worker<int>::run), exceptions thrown and caught while burning CPU
// (thrower → catcher), and std::sort with a lambda comparator. argv[1] picks one mode
// ("virtual", "template", "except", "sort") or "all" (the default) to run each for argv[2]
// seconds in turn. Every burning function is noinline so it appears as its own frame.
// Usage: cxx [MODE [SECONDS]].
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#define NOINLINE __attribute__((noinline))
#define NO_TAIL() asm volatile("" ::: "memory")

static volatile unsigned long cxx_sink;

static double now()
{
	using namespace std::chrono;
	return duration<double>(steady_clock::now().time_since_epoch()).count();
}

struct Shape {
	virtual ~Shape() = default;
	virtual double area(double deadline) const = 0;
};

struct Square : Shape {
	NOINLINE double area(double deadline) const override
	{
		while (now() < deadline)
			for (int i = 0; i < 100000; i++)
				cxx_sink += i;
		NO_TAIL();
		return 4.0;
	}
};

NOINLINE double call_virtual(const Shape &s, double deadline)
{
	double r = s.area(deadline);
	NO_TAIL();
	return r;
}

template <typename T> struct Worker {
	NOINLINE T run(double deadline)
	{
		T acc = 0;
		while (now() < deadline)
			for (int i = 0; i < 100000; i++)
				acc += (T)i;
		NO_TAIL();
		return acc;
	}
};

NOINLINE void thrower(int i)
{
	for (int k = 0; k < 2000; k++)
		cxx_sink += k;
	if (i % 2 == 0)
		throw std::runtime_error("even");
	NO_TAIL();
}

NOINLINE int catcher(double deadline)
{
	int caught = 0;
	for (int i = 0; now() < deadline; i++) {
		try {
			thrower(i);
		} catch (const std::runtime_error &) {
			caught++;
		}
	}
	return caught;
}

NOINLINE void sort_lambda(double deadline)
{
	std::vector<int> v(512);
	while (now() < deadline) {
		for (size_t i = 0; i < v.size(); i++)
			v[i] = (int)((i * 7919) % v.size());
		std::sort(v.begin(), v.end(), [](int x, int y) {
			for (int k = 0; k < 500; k++)
				cxx_sink += k;
			return x < y;
		});
	}
	NO_TAIL();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "all";
	double secs = argc > 2 ? atof(argv[2]) : 1.0;
	bool all = strcmp(mode, "all") == 0;

	if (secs > 60)
		secs = 60;
	if (all || strcmp(mode, "virtual") == 0) {
		Square sq;
		call_virtual(sq, now() + secs);
	}
	if (all || strcmp(mode, "template") == 0) {
		Worker<int> w;
		cxx_sink += (unsigned long)w.run(now() + secs);
	}
	if (all || strcmp(mode, "except") == 0)
		cxx_sink += catcher(now() + secs);
	if (all || strcmp(mode, "sort") == 0)
		sort_lambda(now() + secs);
	if (getenv("CHAIN_VERBOSE"))
		printf("cxx: %s done\n", mode);
	return 0;
}
