/* shapes.h — a header head_interop.test imports: its types, enum and macros are the script's. */
#define SIDES 4
#define SHAPES_VERSION (SIDES * 100 + 2)

enum shape { SHAPE_SQUARE = 1, SHAPE_CIRCLE = 2 };

struct rect {
	int w;
	int h;
	enum shape kind;
};
